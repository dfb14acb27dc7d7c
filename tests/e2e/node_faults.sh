#!/usr/bin/env bash
# Faults on gonka-localnet, each played by its own `gonka-diloco run`
# processes beside two honest workers and a validator (hosts 2, 3, 4):
#  1. Host 1, a worker, is killed with SIGKILL while it trains round 0, right
#     after its commitment of round 1 landed, and while it serves round 2
#     (killed in the reveal window, held down into the verify window until a
#     peer failed to fetch its payload); each time it is restarted with the
#     same config. It never sends a transaction twice (the
#     chain refuses none of them), each round lists its commitment once, it
#     is aggregated in every round, it trains round 2 from its stored
#     optimizer state, and nobody is slashed.
#  2. Host 5, a worker, records an artifact URL where nothing listens. Nobody
#     can fetch its payload, so nobody reports it: it is left out of round
#     0's inclusion and aggregation sets and the round is DONE all the same.
#     Its checks are answered UNAVAILABLE and the class cannot fetch either:
#     the checks end unavailable (docs/verification.md), which is no proof of
#     cheating: it is not paid and pays the skip slash per check, never the
#     cheat slash, and its accusers are credited and keep their bonds.
#  3. Host 6, a worker, starts only once round 1 is DONE (in the PoC gap of
#     epoch 1, before round 2 opens): it joins, seals its secret,
#     synchronises G_2 chunk by chunk from the first peer that serves it
#     (host 5's URL, if tried, answers nothing; peers serve G_2 from the
#     moment round 1 is DONE), trains round 2, which ends DONE with it
#     aggregated, and its G_2 is the chain's start state hash.
# The spec fits two rounds of 98 blocks in each epoch of 220 blocks (from
# height 42 to the PoC start at 240), with windows long enough for host 1,
# restarted while training, to train again and commit (in a sanitizer build
# too), to see it back before its checkers answer UNAVAILABLE, and for busy
# daemons on a small machine to land their answers in time. Host 1, back in
# the verify window of round 2 (in a sanitizer build on two cores, 6 blocks
# after it opened), still owes its reports and up to three checks: 3 s of
# work there, hence a verify window of 30 blocks.
# No honest daemon is slashed or skip-slashed in any round.
# Usage: node_faults.sh BIN_DIR [OUTAGE_S]   (OUTAGE_S: the outage, 60 s)
outage=${2:-60}
windows="{'train': 8, 'commit': 30, 'reveal': 4, 'verify': 30, 'open': 4, 'dispute': 8,
          'dispute_open': 4, 'attest': 6, 'attest_open': 4}"
accounts=7
epoch_length=220
. "$(dirname "$0")/node_lib.sh" "$1"
lines() { wc -l <"host$1.log"; }
wait_log() { # wait_log N FROM PATTERN SECONDS: host N logs PATTERN after its line FROM
  local n=$1 from=$2 pat=$3 end=$((SECONDS + $4))
  while [ $SECONDS -lt $end ]; do
    tail -n +"$((from + 1))" "host$n.log" | grep -q -- "$pat" && return 0
    kill -0 "${HOSTPID[$n]}" 2>/dev/null || fail "host $n stopped"
    sleep 0.02
  done
  fail "host $n did not log '$pat' in $4 s"
}
query_round() { "$dg" query round 1 "$1" --node "$node" --json 2>/dev/null; }
field() { py "import json,sys; print(json.load(sys.stdin)$1)"; }
wait_done() { # wait_done R: round R is over; DONE or fail
  local phase
  for _ in $(seq 1 1500); do
    alive
    phase=$(query_round "$1" | field '["round"]["phase"]' 2>/dev/null)
    case "$phase" in
      done) query_round "$1" >"round-$1.json"; return 0;;
      void) fail "round $1 is VOID";;
    esac
    sleep 0.2
  done
  fail "round $1 did not end"
}

t0=$SECONDS
start_host 1 worker
start_host 2 worker
start_host 3 worker
start_host 4 validator
# Port 1 is privileged: nothing of ours listens there, so a fetch is refused.
start_host 5 worker "http://127.0.0.1:1"

# 1a. SIGKILL while training round 0; the restart trains it again.
wait_log 1 0 ": training round 0 " 60
kill_host 1
grep -q "round 0 trained" host1.log && fail "host 1 was killed after its training, not during it"
start_host 1 worker
ok "host 1 killed while training round 0 and restarted"
# 1b. SIGKILL right after its commitment of round 1 is in a block.
wait_log 1 0 "commit round 1 done" 60
kill_host 1
start_host 1 worker
ok "host 1 killed right after committing round 1 and restarted"

# 3. The late joiner starts once round 1 is DONE; round 2 opens after PoC.
wait_done 1
start_host 6 worker
ok "host 6 started after round 1 ended DONE"

