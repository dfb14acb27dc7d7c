#!/usr/bin/env bash
# End-to-end: localnet's minimum gas price. A home made by `init` records the
# default (0.0025ngonka) in app.json and a node started from it refuses a
# fee below ceil(gas x price) with the SDK's code 13, while gonka-diloco's
# default fee (gas x the same default price) is accepted; --gas-prices and
# --fees change what the client pays. `start --min-gas-price 0` and
# `init --min-gas-price 0` accept zero fees; a home without app.json gets
# the default; a broken app.json or price stops the node with a clear error.
# Usage: min_gas_price.sh BIN_DIR
set -uo pipefail
bin="$1"
dg="$bin/gonka-diloco"
work=$(mktemp -d)
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/node.log" ] && tail -n 20 "$work/node.log"; exit 1; }
ok() { echo "ok: $*"; }

start_node() { # HOME [start flags...]
  local home="$1"
  shift
  rm -f "$work/rpc.addr"
  : >"$work/node.log"
  "$bin/gonka-localnet" start --home "$home" --rpc 127.0.0.1:0 \
    --rpc-addr-file "$work/rpc.addr" --block-time 100ms "$@" >>"$work/node.log" 2>&1 &
  node_pid=$!
  disown "$node_pid"
  for _ in $(seq 1 100); do
    [ -s "$work/rpc.addr" ] && break
    kill -0 "$node_pid" 2>/dev/null || fail "node exited: $(cat "$work/node.log")"
    sleep 0.05
  done
  [ -s "$work/rpc.addr" ] || fail "node did not start"
  node="http://$(cat "$work/rpc.addr")"
}
stop_node() {
  kill -TERM "$node_pid"
  for _ in $(seq 1 100); do
    kill -0 "$node_pid" 2>/dev/null || break
    sleep 0.05
  done
  node_pid=""
}
field() { python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
balance() { "$dg" query balance "$1" --node "$node" --json | field amount; }
send() { # HOME ARGS...: tx send of 1000ngonka from account 0 to account 1
  local home="$1"
  shift
  "$dg" tx send --key "$home/keys/account-0.key" --to "$to" --amount 1000ngonka \
    --node "$node" --json "$@"
}
refused() { # WHAT EXPECTED-TEXT HOME ARGS...: the send must fail with code 13
  local what="$1" want="$2"
  shift 2
  local out
  if out=$(send "$@" 2>&1); then fail "$what was accepted: $out"; fi
  grep -q "code 13" <<<"$out" || fail "$what: not code 13: $out"
  grep -qF "$want" <<<"$out" || fail "$what: no '$want' in: $out"
  ok "$what refused (code 13): $want"
}

# --- a home made with the defaults -----------------------------------------
home="$work/home"
out=$("$bin/gonka-localnet" init --home "$home" --accounts 2) || fail "init: $out"
grep -q "minimum gas price 0.0025ngonka" <<<"$out" || fail "init output: $out"
[ "$(field min_gas_price <"$home/app.json")" = 0.0025ngonka ] ||
  fail "app.json: $(cat "$home/app.json")"
ok "init records the default minimum gas price in app.json"
from=$("$dg" keys show --key "$home/keys/account-0.key" --json | field address)
to=$("$dg" keys show --key "$home/keys/account-1.key" --json | field address)

start_node "$home"
grep -q "minimum gas price 0.0025ngonka (from app.json)" "$work/node.log" ||
  fail "node did not log its minimum gas price"
refused "a fee of 499ngonka for 200000 gas" \
  "insufficient fees; got: 499ngonka required: 500ngonka" "$home" --fees 499ngonka
refused "no fee (--gas-prices 0)" "insufficient fees; got: 0 required: 500ngonka" \
  "$home" --gas-prices 0
refused "a fee at 0.001ngonka per gas" "got: 200ngonka required: 500ngonka" \
  "$home" --gas-prices 0.001ngonka
refused "the default fee for 200000 gas with 300000 gas" "got: 500ngonka required: 750ngonka" \
  "$home" --fees 500ngonka --gas 300000
if out=$(send "$home" --fees 10ngonka 2>&1); then fail "low fee accepted: $out"; fi
grep -qF -- "--gas-prices" <<<"$out" || fail "code 13 gives no hint: $out"
grep -q '"code": 13' <<<"$(send "$home" --fees 1ngonka 2>/dev/null)" ||
  fail "--json of a refused fee has no code 13"
grep -q "rejected tx .*code 13" "$work/node.log" || fail "node did not log the code 13 refusals"
[ "$(balance "$from")" = 1000000000000 ] || fail "a refused transaction moved funds"

out=$(send "$home") || fail "the default fee was refused: $out"
[ "$(field fee <<<"$out")" = 500ngonka ] || fail "default fee: $out"
[ "$(field code <<<"$out")" = 0 ] || fail "default fee result: $out"
[ "$(balance "$from")" = $((1000000000000 - 1000 - 500)) ] || fail "sender paid $(balance "$from")"
[ "$(balance "$to")" = 1000000001000 ] || fail "recipient has $(balance "$to")"
ok "the client's default fee (500ngonka for 200000 gas) is accepted and charged"
out=$(send "$home" --fees 500ngonka) || fail "an explicit 500ngonka was refused: $out"
out=$(send "$home" --gas auto --gas-adjustment 1.3) || fail "--gas auto was refused: $out"
gas=$(field gas_wanted <<<"$out")
want=$(( (gas * 25 + 9999) / 10000 ))
[ "$(field fee <<<"$out")" = "${want}ngonka" ] || fail "--gas auto paid $(field fee <<<"$out") for $gas gas"
ok "--fees at the minimum and --gas auto (${want}ngonka for $gas gas) are accepted"
stop_node

# --- the same home, started with --min-gas-price 0 --------------------------
start_node "$home" --min-gas-price 0
grep -q "minimum gas price 0 (from --min-gas-price): zero fees accepted" "$work/node.log" ||
  fail "node did not log the zero price"
before=$(balance "$from")
out=$(send "$home" --gas-prices 0) || fail "zero fee refused under --min-gas-price 0: $out"
[ "$(field fee <<<"$out")" = "" ] || fail "a fee was paid: $out"
[ "$(balance "$from")" = $((before - 1000)) ] || fail "zero-fee send charged more than the amount"
ok "start --min-gas-price 0 accepts a zero fee"
stop_node
start_node "$home" --min-gas-price 0.01ngonka
refused "the default fee under --min-gas-price 0.01ngonka" "required: 2000ngonka" "$home"
out=$(send "$home" --gas-prices 0.01ngonka) || fail "--gas-prices 0.01ngonka refused: $out"
[ "$(field fee <<<"$out")" = 2000ngonka ] || fail "fee at 0.01: $out"
ok "--min-gas-price overrides app.json; --gas-prices pays it"
stop_node

# --- a home made with init --min-gas-price 0 -------------------------------
free="$work/free"
"$bin/gonka-localnet" init --home "$free" --accounts 2 --min-gas-price 0 >/dev/null ||
  fail "init --min-gas-price 0"
[ "$(field min_gas_price <"$free/app.json")" = 0 ] || fail "app.json: $(cat "$free/app.json")"
to=$("$dg" keys show --key "$free/keys/account-1.key" --json | field address)
start_node "$free"
out=$(send "$free" --fees 0ngonka) || fail "zero fee refused by an init --min-gas-price 0 home: $out"
ok "init --min-gas-price 0 records a zero price: zero fees accepted"
stop_node

# --- a home without app.json (made before init wrote it) -------------------
rm "$free/app.json"
start_node "$free"
grep -q "minimum gas price 0.0025ngonka (from the default)" "$work/node.log" ||
  fail "node without app.json: $(head -n 3 "$work/node.log")"
refused "a zero fee on a home without app.json" "required: 500ngonka" "$free" --gas-prices 0
send "$free" >/dev/null || fail "the default fee was refused on a home without app.json"
ok "a home without app.json gets the default minimum"
stop_node

# --- bad prices stop the node -----------------------------------------------
echo '{"minimum-gas-prices": "0ngonka"}' >"$free/app.json"
if "$bin/gonka-localnet" start --home "$free" --rpc 127.0.0.1:0 >"$work/bad.log" 2>&1; then
  fail "a misspelt app.json was accepted"
fi
grep -q "app.json: unexpected 'minimum-gas-prices'" "$work/bad.log" || fail "$(cat "$work/bad.log")"
echo '{"min_gas_price": "cheap"}' >"$free/app.json"
if "$bin/gonka-localnet" start --home "$free" --rpc 127.0.0.1:0 >"$work/bad.log" 2>&1; then
  fail "a bad price in app.json was accepted"
fi
grep -q "minimum gas price from app.json: gas price 'cheap' must look like" "$work/bad.log" ||
  fail "$(cat "$work/bad.log")"
if "$bin/gonka-localnet" start --home "$home" --rpc 127.0.0.1:0 --min-gas-price 1.5 \
     >"$work/bad.log" 2>&1; then
  fail "--min-gas-price 1.5 (no denom) was accepted"
fi
grep -q "gas price '1.5' must look like 0.0025ngonka" "$work/bad.log" || fail "$(cat "$work/bad.log")"
if "$bin/gonka-localnet" init --home "$work/bad" --accounts 1 --min-gas-price x \
     >"$work/bad.log" 2>&1; then
  fail "init --min-gas-price x was accepted"
fi
[ ! -e "$work/bad/genesis.json" ] || fail "init --min-gas-price x left a home behind"
ok "bad prices (app.json key or value, --min-gas-price) stop the node with the reason"
echo "all minimum gas price checks passed"
