#!/usr/bin/env bash
# A cheating worker among honest daemons on gonka-localnet, each its own
# process: hosts 1-3 are honest workers, host 4 is `gd-adversary --ATTACK
# [ARG]` (tests/adversary), host 5 a validator:
#   lazy F      it trains only 1 - F of each round's segments and claims the
#               whole round (caught by re-executing a skipped segment);
#   scaled X    its payload codes X times its Δ beside an honest transcript;
#   garbage     its payload codes nonsense values (both caught by the
#               drawn payload chunk, which is not the re-encoding);
#   malformed   its payload is committed with a chunk no decoder accepts
#               (caught by every check, which decodes the whole payload;
#               nobody reports it available, so nobody has to aggregate it);
#   poison      it plants a vector in its residual each round (caught by
#               the links: leaf 0's residual is not the previous coding's);
#   withhold-states  it never serves its segment-start states (its
#               validators and the class answer UNAVAILABLE: the checks
#               end unavailable, it is not aggregated and pays the skip
#               slash per check, but no cheat slash and no suspension);
#   replay      every round after its first it trains that first round's
#               start again (caught by the links in round 1: leaf 0 is not
#               G_r);
#   copy-payload  it trains honestly and commits host 1's payload of the
#               round, one value changed, handed over from host 1's store;
#   sybil-of    it trains exactly host 1's training (host 1's rank and
#               address in its states) and commits it under its own address
#               (caught by the links: the leaves name host 1). Host 1, the
#               original, is honest and is never slashed.
# The spec draws 4 checks per commitment, so a round of a worker faking a
# fraction F of its segments is caught with probability 1 - (1 - F)^4
# (docs/verification.md, "The incentive model"). For two epochs:
#  - the cheater is caught: a round lists it as failed, its checks FAIL and
#    are upheld, it pays cheat_slash, is left out of that round's
#    aggregation and sits out suspend_rounds rounds (a withholder: a check
#    ends unavailable, it is left out of that round's aggregation and pays
#    the skip slash);
#  - honest members are never slashed, each is aggregated in every round it
#    committed, and every daemon's own G is the chain's state hash;
#  - the model still learns (eval loss of the agreed G falls);
#  - the payouts: it prints one line `byzantine: ATTACK ARG ...` with the
#    rounds until caught, the cheater's and an honest worker's settle
#    amounts and the honest members slashed (bench/byzantine collects it).
# Usage: byzantine_worker.sh BIN_DIR ATTACK [ARG]
attack=$2
arg=${3:-}
windows="{'train': 10, 'commit': 10, 'reveal': 5, 'verify': 22, 'open': 8, 'dispute': 10,
          'dispute_open': 8, 'attest': 10, 'attest_open': 5}"
accounts=6
epoch_length=200
checks=4
. "$(dirname "$0")/node_lib.sh" "$1"
[ -x "$bin/gd-adversary" ] || fail "no gd-adversary in $bin"
start_host 1 worker
case $attack in
  copy-payload) arg=h1/state;; # host 1's store, as a colluder would hand it over
  sybil-of)
    rank=
    export A1=${ADDR[1]}
    for _ in $(seq 1 100); do
      rank=$("$dg" query run 1 --node "$node" --json | py '
import json, os, sys
for m in json.load(sys.stdin)["members"]:
    if m["address"] == os.environ["A1"]: print(m["rank"])')
      [ -n "$rank" ] && break
      sleep 0.2
    done
    [ -n "$rank" ] || fail "host 1 did not join"
    arg="${ADDR[1]}:$rank";;
esac
ADV[4]="--$attack $arg"
for n in 2 3 4; do start_host "$n" worker; done
start_host 5 validator

until_height 40
checkpoint 1 g0.safetensors
grep -q "adversary: --$attack" host4.log || fail "host 4 is not the adversary"
# Two epochs: rounds 0 and 1 in epoch 1, 2 and 3 in epoch 2 (settled at
# 420, claimed from 445).
save_rounds 455
collect 1 2 3 4 5
label=${arg:--}
case $attack in copy-payload|sybil-of) label=host1;; esac
export LAST=$last ATTACK="$attack $label" WITHHOLD=$([[ $attack == withhold-* ]] && echo 1 || echo 0) LAZY=${ADDR[4]} HONEST="${ADDR[1]} ${ADDR[2]} ${ADDR[3]} ${ADDR[5]}"
py '
import json, os, sys
last, lazy, honest = int(os.environ["LAST"]), os.environ["LAZY"], os.environ["HONEST"].split()
withhold = os.environ["WITHHOLD"] == "1"
R = [json.load(open(f"round-{r}.json")) for r in range(last)]
def check(cond, what):
    if not cond:
        print("FAIL:", what); sys.exit(1)
caught = None
for r, q in enumerate(R):
    rr = q["round"]
    phase = rr["phase"]
    check(phase == "done", f"round {r} is {phase}")
    committers = [c["participant"] for c in q["commitments"]]
    for a in honest:
        if a in committers:
            check(a in rr["aggregation_set"], f"honest {a} not aggregated in round {r}")
        check(a not in rr["failed"], f"honest {a} failed round {r}")
    for v in q["verdicts"]:
        check(not v["faulty"] or v["validator"] not in honest, f"round {r}: faulty honest verdict {v}")
    unavailable = any(a["target"] == lazy and a["outcome"] == "unavailable" for a in q["assignments"])
    check(withhold or not unavailable, f"round {r}: the cheater had unavailable states")
    check(not withhold or lazy not in rr["failed"], f"round {r}: a withholder failed (no cheat proven)")
    if lazy in rr["failed"] or unavailable:
        fails = [v for v in q["verdicts"] if v["target"] == lazy and v["verdict"] in ("fail", "unavailable")]
        check(fails, f"round {r}: the cheater failed without an accusation")
        check(lazy not in rr["aggregation_set"], f"round {r}: the caught cheater is aggregated")
        if caught is None:
            caught = r
    for m in rr["members"]:
        if m["address"] in honest:
            check(not m["skip_slashed"], f"round {r}: honest {m} skip-slashed")
check(caught is not None, f"the cheater was never caught in rounds 0..{last - 1}")
for r in range(caught + 1, min(caught + 3, last)):
    members = [m["address"] for m in R[r]["round"]["members"]]
    check(withhold or lazy not in members, f"the cheater sits in round {r}, within suspend_rounds of its catch")
paid4 = json.load(open("status-4.json"))["slashed_ngonka"]
check(paid4 >= (1000 if withhold else 90000), f"the cheater paid {paid4}")
for n in (1, 2, 3, 5):
    s = json.load(open(f"status-{n}.json"))
    check(s["slashed_ngonka"] == 0, f"honest host {n} slashed: {s}")
def paid(n):
    return sum(int(x["amount"]) for x in json.load(open(f"rewards-{n}.json"))["amounts"])
attack = os.environ["ATTACK"]
print(f"byzantine: {attack} caught_round {caught} cheater_payout {paid(4)} "
      f"honest_payout {paid(1)} cheater_slashed {paid4} honest_slashed 0")
print(f"ok: the cheater ({attack}) was caught in round {caught}, paid {paid4} ngonka, "
      f"sat out its suspension; no honest member slashed or failed")
' || fail "the rounds' records"
agreed_g 1 2 3 5
learned
echo "PASS"
