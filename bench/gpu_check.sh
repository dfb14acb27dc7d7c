#!/usr/bin/env bash
# The GPU checks in one run, for a machine with an NVIDIA GPU, CUDA, CMake
# and a C compiler: builds the project with the CUDA backend, runs the tests
# labelled gpu (the cross-backend test, run-to-run bit identity, full
# sharding against one rank), the training benchmark on the CUDA backend
# and PyTorch's on the same GPU, a stack of the 32B shape's layers fully
# sharded over every GPU with the whole model's step projected, in fp32
# and in bf16, and writes every log and figure under OUT, the device's name
# first; then flash attention's kernels alone and in a step at 4,096
# tokens. Sized for ten minutes on one H100 or H200.
#
# Usage: bench/gpu_check.sh [--emulate] [OUT]    (default: $OUT, else ./gpu-check)
# --emulate rehearses the whole run on a machine without a GPU: the CUDA
# emulator's build (-DGD_CUDA=EMU, tests/cuda_emu) and the tiny model, so
# that a mistake in this script never costs GPU time. Its figures mean
# nothing.
# Where the machine lacks the project's Debian libraries, carry the .debs
# that scripts/gpu_debs downloads (build-gpu-debs/); they are unpacked into
# a private prefix, nothing is installed.
set -uo pipefail
cd "$(dirname "$0")/.."
emulate=0
if [ "${1:-}" = "--emulate" ]; then
  emulate=1
  shift
fi
out=${1:-${OUT:-gpu-check}}
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
step() { # step NAME CMD...: runs CMD with its output in OUT/NAME.log
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  note "$(printf '%-22s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")"
  return $rc
}

# The last JSON value in a log, compact ("null" when there is none):
# gonka-diloco prints it indented over many lines after its progress.
last_json() {
  python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines() if len(sys.argv) > 1 else []
for i in reversed(range(len(lines))):
    if lines[i].startswith("{"):
        try:
            print(json.dumps(json.loads("\n".join(lines[i:]))))
            break
        except ValueError:
            pass
else:
    print("null")
PY
}

nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || note "nvidia-smi: not available"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
note "device: ${device:-unknown} (${gpus:-0} GPUs)"

