# Shared helpers of the CLI tests; source after setting $bin and fail=0.
# ok/bad print one result line (bad marks the test failed); check runs
# "$bin" with the arguments after "--" and requires the expected exit
# status and exactly one "error: " line on stderr, within a minute (a hang
# is a failure, status 124). killed_log runs a long command with stdout
# redirected to a file and kills it once the file shows a pattern.
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

check() { # expected-status description -- args...
  local want="$1" what="$2"
  shift 3
  timeout 60 "$bin" "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" -ne "$want" ] || [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -q '^error: ' err.txt; then
    bad "$what: status $rc (want $want): $(cat err.txt)"
  else
    ok "$what: $(cat err.txt)"
  fi
}

killed_log() { # pattern seconds log -- args...: true if log shows pattern in time
  local pattern="$1" seconds="$2" log="$3"
  shift 4
  "$bin" "$@" >"$log" 2>&1 &
  local pid=$! i seen=1
  for ((i = 0; i < seconds * 10; i++)); do
    if grep -qs "$pattern" "$log"; then seen=0; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return $seen
}
