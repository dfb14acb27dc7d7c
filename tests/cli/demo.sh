#!/usr/bin/env bash
# gonka-diloco demo through the real binary: three workers and a validator
# train two rounds on gonka-localnet, each its own daemon. The demo exits 0;
# its --json summary has the documented keys and types; every round has an
# agreed 64-hex state hash and at least one attester; every participant is
# there with its role, nobody is slashed, each worker had tokens accepted
# and claimed a reward; the eval loss fell. Afterwards nothing it started
# runs (no process names its temporary home) and the home is gone; a demo
# killed by SIGKILL leaves nothing running either. Bad
# usage gets exit 2 and one "error:" line.
# Usage: demo.sh GONKA_DILOCO (gonka-localnet beside it)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0

check 2 "no workers" -- demo --workers 0
check 2 "no rounds" -- demo --rounds 0

"$bin" demo --workers 3 --validators 1 --rounds 2 --json out.json >demo.log 2>&1
rc=$?
home=$(sed -n 's/^demo: .*; home \(\/.*\) (removed at exit)$/\1/p' demo.log)
if [ "$rc" -ne 0 ]; then
  bad "demo exited $rc: $(tail -n 30 demo.log)"
else
  ok "demo exited 0: $(grep '^eval loss of G' demo.log)"
fi
grep -q "agreed state hash" demo.log || bad "no summary table: $(tail -n 20 demo.log)"
grep -q "^height .* round 1 .* commits [0-9]/3 " demo.log || bad "no progress line of round 1"
if [ -z "$home" ]; then
  bad "the demo did not print its home"
else
  if pgrep -f "$home" >/dev/null; then
    bad "still running after the demo: $(pgrep -af "$home")"
    pkill -9 -f "$home"
  else
    ok "nothing that names $home runs"
  fi
  [ -e "$home" ] && bad "$home was left behind" || ok "the home is removed"
fi

# A demo killed by SIGKILL runs no handler: its children stop by themselves
# (each asked for SIGTERM when its parent dies), promptly even in the middle
# of a duty: it is killed once a worker has started training, when the
# daemons are training or waiting for their transactions' blocks from a
# chain that is going away.
"$bin" demo --workers 2 --validators 1 --rounds 1 >kill.log 2>&1 &
dpid=$!
khome=
for _ in $(seq 1 600); do
  khome=$(sed -n 's/^demo: .*; home \(\/.*\) (removed at exit)$/\1/p' kill.log)
  [ -n "$khome" ] && [ "$(pgrep -fc "$khome")" -ge 4 ] &&
    grep -qs ": training round 0 " "$khome/w1.log" && break
  sleep 0.1
done
if [ -z "$khome" ] || [ "$(pgrep -fc "$khome")" -lt 4 ] ||
  ! grep -qs ": training round 0 " "$khome/w1.log"; then
  bad "the demo to kill did not start its chain and daemons, or training: $(tail -n 5 kill.log)"
  kill -9 "$dpid" 2>/dev/null
else
  kill -9 "$dpid"
  wait "$dpid" 2>/dev/null
  for _ in $(seq 1 100); do pgrep -f "$khome" >/dev/null || break; sleep 0.1; done
  if pgrep -f "$khome" >/dev/null; then
    bad "still running 10 s after the demo was killed: $(pgrep -af "$khome")"
    pkill -9 -f "$khome"
  else
    ok "a demo killed by SIGKILL leaves nothing running"
  fi
fi
[ -n "$khome" ] && rm -rf "$khome"

if [ -f out.json ]; then
  python3 - out.json <<'PY' || fail=1
import json, re, sys
j = json.load(open(sys.argv[1]))
errors = []
def want(cond, what):
    if not cond:
        errors.append(what)
for k, t in [("rounds", list), ("participants", list), ("loss_before", float),
             ("loss_after", float)]:
    want(isinstance(j.get(k), t), f"{k} is not a {t.__name__}: {j.get(k)!r}")
rounds = j.get("rounds", [])
want([r.get("round") for r in rounds] == [0, 1], f"rounds: {rounds}")
for r in rounds:
    want(isinstance(r.get("round"), int), f"round: {r}")
    want(isinstance(r.get("state_hash"), str) and re.fullmatch("[0-9a-f]{64}", r["state_hash"]),
         f"state_hash: {r}")
    want(isinstance(r.get("attesters"), int) and r["attesters"] >= 1, f"attesters: {r}")
    want(isinstance(r.get("participants"), int) and r["participants"] == 4, f"participants: {r}")
people = j.get("participants", [])
roles = sorted(p.get("role") for p in people)
want(roles == ["validator", "worker", "worker", "worker"], f"roles: {roles}")
want(len({p.get("address") for p in people}) == 4, "addresses are not four distinct ones")
for p in people:
    want(isinstance(p.get("address"), str) and p["address"].startswith("gonka1"), f"address: {p}")
    for k in ["tokens", "verdicts_failed", "reward_claimed_ngonka", "slashed_ngonka"]:
        want(isinstance(p.get(k), int) and p[k] >= 0, f"{k}: {p}")
    want(p.get("slashed_ngonka") == 0, f"slashed: {p}")
    want(p.get("verdicts_failed") == 0, f"a FAIL verdict: {p}")
    if p.get("role") == "worker":
        want(p.get("tokens", 0) > 0, f"no tokens accepted: {p}")
        want(p.get("reward_claimed_ngonka", 0) > 0, f"no reward claimed: {p}")
lb, la = j.get("loss_before"), j.get("loss_after")
want(isinstance(lb, float) and isinstance(la, float) and la < lb, f"loss {lb} -> {la}")
if errors:
    print("FAIL: --json:", "; ".join(errors))
    sys.exit(1)
print(f"ok: --json: {len(rounds)} rounds, {len(people)} participants, loss {lb:.4f} -> {la:.4f}")
PY
else
  bad "no --json file"
fi

[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
