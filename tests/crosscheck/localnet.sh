#!/usr/bin/env bash
# Standard Cosmos tooling against gonka-localnet, unchanged: cosmjs's
# StargateClient and SigningStargateClient connect, query, send a signed
# MsgSend and find it again; gonka-diloco then sees the same balance.
# Skipped (exit 77) unless the npm packages are installed (scripts/crosscheck).
# Usage: localnet.sh BIN_DIR
set -uo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -d "$here/node_modules/@cosmjs/stargate" ] || ! command -v node >/dev/null; then
  echo "cosmjs not installed (run scripts/crosscheck); skipping"
  exit 77
fi
work=$(mktemp -d)
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/node.log" ] && tail -n 20 "$work/node.log"; exit 1; }

"$bin/gonka-localnet" init --home "$work/home" --chain-id prod-sim --accounts 2 >/dev/null ||
  fail "init"
"$bin/gonka-localnet" start --home "$work/home" --rpc 127.0.0.1:0 \
  --rpc-addr-file "$work/rpc.addr" --block-time 200ms >"$work/node.log" 2>&1 &
node_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/rpc.addr" ] && break
  sleep 0.05
done
[ -s "$work/rpc.addr" ] || fail "node did not start"
node="http://$(cat "$work/rpc.addr")"
sleep 0.3 # the first block

to=$(sed -n 's/^address: //p' "$work/home/keys/account-1.key")
priv=$(sed -n 's/^privkey: //p' "$work/home/keys/account-0.key")
out=$(timeout 120 node "$here/localnet_client.mjs" "$node" "$priv" "$to" prod-sim) ||
  fail "cosmjs: $out"
read -r from before after height hash <<<"$out"
echo "cosmjs sent 4242ngonka from $from to $to at height $height (tx $hash): $before -> $after"
ours=$("$bin/gonka-diloco" query balance "$to" --node "$node" --json |
       sed -n 's/.*"amount": "\([0-9]*\)".*/\1/p')
[ "$ours" = "$after" ] || fail "gonka-diloco sees balance $ours, cosmjs $after"
echo "gonka-diloco agrees: $ours"
