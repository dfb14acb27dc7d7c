#!/usr/bin/env bash
# A cheating validator among honest daemons on gonka-localnet, each its own
# process: hosts 1-3 are honest workers, host 4 an honest validator, host 5
# `gd-adversary --ATTACK` (tests/adversary/validator.c):
#   lazy-validator    every check answered PASS with a made-up digest,
#                     nothing re-executed. Every check is a double check, so
#                     beside an honest partner the digests split, the
#                     re-checker re-executes and the made-up digest loses: a
#                     faulty verdict, cheat_slash;
#   unavailable-spam  every check answered UNAVAILABLE: the re-checkers fetch
#                     what it says it could not, the check passes, the
#                     accusation is faulty and its fail_bond burned each time
#                     (docs/verification.md, "Validators");
#   lazy-single       the lazy validator where every check is single: the
#                     target's own digest contradicts its made-up one;
#   pass-early        PASS with the end leaf and no step re-executed (single
#                     checks): the digest covers every step, and the
#                     target's own digest contradicts it;
#   framer            every check and re-check FAIL (single checks): the
#                     class decides by weight, no honest worker fails, each
#                     FAIL is faulty and pays cheat_slash. For two epochs:
#  - the cheating validator is caught: its verdicts are faulty and it pays;
#  - honest members are never slashed, no honest worker fails a round, and
#    every honest daemon's own G is the chain's state hash;
#  - the model still learns (eval loss of the agreed G falls);
#  - it prints one `byzantine: lazy-validator - ...` line for
#    bench/byzantine.
# Usage: byzantine_validator.sh BIN_DIR [ATTACK]   (default lazy-validator)
attack=${2:-lazy-validator}
case $attack in
  lazy-validator|unavailable-spam) double_ppm=1000000; min_class=4;; # target, two validators, a juror
  lazy-single|pass-early|framer) double_ppm=0; min_class=3;;         # target, a validator, a juror
  *) echo "FAIL: unknown attack $attack"; exit 1;;
esac
windows="{'train': 10, 'commit': 10, 'reveal': 5, 'verify': 22, 'open': 8, 'dispute': 10,
          'dispute_open': 8, 'attest': 10, 'attest_open': 5}"
accounts=6
epoch_length=200
checks=2
. "$(dirname "$0")/node_lib.sh" "$1"
[ -x "$bin/gd-adversary" ] || fail "no gd-adversary in $bin"
ADV[5]="--$attack"
# Slashed below the minimum it joins again once, and stops when removed a
# second time (docs/node.md): what it paid is read from the chain.
STOPS_WHEN[5]="removed again after it joined again"
for n in 1 2 3; do start_host "$n" worker; done
start_host 4 validator
start_host 5 validator

until_height 40
checkpoint 1 g0.safetensors
grep -q "adversary: --$attack" host5.log || fail "host 5 is not the adversary"
save_rounds 455
collect 1 2 3 4 5
slashed 1 2 3 4 5 >slashed.txt || fail "the chain's slashes"
export LAST=$last ATTACK=$attack LAZY=${ADDR[5]} HONEST="${ADDR[1]} ${ADDR[2]} ${ADDR[3]} ${ADDR[4]}"
py '
import json, os, sys
last, lazy, honest = int(os.environ["LAST"]), os.environ["LAZY"], os.environ["HONEST"].split()
attack = os.environ["ATTACK"]
want = {"unavailable-spam": "unavailable", "framer": "fail"}.get(attack, "pass")
faulty = 0
R = [json.load(open(f"round-{r}.json")) for r in range(last)]
def check(cond, what):
    if not cond:
        print("FAIL:", what); sys.exit(1)
caught = None
for r, q in enumerate(R):
    rr = q["round"]
    phase = rr["phase"]
    check(phase == "done", f"round {r} is {phase}")
    check(not rr["failed"], f"round {r} has failed members")
    for v in q["verdicts"]:
        if v["faulty"]:
            check(v["validator"] == lazy, f"round {r}: an honest verdict is faulty: {v}")
            check(v["verdict"] == want and not v["credited"], f"round {r}: {v}")
            faulty += 1
            if caught is None:
                caught = r
    for m in rr["members"]:
        if m["address"] in honest:
            check(not m["skip_slashed"], f"round {r}: honest member skip-slashed")
check(caught is not None, f"no verdict of the lazy validator was found faulty in rounds 0..{last - 1}")
chain_paid = [int(x) for x in open("slashed.txt").read().split()]
paid5 = chain_paid[4]
if os.path.exists("status-5.json"): # still running: its own count is of its current bond
    check(json.load(open("status-5.json"))["slashed_ngonka"] <= paid5, "host 5 counts more")
if attack != "unavailable-spam":
    check(paid5 >= 90000, f"the lazy validator paid {paid5}")
    cost = paid5
else:
    cost = 1000 * faulty # fail_bond, burned for each faulty accusation
for n in (1, 2, 3, 4):
    s = json.load(open(f"status-{n}.json"))
    check(s["slashed_ngonka"] == 0 and chain_paid[n - 1] == 0, f"honest host {n} slashed")
def paid(n):
    return sum(int(x["amount"]) for x in json.load(open(f"rewards-{n}.json"))["amounts"])
print(f"byzantine: {attack} - caught_round {caught} cheater_payout {paid(5)} "
      f"honest_payout {paid(1)} cheater_slashed {cost} honest_slashed 0")
print(f"ok: the cheating validator ({attack}) was caught in round {caught}: {faulty} faulty "
      f"verdicts, it paid {cost} ngonka; no honest member slashed, no worker failed")
' || fail "the rounds' records"
agreed_g 1 2 3 4
learned
echo "PASS"
