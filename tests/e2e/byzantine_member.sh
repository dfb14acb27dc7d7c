#!/usr/bin/env bash
# A member that skips or fakes a duty among honest daemons on
# gonka-localnet, each its own process (`gd-adversary --ATTACK`,
# tests/adversary/duty.c):
#   no-reports     host 4, a worker, never reports availability (a coalition
#                  of one fifth of the weight, under 1/3);
#   wrong-attest   host 4 attests a state hash that is not its aggregate;
#   copy-attest    host 4 never aggregates: it seals a guess and reveals the
#                  hash another attester revealed, which does not match its
#                  seal;
#   copy-verdicts  host 5, a validator beside the honest validator host 4
#                  on every check (all checks doubled), seals a made-up PASS
#                  and reveals its partner's verdict and digest instead;
#   skipper        host 5, a validator, leaves every check it holds
#                  unanswered: the skip slash for each one;
#   late-server    host 3, a worker, answers 404 for its states until the
#                  dispute window: its validators answer UNAVAILABLE, the
#                  jury passes, the reporters' state samples show the
#                  states were late, so the validators keep their bonds and
#                  the worker pays the skip slash per such check (it is
#                  still aggregated: its training was right);
#   dripper        host 3, a worker, sends its whole payload a 64 KiB
#                  burst every 3 s (above the peer client's rate
#                  floor): the honest members fetch off their steps, so
#                  none misses a duty, and its payload, late for the verify
#                  window, is not included on anyone's reports alone;
#   grinder        host 4, a worker, seals its secret for every round and
#                  never reveals it (a last revealer choosing between seeds
#                  pays the same): the withhold slash each round.
# Hosts 1-3 are honest workers; the fifth host is a validator. For two
# epochs (docs/verification.md, "Skipping", "Copying", "Colluders"):
#  - every round is DONE, no honest worker fails or is left out of a round
#    it committed, no honest member is slashed or skip-slashed, and every
#    honest daemon's own G is the chain's state hash;
#  - the cheater pays the skip slash in every round it took part in (and
#    nothing more): its silence, its minority hash, its absent attestation,
#    and for each unrevealed verdict (the skip slash is per duty);
#  - the model still learns; one `byzantine: ATTACK - ...` line for
#    bench/byzantine.
# Usage: byzantine_member.sh BIN_DIR ATTACK
attack=$2
windows="{'train': 10, 'commit': 10, 'reveal': 5, 'verify': 22, 'open': 8, 'dispute': 10,
          'dispute_open': 8, 'attest': 10, 'attest_open': 5}"
accounts=6
epoch_length=200
case $attack in
  no-reports|wrong-attest|copy-attest) cheater=4; checks=2;;
  copy-verdicts) cheater=5; checks=2; double_ppm=1000000; min_class=4;;
  skipper) cheater=5; checks=2;;
  late-server) cheater=3; checks=2;;
  grinder) cheater=4; checks=2;;
  dripper) cheater=3; checks=2;;
  *) echo "FAIL: unknown attack $attack"; exit 1;;
esac
. "$(dirname "$0")/node_lib.sh" "$1"
[ -x "$bin/gd-adversary" ] || fail "no gd-adversary in $bin"
ADV[$cheater]="--$attack"
for n in 1 2 3; do start_host "$n" worker; done
if [ "$cheater" = 4 ]; then start_host 4 worker; else start_host 4 validator; fi
start_host 5 validator

until_height 40
checkpoint 1 g0.safetensors
grep -q "adversary: --$attack" "host$cheater.log" || fail "host $cheater is not the adversary"
save_rounds 455
collect 1 2 3 4 5
honest=()
for n in 1 2 3 4 5; do [ "$n" = "$cheater" ] || honest+=("$n"); done
export LAST=$last ATTACK=$attack CHEATER=$cheater CHEAT=${ADDR[$cheater]} \
  HONEST="$(for n in "${honest[@]}"; do printf '%s ' "${ADDR[$n]}"; done)" \
  HONEST_HOSTS="${honest[*]}"
py '
import json, os, sys
last, attack, cheat = int(os.environ["LAST"]), os.environ["ATTACK"], os.environ["CHEAT"]
honest, hosts = os.environ["HONEST"].split(), os.environ["HONEST_HOSTS"].split()
R = [json.load(open(f"round-{r}.json")) for r in range(last)]
def check(cond, what):
    if not cond:
        print("FAIL:", what); sys.exit(1)
