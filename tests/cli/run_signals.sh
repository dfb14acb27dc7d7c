#!/usr/bin/env bash
# The daemon as an operator meets it, without a chain (its RPC is a closed
# port, an outage it waits out): a SIGHUP re-reads log_level and names the
# other keys that changed, and never stops it; a second daemon on the same
# state_dir stops at once naming the first one's pid; an empty or
# comment-only node.yaml is refused (it used to crash); SIGTERM stops it
# cleanly. Usage: run_signals.sh GONKA_DILOCO
set -uo pipefail
bin=$(realpath "$1")
work=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits up to $2 seconds for file $1 to hold the text $3.
wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do grep -q -- "$3" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

"$bin" node init --home h --chain-id c --node http://127.0.0.1:1 --collateral 1ngonka >/dev/null 2>&1 ||
  { echo "FAIL: node init"; exit 1; }
port=$(free_port)
sed -i "s|^listen:.*|listen: \"127.0.0.1:$port\"|; s|^public_url:.*|public_url: \"http://127.0.0.1:$port\"|; s|^log_level:.*|log_level: \"warn\"|" h/node.yaml
"$bin" run --config h/node.yaml --poll-ms 100 >out1.log 2>err1.log &
first=$!
pids+=("$first")
wait_for out1.log 10 "listening on" || bad "the daemon did not start: $(cat err1.log)"

# A second daemon on the same state_dir, on another port.
sed "s|127.0.0.1:$port|127.0.0.1:$(free_port)|g" h/node.yaml >h/twin.yaml
chmod 600 h/twin.yaml
timeout 20 "$bin" run --config h/twin.yaml >out2.log 2>err2.log
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || bad "a second daemon on one state_dir ran (exit $rc)"
grep -q "in use by process $first" err2.log || bad "the second daemon did not name the first: $(cat err2.log)"

# SIGHUP: log_level warn -> debug applied, the changed threads named, still running.
sed -i 's|^log_level:.*|log_level: "debug"|; s|^threads:.*|threads: 3|' h/node.yaml
kill -HUP "$first"
wait_for err1.log 10 "SIGHUP: log_level warn -> debug" || bad "SIGHUP did not apply the log level: $(tail -5 err1.log)"
wait_for err1.log 10 "SIGHUP: threads changed" || bad "SIGHUP did not name the changed key: $(tail -5 err1.log)"
kill -HUP "$first"
wait_for err1.log 10 "log_level debug (unchanged)" || bad "a second SIGHUP: $(tail -5 err1.log)"
# log_format json and a level of one subsystem's own, by SIGHUP too.
sed -i 's|^log_level:.*|log_level: "warn,rpc=info"|; s|^log_format:.*|log_format: "json"|' h/node.yaml
kill -HUP "$first"
wait_for err1.log 15 '^{"time":"[^"]*","level":"info","subsystem":"rpc","message":' ||
  bad "no JSON line of rpc at info after SIGHUP: $(tail -3 err1.log)"
python3 -c '
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
assert lines and all(json.loads(l)["subsystem"] in ("rpc", "run", "node", "http", "preflight") for l in lines), lines[:3]
assert all(json.loads(l)["level"] != "info" or json.loads(l)["subsystem"] == "rpc" for l in lines), lines[:3]
' err1.log || bad "the JSON lines do not parse, or another subsystem logged at info"
kill -0 "$first" 2>/dev/null || bad "SIGHUP stopped the daemon"

kill -TERM "$first"
for ((i = 0; i < 100; i++)); do kill -0 "$first" 2>/dev/null || break; sleep 0.1; done
wait "$first"
rc=$?
[ $rc -eq 0 ] || bad "SIGTERM: exit $rc, $(tail -3 err1.log)"

# Empty and comment-only node.yaml: refused with a reason, never a crash.
: >empty.yaml
printf '# nothing but a comment\n' >comments.yaml
for f in empty.yaml comments.yaml; do
  for cmd in "run --config $f" "node leave --config $f"; do
    "$bin" $cmd >/dev/null 2>err.log
    rc=$?
    { [ $rc -eq 1 ] || [ $rc -eq 2 ]; } || bad "$cmd: exit $rc"
    grep -q "empty" err.log || bad "$cmd: $(cat err.log)"
  done
done
[ $fail -eq 0 ] && echo "ok: SIGHUP, one daemon per state_dir, empty node.yaml, SIGTERM"
exit $fail