cmake_extra=()
if [ -d build-gpu-debs ] && ! pkg-config --exists jansson 2>/dev/null; then
  prefix=$PWD/build-gpu-prefix
  mkdir -p "$prefix"
  for d in build-gpu-debs/*.deb; do dpkg-deb -x "$d" "$prefix"; done
  lib=$prefix/usr/lib/x86_64-linux-gnu
  export PKG_CONFIG_SYSROOT_DIR=$prefix
  export PKG_CONFIG_PATH=$lib/pkgconfig:$prefix/usr/share/pkgconfig
  export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PATH=$prefix/usr/bin:$PATH
  cmake_extra+=("-DCMAKE_PREFIX_PATH=$prefix/usr" "-DOPENSSL_ROOT_DIR=$prefix/usr"
                "-DGD_BIP39_WORDLIST=$prefix/usr/lib/python3/dist-packages/mnemonic/wordlist/english.txt")
  note "dependencies: unpacked $(ls build-gpu-debs/*.deb | wc -l) packages into $prefix"
fi
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

build=build-gpu
# The GPU's own architecture: nvidia-smi's compute capability ("9.0" ->
# 90) where it says, else CMake's "native" (CMake 3.24 and later).
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 |
       tr -d ' .')
[[ "$arch" =~ ^[0-9]+$ ]] || arch=native
cuda=(-DGD_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$arch")
model=small det_shape=(--batch 8 --seq 256) shapes=("small 32 256" "base 8 1024")
# Two layers of the 32B shape (docs/examples/qwen2.5-32b-like.json) at
# 4,096 tokens: about 2.5B parameters with the embedding and the head.
stack=(--model-config docs/examples/qwen2.5-32b-like.json --layers 2 --batch 1 --seq 4096)
# Flash attention's kernels alone at the 32B shape's heads (40 query, 8
# key/value, 128 wide) and 4,096 tokens.
attn_shape=(--seq 4096 --heads 40 --kv-heads 8 --head-dim 128 --repeat 3)
if [ "$emulate" -eq 1 ]; then
  build=build-gpu-emu
  cuda=(-DGD_CUDA=EMU)
  model=tiny det_shape=(--batch 4 --seq 32) shapes=("tiny 4 32")
  stack=(--model tiny --layers 1 --batch 1 --seq 32)
  attn_shape=(--seq 100 --heads 4 --kv-heads 2 --head-dim 128 --repeat 1)
  gpus=2
  export OPENBLAS_NUM_THREADS=1 # every kernel thread is a fiber of one host thread
  note "rehearsal on the CUDA emulator: the flow is checked, the figures mean nothing"
fi
note "build: $build ${cuda[*]}"
step configure cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" \
  "${cmake_extra[@]}" || { note "configure failed"; exit 1; }
step build cmake --build "$build" -j "$(nproc)" --target gonka-diloco test_backend_ops \
  test_train_gpu test_round_gpu test_matmul_lt gd-bench-attention ||
  { note "build failed"; exit 1; }
bin=$build/bin/gonka-diloco
"$bin" version --json >"$out/version.json" 2>&1
note "version: $(tr -d ' \n' <"$out/version.json")"

# The cross-backend test: every op, a training step, a round, the aggregate.
step backend_ops "$build/tests/test_backend_ops" cuda
grep -E '^(FAIL|ok)' "$out/backend_ops.log" | awk '{print $1}' | sort | uniq -c | tee -a "$summary"

# The GEMMs through cuBLASLt: each form against a host reference, the same
# bits twice, the algorithm chosen once per shape.
step matmul_lt "$build/tests/test_matmul_lt"
grep -E '^(FAIL|ok)' "$out/matmul_lt.log" | tee -a "$summary"

# The trainer on GPUs: run-to-run bits, the collective (NCCL) over one GPU,
# and with two or more the two-rank step against one rank's.
step train_gpu "$build/tests/test_train_gpu"
grep -E '^(FAIL|ok)|collective' "$out/train_gpu.log" | tee -a "$summary"

# The round engine as a GPU host's daemon runs it: a round repeats to its
# bytes, a validator on the GPU passes it (the CPU's fails it), and the
# aggregate is the CPU's.
step round_gpu "$build/tests/test_round_gpu"
grep -E '^(FAIL|ok)|on the CPU' "$out/round_gpu.log" | tee -a "$summary"

# The commands on the GPU: run to run, --gpus 2 against 1, bench, sim.
step cli_train_cuda tests/cli/train_cuda.sh "$bin"
grep -E '^(FAIL|ok)' "$out/cli_train_cuda.log" | tee -a "$summary"

# Run-to-run bit identity on one GPU: the same run twice, the same bytes.
for i in 1 2; do
  step "determinism_$i" "$bin" train --backend cuda --model "$model" --data synthetic:markov:1 \
    --steps 5 "${det_shape[@]}" --out "$out/det$i.safetensors"
done
if cmp -s "$out/det1.safetensors" "$out/det2.safetensors" &&
   cmp -s "$out/det1.optim.safetensors" "$out/det2.optim.safetensors"; then
  note "determinism: two runs on the GPU, byte-identical checkpoints"
else
  note "determinism: FAIL, the two runs differ"
fi

# Throughput: ours on the CUDA backend, PyTorch (bf16 autocast, fused
# attention) on the same GPU and model, and the ratio.
for shape in "${shapes[@]}"; do
  set -- $shape
  step "bench_$1" "$bin" bench train --backend cuda --model "$1" --batch "$2" --seq "$3" \
    --steps 5 --profile --json
  "$bin" train --backend cpu --model "$1" --data synthetic:markov:1 --steps 1 --batch 1 \
    --seq 16 --out "$out/$1.safetensors" >/dev/null 2>&1
  step "torch_$1" python3 bench/torch_llama.py bench --device cuda --checkpoint \
    "$out/$1.safetensors" --batch "$2" --seq "$3" --steps 5
  python3 - "$out/bench_$1.log" "$out/torch_$1.log" "$1" <<'PY' | tee -a "$summary"
import json, sys
def last_json(path):
    # The last JSON value in the log: from the last line that opens one
    # (gonka-diloco prints it indented over many lines) to the end.
    lines = open(path).read().splitlines()
    for i in reversed(range(len(lines))):
        if lines[i].startswith("{"):
            try:
                return json.loads("\n".join(lines[i:]))
            except ValueError:
                pass
    return None
ours, theirs = last_json(sys.argv[1]), last_json(sys.argv[2])
if ours is None:
    print(f"{sys.argv[3]}: no figures (see the logs)")
else:
    mfu = ours.get("mfu")
    line = (f"{sys.argv[3]}: ours {ours['tokens_per_s']:.0f} tok/s (MFU "
            f"{'n/a' if mfu is None else f'{100 * mfu:.1f}%'})")
    if theirs is None:
        line += ", PyTorch: no figure (see its log)"
    else:
        line += (f", PyTorch {theirs['tokens_per_s']:.0f} tok/s, ratio "
                 f"{ours['tokens_per_s'] / theirs['tokens_per_s']:.2f}")
    print(line)
gemm = (ours or {}).get("gemm_tflops")
if gemm:
    print(f"{sys.argv[3]}: cuBLASLt on the MLP's shape: {gemm['fp32_operands']:.0f} TFLOP/s with "
          f"fp32 operands (the backend's), {gemm['bf16_operands']:.0f} with bf16 operands")
# Where our step's time goes (bench train --profile: each op synchronized).
prof = (ours or {}).get("profile")
if prof:
    print(f"{sys.argv[3]}: profiled step {prof['step_ms']:.1f} ms, outside the ops "
          f"{prof['outside_ms']:.1f} ms; the most costly ops:")
    for e in prof["ops"][:12]:
        shape = f"{e['in_dim']}x{e['out_dim']}" if e["in_dim"] else ""
        rate = "" if e["gflops"] is None else f" {e['gflops'] / 1e3:.1f} TFLOP/s"
        print(f"  {e['op']:<24} {shape:<11} {e['ms']:8.2f} ms {100 * e['share']:5.1f}%{rate}")
PY
done
# The 32B shape's layers, fully sharded over every GPU with recomputation:
# ms a layer, the whole model's step projected (arithmetic on the measured
# layer), MFU, and what plan budgets a GPU for the stack.
[ "${gpus:-0}" -ge 1 ] || gpus=1
step bench_32b_stack "$bin" bench train --backend cuda --gpus "$gpus" "${stack[@]}" --steps 2 \
  --warmup 1 --shard full --recompute full --json
python3 - "$(last_json "$out/bench_32b_stack.log")" <<'PY' | tee -a "$summary"
import json, sys
j = json.loads(sys.argv[1])
if j is None:
    print("32B stack: no figures (see its log)")
else:
    mfu, proj = j.get("mfu"), j.get("projected_step_ms")
    print("32B stack: %d of %d layers on %d GPU(s), shard %s, recompute %s: %.1f ms a layer, "
          "step %.0f ms, MFU %s; the whole model's step projected at %s (arithmetic); plan: "
          "%.1f GiB a GPU"
          % (j["layers"], j["model_layers"], j["gpus"], j["shard"], j["recompute"],
             j["ms_per_layer"], j["step_ms"], "n/a" if mfu is None else "%.1f%%" % (100 * mfu),
             "n/a" if proj is None else "%.1f s" % (proj / 1e3),
             (j.get("plan_gpu_bytes") or 0) / 2**30))
    if j.get("units_gathered_ahead_per_step") is not None:
        print("32B stack, gathers a step: %.1f MB, %.0f units ahead (beside the ops), %.0f on "
              "demand" % (j["gathered_bytes_per_step"] / 1e6, j["units_gathered_ahead_per_step"],
                          j["units_gathered_on_demand_per_step"]))
    b = j.get("boundary_read")
    if b:  # a segment boundary's read of the stack's state, hashed
        print("32B stack, boundary read of %.2f GB: %.3f s by the ranks at once into pinned "
              "memory (%.1f GB/s), %.3f s in order through ordinary memory"
              % (b["bytes"] / 1e9, b["by_ranks_s"], b["bytes"] / b["by_ranks_s"] / 1e9,
                 b["in_order_s"]))
PY
# The same stack in bf16 (activations and AdamW's moments in 16 bits, the
# weights the ops read rounded): its step against fp32's above, and plan's
# figure for it.
step bench_32b_stack_bf16 "$bin" bench train --backend cuda --gpus "$gpus" "${stack[@]}" \
  --steps 2 --warmup 1 --shard full --recompute full --precision bf16 --moments bf16 --json
python3 - "$(last_json "$out/bench_32b_stack_bf16.log")" <<'PY' | tee -a "$summary"
import json, sys
j = json.loads(sys.argv[1])
if j is None:
    print("32B stack, bf16: no figures (see its log)")
else:
    print("32B stack, bf16 (moments bf16): %.1f ms a layer, step %.0f ms; plan: %.1f GiB a GPU"
          % (j["ms_per_layer"], j["step_ms"], (j.get("plan_gpu_bytes") or 0) / 2**30))
PY
# Flash attention's kernels (tensor cores at head dim 128) alone: forward
# and backward time, TFLOP/s, and every run's bits against the first's.
step bench_attention timeout 120 "$build/bin/gd-bench-attention" --backend cuda \
  "${attn_shape[@]}" --json
python3 - "$(last_json "$out/bench_attention.log")" <<'PY' | tee -a "$summary"
import json, sys
j = json.loads(sys.argv[1])
if j is None:
    print("flash attention kernels: no figure (see bench_attention.log)")
else:
    print("flash attention kernels at T %d, heads %d/%d x %d: forward %.1f ms (%.1f TFLOP/s), "
          "backward %.1f ms (%.1f TFLOP/s), run to run the same bits: %s"
          % (j["seq"], j["heads"], j["kv_heads"], j["head_dim"], j["forward_ms"],
             j["forward_tflops"], j["backward_ms"], j["backward_tflops"],
             "yes" if j["same_bits"] else "NO"))
PY
# Flash attention in a training step at 4,096 tokens, head dim 128 in the
# 32B shape: the stack's step against naive attention's above; bounded, so
# a slow kernel costs at most two minutes.
flash=("${stack[@]}")
[ "$emulate" -eq 1 ] || flash=(--model-config docs/examples/qwen2.5-32b-like.json --layers 1 --batch 1 --seq 4096)
step bench_flash timeout 120 "$bin" bench train --backend cuda "${flash[@]}" --steps 1 --warmup 0 \
  --attention flash --json
python3 - "$(last_json "$out/bench_flash.log")" <<'PY' | tee -a "$summary"
import json, sys
j = json.loads(sys.argv[1])
if j is None:
    print("flash attention: no figure (see bench_flash.log)")
else:
    print("flash attention: %d layer(s) at %d tokens, step %.0f ms (%.0f ms a layer)"
          % (j["layers"], j["seq"], j["step_ms"], j["ms_per_layer"]))
PY
note "logs in $out"
