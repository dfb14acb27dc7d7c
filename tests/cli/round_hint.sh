#!/usr/bin/env bash
# A round that has not opened, on gonka-localnet: `query round` says what it
# waits for and at which height it can open (members sealed for it, the
# previous round's end, an Inference phase with room for its windows), and
# --wait-window waits for one of its windows. Run 1 is the example spec's
# (76-block rounds, 100 ms blocks) on localnet's 100-block epochs: epoch 1's Inference
# phase starts at 42, where round 0 fits before the PoC at 120; round 1
# cannot fit before epoch 2's Inference phase at 142.
# Usage: round_hint.sh BIN_DIR
set -uo pipefail
bin=$(realpath "$1")
spec=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../../docs/examples/run-spec.json")
work=$(mktemp -d)
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
dg="$bin/gonka-diloco"

"$bin/gonka-localnet" init --home ln --accounts 2 --diloco-run "$spec" >/dev/null ||
  { echo "FAIL: init"; exit 1; }
"$bin/gonka-localnet" start --home ln --rpc 127.0.0.1:0 --rpc-addr-file rpc.addr \
  --block-time 100ms >node.log 2>&1 &
node_pid=$!
disown "$node_pid"
for _ in $(seq 1 100); do [ -s rpc.addr ] && break; sleep 0.05; done
[ -s rpc.addr ] || { echo "FAIL: node did not start: $(cat node.log)"; exit 1; }
node=(--node "http://$(cat rpc.addr)")
key=(--key ln/keys/account-1.key)

# No member yet: the hint names the seal a round waits for, and the height.
"$dg" query round 1 0 "${node[@]}" >out.txt 2>err.txt
rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "run 1 has no round 0" err.txt &&
   grep -q "no member has sealed a secret for round 0 (tx join-run, then tx randomness --run 1 --round 0 --seal-only)" err.txt &&
   grep -q "all 76 blocks of their windows end before the next PoC: round 0 can open at height 42" err.txt &&
   grep -q -- "--wait-window train" err.txt; then
  ok "no round yet: $(cat err.txt)"
else
  bad "query round 1 0 before any member (exit $rc): $(cat err.txt)"
fi

"$dg" tx join-run "${key[@]}" "${node[@]}" --run 1 --artifact-url http://127.0.0.1:9 \
  --hw-class cpu-x86 --collateral 2000000000ngonka >tx.txt 2>&1 &&
"$dg" tx randomness "${key[@]}" "${node[@]}" --run 1 --round 0 --seal-only >>tx.txt 2>&1 ||
  { echo "FAIL: join and seal: $(cat tx.txt)"; exit 1; }
"$dg" query round 1 0 "${node[@]}" >out.txt 2>err.txt
if ! grep -q "no member has sealed" err.txt && grep -q "round 0 can open at height 42" err.txt; then
  ok "a sealed member: the hint is the height alone"
else
  bad "query round 1 0 after the seal: $(cat err.txt)"
fi
# A round's transaction before the round opens carries the same hint.
h=$(printf '11%.0s' {1..32})
"$dg" tx commit-round "${key[@]}" "${node[@]}" --run 1 --round 0 --payload-root "$h" \
  --payload-leaves 5 --payload-bytes 20000 --transcript-root "$h" --segments 4 >out.txt 2>err.txt
rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <err.txt)" = 1 ] &&
   grep -q "round 0 is not run 1's current round: rounds open .* round 0 can open at height 42" err.txt; then
  ok "a commitment before the round opens: the error says when it can"
else
  bad "tx commit-round before round 0 (exit $rc): $(cat err.txt)"
fi
"$dg" query round 1 3 "${node[@]}" >out.txt 2>err.txt
grep -q "run 1's next round is 0, and rounds open one at a time" err.txt ||
  bad "query round 1 3: $(cat err.txt)"

# --wait-window: returns once the next block is in the commit window.
if "$dg" query round 1 0 "${node[@]}" --wait-window commit --wait-timeout 60s --json >round.json \
     2>err.txt && python3 - round.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w, h = r["round"]["windows"], r["height"]
assert w["train_start"] == 42, w
assert w["commit_start"] <= h + 1 < w["reveal_start"], (h, w)
PY
then
  ok "--wait-window commit returned at height $(python3 -c 'import json; print(json.load(open("round.json"))["height"])')"
else
  bad "--wait-window commit: $(cat err.txt)"
fi
"$dg" query round 1 0 "${node[@]}" --wait-window train >out.txt 2>err.txt
rc=$?
[ "$rc" = 1 ] && grep -q "round 0 of run 1 is past its train window" err.txt ||
  bad "--wait-window of a past window (exit $rc): $(cat err.txt)"
# Round 1 waits for round 0's end and then for epoch 2's Inference phase.
"$dg" query round 1 1 "${node[@]}" >out.txt 2>err.txt
if grep -q "round 0 runs until height 118" err.txt && grep -q "round 1 can open at height 142" err.txt; then
  ok "the next round waits for round 0's end and epoch 2's Inference phase"
else
  bad "query round 1 1 during round 0: $(cat err.txt)"
fi
"$dg" query round 1 0 "${node[@]}" --wait-window later >out.txt 2>err.txt
[ "$?" = 2 ] || bad "--wait-window with an unknown window: $(cat err.txt)"
exit $fail