# 1c. SIGKILL once its secret of round 2 is revealed (its payload is served,
# nothing of it is in flight), held down until a peer has failed to fetch
# from it in the verify window, then restarted.
declare -A OFF
for n in 2 3 4 5 6; do OFF[$n]=$(lines "$n"); done
peer_failed() { # a peer failed to fetch host 1's payload since the kill
  for n in 2 3 4 5 6; do
    tail -n +"$((OFF[$n] + 1))" "host$n.log" | grep -q "report on ${ADDR[1]}" && return 0
  done
  return 1
}
wait_log 1 0 "reveal-secret round 2 done" 120
kill_host 1
down=$(height)
query_round 2 >round-2-open.json || fail "query round 2"
verify=$(field '["round"]["windows"]["verify_start"]' <round-2-open.json)
[ "$down" -lt "$verify" ] || fail "host 1 was killed at $down, not before round 2's verify start $verify"
for _ in $(seq 1 500); do peer_failed && break; alive; sleep 0.02; done
peer_failed || fail "no peer tried to fetch from host 1 while it was down"
start_host 1 worker
ok "host 1 killed at height $down, restarted at $(height) once a peer failed to fetch from it (verify from $verify)"

wait_done 0
wait_done 2
ok "rounds 0 to 2 DONE after $((SECONDS - t0)) s"
"$dg" query run 1 --node "$node" --json >run.json || fail "query run"
for n in "${hosts[@]}"; do status "$n" >"status-$n.json" || fail "status of host $n"; done
"$dg" query rewards "${ADDR[5]}" --node "$node" --json >rewards-5.json || fail "rewards of host 5"
sha2=$(own_g 6 2) \
  || fail "host 6 holds no G_2"

export A1=${ADDR[1]} A5=${ADDR[5]} A6=${ADDR[6]} HONEST="${ADDR[1]} ${ADDR[2]} ${ADDR[3]} ${ADDR[4]} ${ADDR[6]}"
export SHA2=$sha2
py '
import json, os, sys
A1, A5, A6, SHA2 = os.environ["A1"], os.environ["A5"], os.environ["A6"], os.environ["SHA2"]
honest = os.environ["HONEST"].split()
R = {r: json.load(open(f"round-{r}.json")) for r in range(3)}
run = json.load(open("run.json"))
def check(cond, what):
    if not cond:
        print("FAIL:", what); sys.exit(1)
def members(r): return [m["address"] for m in R[r]["round"]["members"]]
def committers(r): return [c["participant"] for c in R[r]["commitments"]]

# 1. The killed worker.
for r in range(3):
    rr = R[r]["round"]
    check(committers(r).count(A1) == 1, f"round {r} lists host 1 {committers(r).count(A1)} times")
    check(A1 in rr["aggregation_set"], f"host 1 is not aggregated in round {r}")
print("ok: host 1 committed once in each of rounds 0-2 and is aggregated in each")

# 2. The unreachable worker.
r0 = R[0]
c5 = [c for c in r0["commitments"] if c["participant"] == A5]
check(len(c5) == 1, "host 5 did not commit round 0")
check(c5[0]["reports"] == 0 and c5[0]["report_weight"] == "0", f"host 5 was reported: {c5[0]}")
check(A5 not in r0["round"]["inclusion_set"], "host 5 is in round 0 inclusion set")
check(A5 not in r0["round"]["aggregation_set"], "host 5 is aggregated in round 0")
print("ok: host 5 (unreachable) is left out of round 0: no reports, not included, not aggregated")
checks5 = [a for a in r0["assignments"] if a["target"] == A5]
check(len(checks5) == 2, f"host 5 has {len(checks5)} checks")
for a in checks5:
    check(a["outcome"] == "unavailable", f"check {a} of host 5 not unavailable")
# Its own digests are no verdicts on it.
v5 = [v for v in r0["verdicts"] if v["target"] == A5 and v["validator"] != A5]
check(any(v["recheck"] for v in v5), "no re-check of host 5")
for v in v5:
    check(v["verdict"] == "unavailable", f"verdict on host 5: {v}")
    check(v["validator"] in honest, f"{v}")
    check(not v["bonded"], f"an accuser of host 5 still has its bond held: {v}")
    if not v["recheck"]:
        check(v["credited"], f"an assigned accuser of host 5 was not credited: {v}")
for r in range(3):
    check(A5 not in R[r]["round"]["failed"], f"host 5 failed round {r}: unreachable is no cheat")
print("ok: its checks answered UNAVAILABLE, re-checked UNAVAILABLE by the class: unavailable, "
      "not a cheat; accusers credited, bonds back")
s5 = json.load(open("status-5.json"))["slashed_ngonka"]
unav = sum(1 for r in range(3) for a in R[r]["assignments"]
           if a["target"] == A5 and a["outcome"] == "unavailable")
check(s5 >= 1000 * unav and s5 % 1000 == 0 and s5 < 90000,
      f"host 5 slashed {s5} for {unav} unavailable checks")
for x in json.load(open("rewards-5.json"))["amounts"]:
    check(int(x.get("tokens", 0)) == 0, f"host 5 was paid for tokens: {x}")
print(f"ok: host 5 paid the skip slash per unavailable check ({unav}: {s5} ngonka), no cheat "
      "slash, and no tokens")

