#!/usr/bin/env bash
# The commands on the cuda backend (label gpu; exit 77, a CTest skip, where
# it is not usable): version lists it usable with its hardware class, the
# same training run twice gives byte-identical checkpoints, two GPUs give
# one GPU's bytes (with optimizer or full sharding), bench train prints
# its figures, flash attention's kernels repeat their bits
# (gd-bench-attention) and sim runs a round.
# Runs on a GPU host, and on the CUDA emulator (GD_CUDA=EMU) everywhere.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0

usable=$("$bin" version --json | python3 -c 'import json,sys; print("cuda" in json.load(sys.stdin)["backends"]["usable"])')
if [ "$usable" != True ]; then
  echo "skipped: the cuda backend is not usable here"
  exit 77
fi
"$bin" version | grep -q "^  cuda  usable" && ok "version: cuda usable" || bad "version: $("$bin" version)"
# The class names what decides the bits: the GPU and its SM count, the
# driver, CUDA and cuBLAS, the kernels' sources and the binary.
id1=$("$bin" node hardware-class --backend cuda --json) || bad "node hardware-class --backend cuda"
id2=$("$bin" node hardware-class --backend cuda --json)
python3 -c '
import json, re, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a == b, (a, b)
i = a["identity"]
for key in ["gpu=", "sm=", "sms=", "driver=", "cuda=", "cublas=", "kernels="]:
    assert key in i, (key, i)
assert re.search(r"binary=[0-9a-f]{16}$", i), i
assert a["hardware_class"].startswith("cuda-"), a
' "$id1" "$id2" && ok "the cuda class: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["identity"])' "$id1")" ||
  bad "the cuda identity: $id1"

common=(--backend cuda --model tiny --data synthetic:markov:3 --batch 4 --seq 32 --lr 3e-3
        --steps 3 --warmup 1)
for i in 1 2; do
  out=$("$bin" train "${common[@]}" --out "run$i.safetensors" 2>&1) || bad "train run $i: $out"
done
grep -q "backend cuda" <<<"$out" || bad "the banner does not name the cuda backend: $out"
if cmp -s run1.safetensors run2.safetensors && cmp -s run1.optim.safetensors run2.optim.safetensors; then
  ok "two runs on the GPU, byte-identical checkpoints"
else
  bad "two runs on the GPU differ"
fi

# Two ranks where two GPUs exist: the same bytes as one (the step's bits do
# not depend on the number of GPUs).
if out=$("$bin" train "${common[@]}" --gpus 2 --out two.safetensors 2>&1); then
  if cmp -s run1.safetensors two.safetensors && cmp -s run1.optim.safetensors two.optim.safetensors; then
    ok "--gpus 2 gives --gpus 1's bytes"
  else
    bad "--gpus 2 differs from --gpus 1"
  fi
elif grep -q "GPU 1 does not exist" <<<"$out"; then
  ok "one GPU here: --gpus 2 is refused ($(grep error <<<"$out"))"
else
  bad "--gpus 2: $out"
fi
# Full sharding (each GPU a shard of the model, a layer gathered at a
# time), on one GPU with recomputation and the moments in host memory: the
# same bytes again.
for gpus in 1 2; do
  extra=()
  [ $gpus = 1 ] && extra=(--recompute full --offload optimizer)
  if out=$("$bin" train "${common[@]}" --gpus $gpus --shard full "${extra[@]}" --out "full$gpus.safetensors" 2>&1); then
    if cmp -s run1.safetensors "full$gpus.safetensors" &&
       cmp -s run1.optim.safetensors "full$gpus.optim.safetensors"; then
      ok "--gpus $gpus --shard full ${extra[*]} gives --gpus 1's bytes"
    else
      bad "--gpus $gpus --shard full differs from --gpus 1"
    fi
  elif [ $gpus = 2 ] && grep -q "GPU 1 does not exist" <<<"$out"; then
    ok "one GPU here: --gpus 2 --shard full is refused"
  else
    bad "--gpus $gpus --shard full: $out"
  fi
done

if j=$("$bin" bench train --backend cuda --model tiny --batch 4 --seq 32 --steps 2 --json) &&
   python3 -c 'import json,sys; j=json.loads(sys.argv[1])
assert j["backend"] == "cuda" and j["tokens_per_s"] > 0 and j["gpus"] == 1
assert j["mfu"] is None or 0 < j["mfu"] < 1
g = j["gemm_tflops"]  # the cuBLAS ceiling replaces OpenBLAS sgemm on a GPU
assert j["sgemm_gflops"] is None and g["fp32_operands"] > 0 and g["bf16_operands"] > 0' "$j"; then
  ok "bench train --backend cuda: $(tr -d ' \n' <<<"$j" | cut -c1-120)"
else
  bad "bench train --backend cuda: $j"
fi

# Flash attention's kernels alone (tensor cores at head dim 128), twice:
# the benchmark exits 1 unless the second run gives the first run's bits.
bench_attention=$(dirname "$bin")/gd-bench-attention
if [ -x "$bench_attention" ]; then
  if j=$("$bench_attention" --backend cuda --seq 100 --heads 4 --kv-heads 2 --head-dim 128 \
         --repeat 1 --json) &&
     python3 -c 'import json,sys; j=json.loads(sys.argv[1])
assert j["backend"] == "cuda" and j["same_bits"] is True and j["forward_ms"] > 0' "$j"; then
    ok "gd-bench-attention --backend cuda: the same bits run to run"
  else
    bad "gd-bench-attention --backend cuda: $j"
  fi
fi

if out=$("$bin" sim --backend cuda --model tiny --data synthetic:markov:1 --rounds 1 --workers 2 \
         --inner-steps 2 --batch 2 --seq 16 2>&1); then
  ok "sim --backend cuda: $(tail -1 <<<"$out")"
else
  bad "sim --backend cuda: $out"
fi
exit $fail
