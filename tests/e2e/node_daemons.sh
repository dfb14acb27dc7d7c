#!/usr/bin/env bash
# The daemon on gonka-localnet: three workers and one validator, each its
# own `gonka-diloco run` process with its own key, state directory and HTTP
# server, take part in run 1 for two epochs with nothing scripted: they join
# by themselves, train every round on the tiny model, fetch and prove each
# other's payloads over HTTP, re-execute the drawn segments, aggregate,
# attest and claim. Then: every round that ended is DONE and its state hash
# is every daemon's own G (their /v1/status); each daemon's claimed rewards
# are the chain's settle amounts; nobody is slashed; the eval loss of the
# served checkpoint fell from G_0's; /metrics answers in Prometheus text;
# the status page (GET /), rendered in headless Chromium, shows what
# /v1/status says; contrib/'s dashboard and alert rules name only metrics
# the daemons export.
# Usage: node_daemons.sh BIN_DIR
windows="{'train': 10, 'commit': 10, 'reveal': 5, 'verify': 22, 'open': 8, 'dispute': 10,
          'dispute_open': 8, 'attest': 10, 'attest_open': 5}"
accounts=5
epoch_length=200
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node_lib.sh" "$1"
start_four
ok "the checkpoint of G_0 is served"

settled() { # settled N EPOCH: host N's settle amount for EPOCH, and whether it claimed it
  local a
  a=$("$dg" keys show --key "home/keys/account-$1.key" --json | py 'import json,sys; print(json.load(sys.stdin)["address"])')
  "$dg" query rewards "$a" --node "$node" --json | py "
import json,sys
for x in json.load(sys.stdin)['amounts']:
    if int(x['epoch']) == $2: print(x['amount'], 'claimed' if x['claimed'] else 'unclaimed')
"
}
claimed() { status "$1" | py 'import json,sys; print(json.load(sys.stdin)["rewards_claimed_ngonka"])'; }
# Epochs of 200 blocks: epoch 1 settles at epoch 2's start (220) and is
# claimed from its claim-money stage (245); epoch 3 starts at 420 and
# settles epoch 2, claimed from 445. Windows of 5 to 10 blocks of 200 ms,
# and 22 for verify, where each validator re-executes its segments one
# after another, leave a small machine (or a sanitizer build) time for
# every duty, re-checks included; two rounds of 88 blocks from height 42
# still end by the PoC start at 220.
declare -A E1
until_height 380
for n in 1 2 3 4; do
  read -r amount state <<<"$(settled "$n" 1)"
  [ "$state" = claimed ] || fail "host $n did not claim epoch 1 ($amount $state)"
  [ "$(claimed "$n")" = "$amount" ] || fail "host $n claimed $(claimed "$n"), settled $amount"
  E1[$n]=$amount
done
ok "every daemon claimed exactly its epoch 1 settle amount"
until_height 455
for n in 1 2 3 4; do
  read -r amount state <<<"$(settled "$n" 2)"
  [ "$state" = claimed ] || fail "host $n did not claim epoch 2 ($amount $state)"
  [ "$(claimed "$n")" = "$((E1[$n] + amount))" ] || fail "host $n claimed $(claimed "$n") in all"
done
ok "and its epoch 2 settle amount"
"$dg" query run 1 --node "$node" --json >run.json || fail "query run"
last=$(py 'import json; r=json.load(open("run.json")); print(int(r["current_round"]["index"]))')
done_rounds=0
for r in $(seq 0 "$last"); do
  "$dg" query round 1 "$r" --node "$node" --json >round.json 2>/dev/null || continue
  phase=$(py 'import json; print(json.load(open("round.json"))["round"]["phase"])')
  case "$phase" in
    done) done_rounds=$((done_rounds + 1));;
    train|commit|reveal|verify|open|dispute|dispute_open|attest|attest_open) ;;
    *) fail "round $r ended $phase";;
  esac