# 3. The late joiner.
check(A6 not in members(1), "host 6 is in round 1")
check(A6 in members(2), "host 6 is not in round 2")
check(committers(2).count(A6) == 1, "host 6 did not commit round 2")
check(A6 in R[2]["round"]["aggregation_set"], "host 6 is not aggregated in round 2")
want2 = R[2]["round"]["start_state_hash"]
check(SHA2 == want2, f"host 6 G_2 is {SHA2}, the chain start state hash {want2}")
print("ok: host 6 joined late, is aggregated in round 2, and its G_2 is the chain start state hash")

# Nobody honest slashed.
for r in range(3):
    for m in R[r]["round"]["members"]:
        if m["address"] in honest:
            check(not m["skip_slashed"], f"round {r}: {m} skip-slashed")
    for v in R[r]["verdicts"]:
        check(not v["faulty"], f"round {r}: a faulty verdict {v}")
    for x in R[r]["round"]["failed"]:
        check(x not in honest, f"round {r}: honest {x} failed")
col = {m["address"]: m["collateral"] for m in run["members"]}
for a in honest:
    check(col.get(a) == "200000", f"{a} holds {col.get(a)}")
for n in (1, 2, 3, 4, 6):
    s = json.load(open(f"status-{n}.json"))
    check(s["slashed_ngonka"] == 0, f"host {n} status: {s}")
print("ok: no honest member slashed, skip-slashed or faulty in rounds 0-2")
' || fail "the rounds' records"

grep -q "refused with code" host1.log && fail "the chain refused a transaction of host 1: $(grep 'refused with code' host1.log)"
for r in 0 1 2; do
  c=$(grep -c "commit round $r done" host1.log)
  [ "$c" = 1 ] || fail "host 1 sent its commitment of round $r $c times"
done
[ "$(grep -c ': training round 0 ' host1.log)" = 2 ] || fail "host 1 did not train round 0 again"
grep -q ": training round 2 (8 steps)" host1.log || fail "host 1 did not train round 2 from its stored state"
ok "host 1 never had a transaction refused, committed each round once, trained round 2 on from its stored state"
grep -q "state sync: G_2 from " host6.log || fail "host 6 did not synchronise G_2"
synced=$(grep -m1 "state sync: G_2 from " host6.log | sed -n 's/.*height \([0-9]*\): .*/\1/p')
open2=$(field '["round"]["windows"]["train_start"]' <round-2.json)
# Whether that was before round 2 opened depends on how fast this machine
# starts a daemon in the gap (test_member_epoch checks that it can be).
ok "host 6 at height ${synced:-?} (round 2 opened at $open2): $(grep -o 'state sync: G_2 from .*' host6.log | head -n 1)"

# 4. A chain RPC outage of a minute: localnet stopped for OUTAGE_S s (its RPC
# accepts nothing and answers nothing); every daemon logs the unanswered
# reads, retries, shows the outage in its status's errors, and carries on
# once the chain answers again.
h0=$(height)
failed_steps=0
kill -STOP "${pids[0]}"
sleep "$outage"
kill -CONT "${pids[0]}"
until_height $((h0 + 15))
for n in 2 3 4; do
  # The RPC client retries a call itself (three times, 10 s each); a step
  # that still fails is retried by the daemon with backoff.
  grep -Eq "retrying in|no answer from .* retry [0-9] of" "host$n.log" \
    || fail "host $n logged no retry during the outage"
  if grep -q "retrying in" "host$n.log"; then
    grep -q "the chain answers again" "host$n.log" || fail "host $n did not log the chain's return"
  fi
  # A daemon busy training when the chain came back reports its height
  # once the duty is done.
  for _ in $(seq 1 150); do
    status "$n" | py "import json,sys; sys.exit(json.load(sys.stdin)['height'] < $h0 + 10)" && break
    sleep 0.2
  done
  status "$n" | py "import json,sys; s=json.load(sys.stdin); assert s['height'] >= $h0 + 10, s" \
    || fail "host $n did not follow the chain after the outage"
  # A step that failed (the outage outlasted the client's own retries) is
  # in the status's errors.
  if grep -q "retrying in" "host$n.log"; then
    failed_steps=$((failed_steps + 1))
    status "$n" | py "
import json,sys
s = json.load(sys.stdin)
assert any('the chain cannot be read' in e['error'] for e in s['errors']), s['errors']
" || fail "host $n's status shows no outage"
  fi
done
# The client's own tries last up to about 41 s from a call's start (four of
# 10 s, and backoffs below 1.4 s), so a daemon busy with a duty when the
# outage began may make its first call late enough to be answered after it:
# a minute's outage makes some step fail, not necessarily every daemon's.
if [ "$outage" -ge 60 ] && [ "$failed_steps" -eq 0 ]; then
  fail "no daemon saw a failed step in a $outage s outage"
fi
ok "a $outage s chain outage is retried, shown in the errors of every daemon whose step failed, and every daemon follows the chain after it"
echo "PASS ($((SECONDS - t0)) s)"
