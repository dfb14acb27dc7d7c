#!/usr/bin/env bash
# End-to-end: gonka-localnet on a free loopback port, driven by gonka-diloco.
# Sends a transaction, queries balances, replays it (rejected, code 32),
# sends one with a wrong chain-id (rejected, code 4), feeds the RPC bad
# input (JSON-RPC errors, blocks go on), kills the node with SIGKILL and
# restarts it: height, balances and the indexed history (/tx,
# /block_results, /tx_search) survive.
# Usage: localnet.sh BIN_DIR
set -uo pipefail
bin="$1"
work=$(mktemp -d)
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/node.log" ] && tail -n 20 "$work/node.log"; exit 1; }
ok() { echo "ok: $*"; }

start_node() {
  rm -f "$work/rpc.addr"
  "$bin/gonka-localnet" start --home "$work/home" --rpc 127.0.0.1:0 \
    --rpc-addr-file "$work/rpc.addr" --block-time 200ms >>"$work/node.log" 2>&1 &
  node_pid=$!
  disown "$node_pid" # no job-control noise when it is killed
  for _ in $(seq 1 100); do
    [ -s "$work/rpc.addr" ] && break
    sleep 0.05
  done
  [ -s "$work/rpc.addr" ] || fail "node did not start"
  node="http://$(cat "$work/rpc.addr")"
}

height() { "$bin/gonka-diloco" status --node "$node" --json | sed -n 's/.*"latest_block_height": \([0-9]*\).*/\1/p'; }

wait_height_above() {
  for _ in $(seq 1 100); do
    h=$(height)
    [ -n "$h" ] && [ "$h" -gt "$1" ] && return 0
    sleep 0.1
  done
  fail "height did not pass $1"
}

json_field() { sed -n "s/.*\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" | head -n 1; }

"$bin/gonka-localnet" init --home "$work/home" --chain-id prod-sim --accounts 3 >/dev/null ||
  fail "init"
for f in "$work"/home/keys/account-*.key "$work/home/priv_validator_key.json"; do
  [ "$(stat -c %a "$f")" = 600 ] || fail "$f is not mode 0600"
done
ok "init wrote genesis and 0600 key files"
a0="$work/home/keys/account-0.key"
addr1=$("$bin/gonka-diloco" keys show --key "$work/home/keys/account-1.key" --json | json_field address)

start_node
wait_height_above 0
ok "node produces blocks on $node"

out=$("$bin/gonka-diloco" tx send --key "$a0" --to "$addr1" --amount 1000ngonka \
      --chain-id prod-sim --node "$node" --json) || fail "tx send: $out"
grep -q '"code": 0' <<<"$out" || fail "tx send result: $out"
grep -q '"included": true' <<<"$out" || fail "tx not included: $out"
send_hash=$(json_field txhash <<<"$out")
send_height=$(json_field height <<<"$out")
ok "tx send included at height $send_height"

bal=$("$bin/gonka-diloco" query balance "$addr1" --node "$node" --json | json_field amount)
[ "$bal" = 1000000001000 ] || fail "balance of account 1 is $bal"
ok "query balance shows the transfer"

# Replay: the same signed bytes, once included, are rejected with code 32.
signed=$("$bin/gonka-diloco" tx send --key "$a0" --to "$addr1" --amount 5ngonka \
         --chain-id prod-sim --offline --account-number 0 --sequence 1 --json | json_field tx_base64)
"$bin/gonka-diloco" tx broadcast "$signed" --node "$node" >/dev/null || fail "first broadcast"
if err=$("$bin/gonka-diloco" tx broadcast "$signed" --node "$node" 2>&1); then
  fail "replay accepted"
fi
grep -q "code 32" <<<"$err" || fail "replay error: $err"
grep -q "account sequence mismatch, expected 2, got 1" <<<"$err" || fail "replay message: $err"
ok "replay rejected: $(echo "$err" | head -c 160)"

if err=$("$bin/gonka-diloco" tx send --key "$a0" --to "$addr1" --amount 1ngonka \
         --chain-id wrong-chain --node "$node" 2>&1); then
  fail "wrong chain-id accepted"
fi
grep -q "code 4" <<<"$err" || fail "wrong chain-id error: $err"
ok "wrong chain-id rejected (code 4)"
grep -q "rejected tx" "$work/node.log" || fail "node did not log the rejected transactions"

