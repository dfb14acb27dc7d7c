#!/usr/bin/env bash
# A lazy validator among honest daemons on gonka-localnet, each its own
# process: hosts 1-3 are honest workers, host 4 an honest validator, host 5
# `gd-adversary --lazy-validator`, which answers every check PASS with a
# made-up digest and never re-executes (tests/adversary/validator.c). Every
# check is a double check, so beside an honest partner the digests split,
# the re-checker re-executes and the made-up digest loses
# (docs/verification.md, "Validators"). For two epochs:
#  - the lazy validator is caught: a verdict of it is faulty, it pays
#    cheat_slash;
#  - honest members are never slashed, no honest worker fails a round, and
#    every honest daemon's own G is the chain's state hash;
#  - the model still learns (eval loss of the agreed G falls);
#  - it prints one `byzantine: lazy-validator - ...` line for
#    bench/byzantine.
# Usage: byzantine_validator.sh BIN_DIR
windows="{'train': 10, 'commit': 10, 'reveal': 5, 'verify': 22, 'open': 8, 'dispute': 10,
          'dispute_open': 8, 'attest': 10, 'attest_open': 5}"
accounts=6
epoch_length=200
checks=2
double_ppm=1000000
min_class=4 # the target, two validators, one re-checker
. "$(dirname "$0")/node_lib.sh" "$1"
[ -x "$bin/gd-adversary" ] || fail "no gd-adversary in $bin"
ADV[5]="--lazy-validator"
for n in 1 2 3; do start_host "$n" worker; done
start_host 4 validator
start_host 5 validator

until_height 40
checkpoint 1 g0.safetensors
grep -q "adversary: --lazy-validator" host5.log || fail "host 5 is not the adversary"
save_rounds 455
collect 1 2 3 4 5
export LAST=$last LAZY=${ADDR[5]} HONEST="${ADDR[1]} ${ADDR[2]} ${ADDR[3]} ${ADDR[4]}"
py '
import json, os, sys
last, lazy, honest = int(os.environ["LAST"]), os.environ["LAZY"], os.environ["HONEST"].split()
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
            if caught is None:
                caught = r
    for m in rr["members"]:
        if m["address"] in honest:
            check(not m["skip_slashed"], f"round {r}: honest member skip-slashed")
check(caught is not None, f"no verdict of the lazy validator was found faulty in rounds 0..{last - 1}")
paid5 = json.load(open("status-5.json"))["slashed_ngonka"]
check(paid5 >= 90000, f"the lazy validator paid {paid5}")
for n in (1, 2, 3, 4):
    s = json.load(open(f"status-{n}.json"))
    check(s["slashed_ngonka"] == 0, f"honest host {n} slashed")
def paid(n):
    return sum(int(x["amount"]) for x in json.load(open(f"rewards-{n}.json"))["amounts"])
print(f"byzantine: lazy-validator - caught_round {caught} cheater_payout {paid(5)} "
      f"honest_payout {paid(1)} cheater_slashed {paid5} honest_slashed 0")
print(f"ok: the lazy validator was caught in round {caught} and paid {paid5} ngonka; "
      f"no honest member slashed, no worker failed")
' || fail "the rounds' records"
agreed_g 1 2 3 4
learned
echo "PASS"
