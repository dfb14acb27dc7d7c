# Shared helpers of the CLI tests; source after setting $bin and fail=0.
# ok/bad print one result line (bad marks the test failed); check runs
# "$bin" with the arguments after "--" and requires the expected exit
# status and exactly one "error: " line on stderr.
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

check() { # expected-status description -- args...
  local want="$1" what="$2"
  shift 3
  "$bin" "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" -ne "$want" ] || [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -q '^error: ' err.txt; then
    bad "$what: status $rc (want $want): $(cat err.txt)"
  else
    ok "$what: $(cat err.txt)"
  fi
}