skipped = []
for r, q in enumerate(R):
    rr = q["round"]
    phase, failed = rr["phase"], rr["failed"]
    check(phase == "done", f"round {r} is {phase}")
    check(not failed, f"round {r} has failed members: {failed}")
    committers = [c["participant"] for c in q["commitments"]]
    if attack == "dripper" and cheat in committers and cheat in rr["inclusion_set"]:
        reporters = [a["reporter"] for a in q["availability"] if a["target"] == cheat]
        check(any(h in reporters for h in honest),
              f"round {r}: the dripper was included without an honest report")
    if attack == "late-server" and cheat in committers:
        mine = [c for c in q["commitments"] if c["participant"] == cheat][0]
        check(not mine.get("states_served"), f"round {r}: its late states counted as served")
        check(cheat in rr["aggregation_set"], f"round {r}: the late server was not aggregated")
    for a in honest:
        if a in committers:
            check(a in rr["aggregation_set"], f"honest {a} not aggregated in round {r}")
    for v in q["verdicts"]:
        check(not v["faulty"] or v["validator"] == cheat, f"round {r}: a faulty honest verdict {v}")
    member = False
    for m in rr["members"]:
        if m["address"] in honest:
            check(not m["skip_slashed"], f"round {r}: honest {m} skip-slashed")
        if m["address"] == cheat:
            member = True
            if m["skip_slashed"]:
                skipped.append(r)
    mine = [a for a in q["attestations"] if a["attester"] == cheat]
    if attack == "no-reports":
        check(not [a for a in q["availability"] if a["reporter"] == cheat], f"round {r}: it reported")
    if attack == "wrong-attest" and member:
        check(mine and mine[0]["next_state_hash"] not in ("", rr["next_state_hash"]),
              f"round {r}: its attestation {mine} is not a wrong hash")
    if attack == "copy-attest":
        check(all(not a["next_state_hash"] for a in mine), f"round {r}: its copied hash was taken")
    if attack in ("copy-verdicts", "skipper"):
        check(all(v["verdict"] == "sealed" for v in q["verdicts"]
                  if v["validator"] == cheat and v["target"] != cheat and not v["recheck"]),
              f"round {r}: a copied or skipped verdict was taken")
if attack != "dripper":
    check(len(skipped) >= 2, f"the cheater was skip-slashed in rounds {skipped} only")
else:
    skipped = skipped or [-1]  # it may pay nothing: its loss is its exclusion
cheater = os.environ["CHEATER"]
slashed = json.load(open(f"status-{cheater}.json"))["slashed_ngonka"]
# One skip slash per skipped duty: per round for the others, per check it
# held for the verdict skippers (a round after the last saved one may have
# skip-slashed it too).
duties = len(skipped)
if attack in ("copy-verdicts", "skipper"):
    duties = sum(1 for q in R for a in q["assignments"] if cheat in a["validators"])
if attack == "late-server":
    duties = sum(1 for q in R for a in q["assignments"] if a["target"] == cheat)
price = 45000 if attack == "grinder" else 1000  # withhold_slash, skip_slash
if attack != "dripper":
    check(slashed % price == 0 and price * duties <= slashed <= price * (duties + 8),
          f"the cheater paid {slashed}, not {price} for each of its {duties} skipped duties")
for n in hosts:
    s = json.load(open(f"status-{n}.json"))
    check(s["slashed_ngonka"] == 0, f"honest host {n} slashed: {s}")
def paid(n):
    return sum(int(x["amount"]) for x in json.load(open(f"rewards-{n}.json"))["amounts"])
print(f"byzantine: {attack} - caught_round {skipped[0]} cheater_payout {paid(cheater)} "
      f"honest_payout {paid(1)} cheater_slashed {slashed} honest_slashed 0")
print(f"ok: the cheater ({attack}) paid the skip slash in rounds {skipped} ({slashed} ngonka); "
      f"every round DONE, no honest member slashed")
' || fail "the rounds' records"
# shellcheck disable=SC2068 # the honest hosts are words
agreed_g ${honest[@]}
learned
echo "PASS"
