#!/usr/bin/env bash
# A memory budget that holds (docs/node.md, "Memory"): `sim --chain --model
# base` (124M parameters; two workers and a validator, each with its own
# trainer, in one process) under --memory-budget 512M ends its round DONE
# with nothing refused, and its peak resident memory (the JSON's
# peak_rss_bytes, the kernel's VmHWM) is at most the budget plus what the
# budget does not cover: the three trainers' buffers as `plan` counts them
# (weights, gradients, moments, activations and logits of one rank) and the
# process's own, which a run of the tiny model under the same budget
# measures. tests/cli/sim.sh shows a budget gives the bits of no budget.
# Usage: memory_budget.sh GONKA_DILOCO
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0
run=(sim --chain --workers 2 --validators 1 --rounds 1 --inner-steps 2 --segment-steps 1
     --batch 1 --seq 64 --data synthetic:markov:1 --memory-budget 512M --json)

"$bin" plan --model base --gpus 1 --gpu-mem 80G --seq 64 --batch 1 --shard optimizer \
  --precision fp32 --moments fp32 --recompute none --attention naive --json >plan.json ||
  bad "plan --model base"
timeout 120 "$bin" "${run[@]}" --model tiny >tiny.json 2>tiny.log || bad "sim --chain tiny: $(tail -3 tiny.log)"
timeout 540 "$bin" "${run[@]}" --model base >base.json 2>base.log || bad "sim --chain base: $(tail -3 base.log)"
if [ "$fail" = 0 ] && python3 - <<'EOF'
import json
plan, tiny, base = (json.load(open(f + ".json")) for f in ("plan", "tiny", "base"))
for run in (tiny, base):
    assert run["refused"] == 0 and len(run["rounds"]) == 1, run
g = plan["per_gpu"]  # the CPU trainer has no GPU workspace
trainer = g["weights"] + g["gradients"] + g["moments"] + g["activations"] + g["logits"]
budget = 512 << 20
allowed = budget + 3 * trainer + tiny["peak_rss_bytes"]
peak = base["peak_rss_bytes"]
mib = lambda b: "%.0f MiB" % (b / 2**20)
print("peak %s; allowed %s = budget %s + 3 trainers x %s + the process's own %s"
      % (mib(peak), mib(allowed), mib(budget), mib(trainer), mib(tiny["peak_rss_bytes"])))
assert 0 < peak <= allowed, (peak, allowed)
EOF
then
  ok "sim --chain --model base --memory-budget 512M: within the budget and the trainers' buffers"
else
  bad "sim --chain --model base --memory-budget 512M: $(tail -3 base.log)"
fi
exit "$fail"
