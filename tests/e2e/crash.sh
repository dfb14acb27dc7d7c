#!/usr/bin/env bash
# Crash safety: kill -9 gonka-localnet at random moments while transactions
# flow, many times. Every restart must find the last committed block intact
# (the node re-hashes the restored state against the stored app hash and
# checks the invariants before serving), heights never go back, and the
# ledger adds up: what left account 0 arrived at account 1 or paid its fee.
# Usage: crash.sh BIN_DIR [ROUNDS]
set -uo pipefail
bin="$1"
rounds="${2:-8}"
work=$(mktemp -d)
node_pid=""
sender_pid=""
cleanup() {
  [ -n "$sender_pid" ] && kill "$sender_pid" 2>/dev/null
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -n 20 "$work/node.log"; exit 1; }

"$bin/gonka-localnet" init --home "$work/home" --accounts 2 --balance 1000000ngonka >/dev/null ||
  fail "init"
a0="$work/home/keys/account-0.key"
addr0=$("$bin/gonka-diloco" keys show --key "$a0" --json | sed -n 's/.*"address": "\(.*\)".*/\1/p')
addr1=$("$bin/gonka-diloco" keys show --key "$work/home/keys/account-1.key" --json |
        sed -n 's/.*"address": "\(.*\)".*/\1/p')

start_node() {
  rm -f "$work/rpc.addr"
  "$bin/gonka-localnet" start --home "$work/home" --rpc 127.0.0.1:0 \
    --rpc-addr-file "$work/rpc.addr" --block-time 50ms >>"$work/node.log" 2>&1 &
  node_pid=$!
  disown "$node_pid"
  for _ in $(seq 1 200); do
    [ -s "$work/rpc.addr" ] && break
    kill -0 "$node_pid" 2>/dev/null || fail "node exited at start (damaged state?)"
    sleep 0.05
  done
  [ -s "$work/rpc.addr" ] || fail "node did not start"
  node="http://$(cat "$work/rpc.addr")"
}
height() { "$bin/gonka-diloco" status --node "$node" --retries 0 --json 2>/dev/null |
           sed -n 's/.*"latest_block_height": \([0-9]*\).*/\1/p'; }
balance() { "$bin/gonka-diloco" query balance "$1" --node "$node" --retries 0 --json |
            sed -n 's/.*"amount": "\([0-9]*\)".*/\1/p'; }

last=0
for r in $(seq 1 "$rounds"); do
  start_node
  h=$(height)
  [ -n "$h" ] && [ "$h" -ge "$last" ] || fail "round $r: height $h is below $last"
  # Keep sending while the node runs; failures (node killed) are expected.
  ( while true; do
      "$bin/gonka-diloco" tx send --key "$a0" --to "$addr1" --amount 1ngonka --node "$node" \
        --retries 0 --no-wait >/dev/null 2>&1
    done ) &
  sender_pid=$!
  sleep "0.$((RANDOM % 7 + 2))"
  last=$(height)
  kill -9 "$node_pid"
  while kill -0 "$node_pid" 2>/dev/null; do sleep 0.02; done
  node_pid=""
  kill "$sender_pid" 2>/dev/null
  wait "$sender_pid" 2>/dev/null
  sender_pid=""
  last=${last:-0}
  echo "round $r: killed near height $last"
done
start_node
b0=$(balance "$addr0")
b1=$(balance "$addr1")
# Each committed transfer moved 1ngonka and paid the client's default fee,
# ceil(200000 gas x 0.0025ngonka) = 500ngonka, to the fee collector.
n=$((b1 - 1000000))
[ $((b0 + b1 + 500 * n)) -eq 2000000 ] ||
  fail "balances $b0 + $b1 + $n fees of 500 do not add up to 2000000"
[ "$b1" -gt 1000000 ] || fail "no transfer survived ($b1)"
"$bin/gonka-localnet" export --home "$work/home" >/dev/null || fail "export (invariants)"
grep -qE "ERROR: AddressSanitizer|runtime error" "$work/node.log" &&
  fail "the sanitizers reported a problem in the node"
echo "ok: $rounds kills; restarts consistent; $n transfers committed; ledger adds up"