# Bad input: JSON-RPC errors, and blocks keep coming.
rpc_error() { # expected-code curl-args...
  local want="$1"; shift
  local body
  body=$(curl -s "$@") || fail "curl $*"
  grep -q "\"code\":$want" <<<"$body" || fail "expected JSON-RPC error $want, got: $(echo "$body" | head -c 200)"
}
rpc_error -32700 -X POST "$node" -d 'not json'
rpc_error -32600 -X POST "$node" -d '[]'
rpc_error -32601 -X POST "$node" -d '{"jsonrpc":"2.0","id":1,"method":"nope"}'
rpc_error -32602 -X POST "$node" -d '{"jsonrpc":"2.0","id":1,"method":"broadcast_tx_sync","params":{"tx":"!!"}}'
rpc_error -32602 "$node/block?height=abc"
rpc_error -32601 "$node/no_such_route"
head -c 1100000 /dev/zero | tr '\0' 'a' > "$work/big"
rpc_error -32600 -X POST "$node" --data-binary @"$work/big"
bad_tx=$(curl -s -X POST "$node" -d '{"jsonrpc":"2.0","id":2,"method":"broadcast_tx_sync","params":{"tx":"CgA="}}')
grep -q '"code":2' <<<"$bad_tx" || fail "malformed tx not rejected with code 2: $bad_tx"
h0=$(height)
wait_height_above "$h0"
ok "bad input answered with JSON-RPC errors; blocks continue"

# SIGKILL and restart: height and balances survive.
h_before=$(height)
bal_before=$("$bin/gonka-diloco" query balance "$addr1" --node "$node" --json | json_field amount)
kill -9 "$node_pid"
while kill -0 "$node_pid" 2>/dev/null; do sleep 0.05; done
node_pid=""
start_node
h_after=$(height)
[ -n "$h_after" ] && [ "$h_after" -ge "$h_before" ] || fail "height went from $h_before to $h_after"
bal_after=$("$bin/gonka-diloco" query balance "$addr1" --node "$node" --json | json_field amount)
[ "$bal_after" = "$bal_before" ] || fail "balance went from $bal_before to $bal_after"
grep -q "restored chain prod-sim" "$work/node.log" || fail "node did not restore"
ok "after SIGKILL at height $h_before: restarted at $h_after, balance $bal_after kept"

# The indexed history survives too: /tx, /block_results and /tx_search.
rpc_json() { # path python-expression-over-result
  curl -s "$node/$1" | python3 -c "import json,sys; r=json.load(sys.stdin)['result']; v=($2)
print(*v) if isinstance(v, tuple) else print(v)"
}
[ "$(rpc_json "tx?hash=0x$send_hash" 'r["height"], r["tx_result"].get("code", 0)')" = "$send_height 0" ] ||
  fail "/tx of $send_hash: $(curl -s "$node/tx?hash=0x$send_hash" | head -c 300)"
[ "$(rpc_json "block_results?height=$send_height" \
      'len(r["txs_results"]), r["txs_results"][0].get("code", 0), r["txs_results"][0]["gas_used"]')" = \
  "1 0 $(json_field gas_used <<<"$out")" ] ||
  fail "/block_results: $(curl -s "$node/block_results?height=$send_height" | head -c 300)"
[ "$(rpc_json "tx_search?query=\"transfer.recipient='$addr1'\"" 'r["total_count"]')" = 2 ] ||
  fail "tx_search by recipient: $(curl -s "$node/tx_search?query=\"transfer.recipient='$addr1'\"" | head -c 300)"
[ "$(rpc_json "tx_search?query=\"tx.height=$send_height\"" 'r["txs"][0]["hash"]')" = "$send_hash" ] ||
  fail "tx_search by height"
rpc_error -32603 "$node/tx_search?query=\"tx.height%3E%3D\""
ok "/tx, /block_results and /tx_search answer from the restored store"

out=$("$bin/gonka-diloco" tx send --key "$a0" --to "$addr1" --amount 7ngonka --node "$node" --json) ||
  fail "tx after restart: $out"
grep -q '"sequence": 2' <<<"$out" || fail "sequence after restart: $out"
ok "transactions continue after the restart (sequence 2)"

"$bin/gonka-localnet" export --home "$work/home" > "$work/export.json" || fail "export"
grep -q '"chain_id": "prod-sim"' "$work/export.json" || fail "export output"
ok "export prints the state as genesis JSON"
# A graceful stop (SIGTERM) exits 0; under the sanitizers this also checks
# for leaks at exit.
kill -TERM "$node_pid"
for _ in $(seq 1 100); do
  kill -0 "$node_pid" 2>/dev/null || break
  sleep 0.05
done
kill -0 "$node_pid" 2>/dev/null && fail "node ignored SIGTERM"
node_pid=""
grep -q "localnet: stopped" "$work/node.log" || fail "node did not stop cleanly"
grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error" "$work/node.log" &&
  fail "the sanitizers reported a problem in the node"
ok "SIGTERM stops the node cleanly"
echo "all end-to-end checks passed"
