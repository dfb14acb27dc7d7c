#!/usr/bin/env bash
# A memory budget that holds across processes (docs/node.md, "Memory"):
# two workers and a validator, each its own `gonka-diloco run` with
# node.yaml memory_budget 512M, play round 0 of a run of the `base` model
# (124M parameters; H = 2, K = 1, batch 1, sequences of 64) on
# gonka-localnet until it is DONE with every check passed, nobody slashed
# and every host holding the agreed G_1. Each daemon's peak resident memory (the kernel's
# VmHWM, read while it still runs) is then at most the budget plus its
# trainer's buffers as `plan` counts them (weights, gradients, moments,
# activations and logits of one rank) plus what the same process held
# before round 0 opened beside its trainer's initialised weights.
# Usage: node_budget.sh BIN_DIR
# Blocks of 500 ms, and windows long enough for three 124M-parameter
# daemons sharing two cores: each check fetches a 1.5 GB segment start,
# and all three aggregate and fsync a 1 GB G' at once.
windows="{'train': 100, 'commit': 12, 'reveal': 6, 'verify': 160, 'open': 8, 'dispute': 60,
          'dispute_open': 8, 'attest': 100, 'attest_open': 6}"
accounts=4
epoch_length=700
checks=1
block_time=500ms
model_args="--model base --inner-steps 2 --segment-steps 1 --batch 1"
memory_budget=512M
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node_lib.sh" "$1"
hwm() { # hwm N: host N's peak resident memory so far, in bytes
  local kib
  kib=$(awk '/^VmHWM:/ {print $2}' "/proc/${HOSTPID[$1]}/status") && [ -n "$kib" ] ||
    fail "no VmHWM for host $1"
  echo $((kib * 1024))
}
start_host 1 worker
start_host 2 worker
start_host 3 validator
until_height 20
declare -A BEFORE
for n in 1 2 3; do BEFORE[$n]=$(hwm "$n"); done
"$dg" plan --model base --gpus 1 --gpu-mem 80G --seq 64 --batch 1 --shard optimizer \
  --precision fp32 --moments fp32 --recompute none --attention naive --json >plan.json ||
  fail "plan --model base"
read -r trainer weights < <(py 'import json; g = json.load(open("plan.json"))["per_gpu"]
print(g["weights"] + g["gradients"] + g["moments"] + g["activations"] + g["logits"], g["weights"])')
phase=
for _ in $(seq 1 1200); do
  alive
  phase=$("$dg" query round 1 0 --node "$node" --json 2>/dev/null |
    py 'import json,sys; print(json.load(sys.stdin)["round"]["phase"])' 2>/dev/null)
  [ "$phase" = done ] || [ "$phase" = void ] && break
  sleep 0.5
done
[ "$phase" = done ] || fail "round 0 ended ${phase:-nowhere}"
"$dg" query round 1 0 --node "$node" --json >round0.json || fail "query round 0"
py '
import json
r = json.load(open("round0.json"))
assert len(r["commitments"]) == 2, r["commitments"]
outcomes = [a["outcome"] for a in r["assignments"]]
assert outcomes and all(o == "passed" for o in outcomes), outcomes
assert not any(m["skip_slashed"] for m in r["round"]["members"]), r["round"]["members"]
' || fail "round 0: $(cat round0.json)"
want=$(py 'import json; print(json.load(open("round0.json"))["round"]["next_state_hash"])')
for n in 1 2 3; do
  for _ in $(seq 1 200); do [ -f "h$n/state/run-1/round-1/global.gdgs" ] && break; sleep 0.2; done
  [ "$(own_g "$n" 1)" = "$want" ] || fail "host $n holds no agreed G_1"
done
ok "round 0 of base DONE: 2 commitments, every check passed, nobody slashed, every host holds G_1"
for n in 1 2 3; do echo "$n ${BEFORE[$n]} $(hwm "$n")"; done >peaks.txt
TRAINER=$trainer WEIGHTS=$weights py '
import os
trainer, weights, budget = int(os.environ["TRAINER"]), int(os.environ["WEIGHTS"]), 512 << 20
for line in open("peaks.txt"):
    n, before, peak = (int(x) for x in line.split())
    # Before round 0 a worker holds its trainer initialised: its weights
    # are counted once, in the trainer.
    own = max(0, before - weights)
    allowed = budget + trainer + own
    print("host %d: peak %d MiB; allowed %d MiB = 512 MiB + trainer %d MiB + %d MiB of its own"
          % (n, peak >> 20, allowed >> 20, trainer >> 20, own >> 20))
    assert 0 < peak <= allowed, n
' || fail "a daemon went past memory_budget 512M and its trainer's buffers"
ok "every daemon stayed within memory_budget 512M and its trainer's buffers"
