#!/usr/bin/env bash
# An overlap run on gonka-localnet with the daemons as processes: three
# workers and one validator. Once a worker's commitment of round r is on
# chain it trains round r + 1 ahead, from G_r minus its own decoded
# progress, a segment at a time between its duties of round r, and commits
# it as soon as round r + 1's commit window opens; the validator checks
# each overlapped start by the drawn chunk. Then: rounds 0 and 1 are DONE
# with every check passed, each worker trained rounds 1 and 2 at heights
# before those rounds opened, every daemon's own G is the chain's state
# hash, nobody is slashed, and the model learned.
# Usage: node_overlap.sh BIN_DIR
windows="{'train': 4, 'commit': 10, 'reveal': 5, 'verify': 22, 'open': 8, 'dispute': 10,
          'dispute_open': 8, 'attest': 10, 'attest_open': 5}"
accounts=5
epoch_length=200
overlap=True
. "$(dirname "$0")/node_lib.sh" "$1"
start_four
# Rounds of 82 blocks from height 42: rounds 0 and 1 before the PoC start
# at 220, round 2 after it, trained ahead in round 1 and the gap.
save_rounds 285
[ "$last" -ge 2 ] || fail "round 2 did not open (rounds saved: $last)"
for r in 0 1; do
  py "
import json
q = json.load(open('round-$r.json'))
assert q['round']['phase'] == 'done', q['round']['phase']
assert len(q['round'].get('aggregation_set', [])) == 3, q['round']
for a in q.get('assignments', []):
    assert a['outcome'] == 'passed', a
" || fail "round $r: $(head -c 400 "round-$r.json")"
done
ok "rounds 0 and 1 DONE, all three workers aggregated, every check passed"
"$dg" query round 1 2 --node "$node" --json >round-2-now.json || fail "query round 2"
for n in 1 2 3; do
  for r in 1 2; do
    opened=$(py "import json; print(int(json.load(open('round-2-now.json' if $r == 2 else 'round-$r.json'))['round']['windows']['train_start']))")
    at=$(grep -o "height [0-9]*: round $r trained ahead" "host$n.log" | head -1 | grep -o '^height [0-9]*' | grep -o '[0-9]*')
    [ -n "$at" ] || fail "host $n did not train round $r ahead"
    [ "$at" -lt "$opened" ] || fail "host $n trained round $r at $at, once it had opened at $opened"
    leads="${leads:-}${leads:+, }h$n/r$r $((opened - at))"
  done
  py "
import json
q = json.load(open('round-2-now.json'))
assert '${ADDR[$n]}' in [c['participant'] for c in q.get('commitments', [])], 'no commitment'
" || fail "host $n did not commit round 2"
done
ok "each worker trained rounds 1 and 2 before they opened (blocks ahead: $leads), and committed round 2"
paused=$(cat host1.log host2.log host3.log | grep -c "ahead: paused after segment")
ok "training ahead gave way to other duties $paused times"
agreed_g 1 2 3 4
collect 1 2 3 4
for n in 1 2 3 4; do
  py "
import json
s = json.load(open('status-$n.json'))
assert s['slashed_ngonka'] == 0, s
" || fail "host $n: $(cat status-$n.json)"
done
ok "nobody was slashed"
# Fetched whole first: under pipefail, grep -q closing the pipe at its
# match can fail curl (SIGPIPE) on a long enough page.
curl -sf "http://127.0.0.1:${PORT[4]}/metrics" >metrics-4.txt &&
  grep -q '^gd_checks_total{verdict="pass"} [1-9]' metrics-4.txt \
  || fail "the validator's metrics show no passed check"
ok "the validator passed the overlapped starts it checked"
learned
echo "PASS"
