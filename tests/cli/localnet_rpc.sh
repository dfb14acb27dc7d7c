#!/usr/bin/env bash
# gonka-localnet's RPC against hostile clients and awkward --rpc
# addresses, on loopback: idle connections from one address and from many
# (rpc_flood.py), a declared body over the limit, a listener off loopback
# (a loud warning) and addresses that cannot be bound (the system's reason).
set -uo pipefail
bin="$1"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
node=""
stop_node() {
  if [ -n "$node" ]; then kill "$node" 2>/dev/null; wait "$node" 2>/dev/null; node=""; fi
}
trap 'stop_node; rm -rf "$work"' EXIT
cd "$work"
fail=0
source "$here/lib.sh"

"$bin" init --home h --accounts 1 >/dev/null || { echo "FAIL: init"; exit 1; }

# start_node LOG ARGS...: starts the node, waits (5 s at most) for its
# address file; the address is in $addr.
start_node() {
  local log="$1"
  shift
  rm -f addr
  "$bin" start --home h --rpc-addr-file addr "$@" 2>"$log" &
  node=$!
  for _ in $(seq 50); do [ -s addr ] && break; sleep 0.1; done
  addr=$(cat addr 2>/dev/null)
  [ -n "$addr" ]
}

if start_node node.log --rpc 127.0.0.1:0 --rpc-idle-timeout 2s; then
  timeout 60 python3 "$here/rpc_flood.py" "$addr" 2 32 256 || fail=1
  grep -q "connections open (the limit): refusing" node.log && ok "the node says it refuses" ||
    bad "no refusal warning in the node's log"
  kill -0 "$node" 2>/dev/null && ok "the node is still running" || bad "the node died"
else
  bad "the node did not start: $(cat node.log)"
fi
stop_node

# Off loopback: it serves, with a warning that cannot be missed.
if start_node any.log --rpc 0.0.0.0:0; then
  grep -q "WARNING: the RPC listens on 0.0.0.0:[0-9]*, which is not a loopback address" any.log &&
    ok "--rpc 0.0.0.0:0 warns: $(grep -o 'WARNING.*address:' any.log)" ||
    bad "--rpc 0.0.0.0:0 without the warning: $(cat any.log)"
else
  bad "--rpc 0.0.0.0:0 did not start: $(cat any.log)"
fi
stop_node
if start_node lo.log --rpc 127.0.0.1:0; then
  grep -q WARNING lo.log && bad "a loopback --rpc warns: $(cat lo.log)" || ok "loopback: no warning"
  port=${addr##*:}
  check 1 "a port in use" -- start --home h --rpc "127.0.0.1:$port" --log-level error
  grep -q "bind: Address already in use" err.txt || bad "the refusal does not give the errno"
else
  bad "--rpc 127.0.0.1:0 did not start: $(cat lo.log)"
fi
stop_node
# TEST-NET-1 (RFC 5737): an address this machine does not have.
check 1 "an address the machine does not have" -- start --home h --rpc 192.0.2.1:26657 --log-level error
grep -q "bind: Cannot assign requested address" err.txt || bad "the refusal does not give the errno"
check 2 "a bad idle timeout" -- start --home h --rpc-idle-timeout 500ms
check 2 "more per address than in all" -- start --home h --rpc-max-connections 4 --rpc-max-per-address 5
exit $fail