done
[ "$done_rounds" -ge 2 ] || fail "only $done_rounds rounds DONE"
# Every round before the current one was aggregated (pruned ones included).
aggregated=$(py 'import json; print(int(json.load(open("run.json"))["run"]["rounds_aggregated"]))')
[ "$aggregated" -ge "$last" ] || fail "$aggregated of rounds 0 .. $((last - 1)) were aggregated"
ok "rounds 0 .. $((last - 1)) all DONE ($done_rounds still on chain)"
# Each daemon's own G_last (what it aggregated, or synchronised) is the
# agreed one: its state file starts with the descriptor whose SHA-256 is the
# state hash; rounds before last - 1 are pruned.
"$dg" query round 1 "$last" --node "$node" --json >round.json || fail "query round $last"
want=$(py 'import json; print(json.load(open("round.json"))["round"]["start_state_hash"])')
for n in 1 2 3 4; do
  got=$(own_g "$n" "$last") \
    || fail "host $n holds no G_$last"
  [ "$got" = "$want" ] || fail "host $n's G_$last is $got, the chain's $want"
  [ -d "h$n/state/run-1/round-$((last - 2))" ] && fail "host $n kept round $((last - 2))"
done
ok "every daemon's own G_$last is the chain's state hash; older rounds pruned"
for n in 1 2 3 4; do
  status "$n" >"status-$n.json" || fail "status of host $n"
done
ok "every daemon answers /v1/status"
for n in 1 2 3 4; do
  py "
import json,sys
s = json.load(open('status-$n.json'))
for k in ['version','address','roles','run','round','phase','height','inner_step','loss','state_hash','committed','bytes_in','bytes_out','checks','rewards_claimed_ngonka','slashed_ngonka','errors']:
    assert k in s, k
assert s['slashed_ngonka'] == 0, s
assert s['rewards_claimed_ngonka'] > 0, s
assert 'worker' not in s['roles'] or s['bytes_out'] > 100000, s  # its payloads, states
" || fail "status of host $n: $(cat status-$n.json)"
done
ok "every daemon claimed and none was slashed"
python3 "$here/../support/status_page_check.py" "http://127.0.0.1:${PORT[1]}" --worker \
  || fail "the status page of worker 1"
python3 "$here/../support/status_page_check.py" "http://127.0.0.1:${PORT[4]}" --validator \
  || fail "the status page of the validator"
ok "the status page shows each daemon's round, phase, loss chart, verdicts and rewards"
# Fetched whole first: under pipefail, grep -q closing the pipe at its
# match can fail curl (SIGPIPE) on a long enough page.
curl -sf "http://127.0.0.1:${PORT[4]}/metrics" >metrics-4.txt &&
  grep -q '^gd_checks_total{verdict="pass"} [1-9]' metrics-4.txt \
  || fail "the validator's metrics show no passed check"
ok "/metrics counts the validator's checks"
python3 "$here/../support/contrib_check.py" "$here/../../contrib" "http://127.0.0.1:${PORT[1]}/metrics" \
  || fail "contrib/'s dashboard and alert rules against a live /metrics"
ok "every dashboard query and alert rule names a metric the daemon exports"
# Transactions sent ahead while others wait for their blocks take the next
# sequence themselves: the node never had to correct one (code 32).
grep -l "sequence .* rejected, chain expects" host*.log && fail "a daemon guessed a wrong sequence"
ok "every sequence taken ahead of a block was the one the chain expected"
# A worker fetches its peers' payloads of a round off its step, all at once.
for n in 1 2 3; do
  grep -q "payloads in off the step ([1-9][0-9]* bytes, [0-9]* pending, 0 failed)" "host$n.log" \
    || fail "host $n never fetched its peers' payloads off its step"
done
ok "each worker fetched its peers' payloads in parallel"
learned
for n in 1 2 3 4; do kill -TERM "${HOSTPID[$n]}"; done
for n in 1 2 3 4; do
  for _ in $(seq 1 50); do kill -0 "${HOSTPID[$n]}" 2>/dev/null || break; sleep 0.1; done
  kill -0 "${HOSTPID[$n]}" 2>/dev/null && fail "host $n did not stop on SIGTERM"
done
ok "SIGTERM stops every daemon"
echo "PASS"
