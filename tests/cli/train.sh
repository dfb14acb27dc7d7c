#!/usr/bin/env bash
# The trainer commands end to end through the real binary: train writes a
# checkpoint and prints progress and a final loss; eval scores it (--json),
# on the data the checkpoint records or on --eval-data; resume continues to the same bits as an uninterrupted run; bench train
# prints its figures; bad input gets one "error:" line and exit 1 or 2.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

common=(--model tiny --data synthetic:markov:5 --batch 4 --seq 32 --threads 2 --lr 3e-3)
if out=$("$bin" train "${common[@]}" --steps 6 --log-every 2 --out a.safetensors); then
  grep -q "^step      2/6 | loss" <<<"$out" || bad "no progress line: $out"
  grep -q "^final loss [0-9.]* after 6 steps" <<<"$out" || bad "no final loss: $out"
  [ -s a.safetensors ] && [ -s a.optim.safetensors ] || bad "checkpoint files missing"
  ok "train: $(grep '^final' <<<"$out")"
else
  bad "train failed: $out"
fi

# Three steps, then resume to six: the same checkpoint bytes as six at once.
"$bin" train "${common[@]}" --steps 3 --schedule-steps 6 --warmup 0 --out b.safetensors >/dev/null &&
"$bin" train --resume b.safetensors --data synthetic:markov:5 --steps 6 --threads 1 \
  --out c.safetensors >/dev/null || bad "resume run failed"
"$bin" train "${common[@]}" --steps 6 --warmup 0 --out d.safetensors >/dev/null || bad "straight run"
if cmp -s c.safetensors d.safetensors && cmp -s c.optim.safetensors d.optim.safetensors; then
  ok "3 steps + resume to 6 (1 thread) == 6 steps (2 threads), byte for byte"
else
  bad "resumed checkpoint differs from the uninterrupted one"
fi
# Flash attention (and the chunked cross-entropy): other bits than naive
# attention, kept by a checkpoint, so 3 steps + resume to 6 == 6 steps.
"$bin" train "${common[@]}" --steps 6 --warmup 0 --attention flash --out fl6.safetensors >/dev/null &&
"$bin" train "${common[@]}" --steps 3 --schedule-steps 6 --warmup 0 --attention flash \
  --out fl3.safetensors >/dev/null &&
"$bin" train --resume fl3.safetensors --data synthetic:markov:5 --steps 6 --threads 1 \
  --out fl3to6.safetensors >/dev/null || bad "flash runs failed"
if cmp -s fl6.safetensors fl3to6.safetensors && ! cmp -s fl6.safetensors d.safetensors; then
  ok "--attention flash: resumes byte for byte, and differs from naive attention"
else
  bad "--attention flash: a resumed run differs, or flash gives naive's bytes"
fi
# bf16 storage and bf16 moments: other bits again, kept by the checkpoint's
# metadata, so 3 steps + resume to 6 == 6 steps; a bad name is a usage error.
bf=(--precision bf16 --moments bf16)
"$bin" train "${common[@]}" --steps 6 --warmup 0 "${bf[@]}" --out bf6.safetensors >/dev/null &&
"$bin" train "${common[@]}" --steps 3 --schedule-steps 6 --warmup 0 "${bf[@]}" \
  --out bf3.safetensors >/dev/null &&
"$bin" train --resume bf3.safetensors --data synthetic:markov:5 --steps 6 --threads 1 \
  --out bf3to6.safetensors >/dev/null || bad "bf16 runs failed"
if cmp -s bf6.safetensors bf3to6.safetensors && cmp -s bf6.optim.safetensors bf3to6.optim.safetensors &&
  ! cmp -s bf6.safetensors d.safetensors && grep -aq '"precision":"bf16"' bf6.optim.safetensors; then
  ok "--precision bf16 --moments bf16: resumes byte for byte, and differs from fp32"
else
  bad "--precision bf16: a resumed run differs, or bf16 gives fp32's bytes"
fi
"$bin" train "${common[@]}" --steps 1 --precision fp16 --out x.safetensors >/dev/null 2>&1
[ $? -eq 2 ] && ok "--precision fp16: usage error" || bad "--precision fp16 was not exit 2"
# Full sharding (a shard of the model a rank, gathered a layer at a time)
# with recomputation and the moments in host memory, with micro-batches and
# an evaluation: the same bytes.
"$bin" train "${common[@]}" --steps 6 --warmup 0 --micro-batch 2 --eval-batches 1 \
  --out e1.safetensors >/dev/null || bad "micro-batched run"
if "$bin" train "${common[@]}" --steps 6 --warmup 0 --micro-batch 2 --eval-batches 1 \
     --shard full --recompute full --offload optimizer --out e2.safetensors >/dev/null &&
   cmp -s e1.safetensors e2.safetensors && cmp -s e1.optim.safetensors e2.optim.safetensors; then
  ok "--shard full --recompute full --offload optimizer == the default, byte for byte"
else
  bad "--shard full differs from the default"
fi

# Output redirected to a file is not held back: a killed run leaves its
# banner and progress lines in the log, and a long evaluation says how far
# it is.
if killed_log "^batch " 30 long.log -- train "${common[@]}" --steps 100000 --log-every 100000 --out long.safetensors &&
   grep -q "^model: " long.log; then
  ok "a killed train leaves its banner in a redirected log before its first step line"
else
  bad "killed train left no progress in its log: $(head -c 300 long.log)"
fi
# Each step line is flushed too: killed once one is in the log, the log
# holds it whole.
if killed_log "^step  *1/100000 | loss [0-9.]* | .* ms/step$" 30 steps.log -- train "${common[@]}" --steps 100000 --log-every 1 --out steps.safetensors; then
  ok "a killed train leaves each step line in a redirected log: $(grep -m1 '^step' steps.log)"
else
  bad "a killed train left no step line in its log: $(head -c 400 steps.log)"
fi
if killed_log "^eval batch [0-9]*/100000 | " 30 evlog.log -- train "${common[@]}" --steps 1 --eval-batches 100000 --out ev.safetensors; then
  ok "a long evaluation prints progress: $(grep -m1 '^eval batch' evlog.log)"
else
  bad "a long evaluation printed no progress: $(tail -c 300 evlog.log)"
fi
check 2 "absurd --eval-batches" -- train "${common[@]}" --steps 1 --eval-batches 100000000 --out x.safetensors
grep -q "at most 100000" err.txt || bad "the limit is not named: $(cat err.txt)"
check 2 "absurd eval --batches" -- eval --checkpoint a.safetensors --batches 100000000
grep -q "1..100000" err.txt || bad "the limit is not named: $(cat err.txt)"
# Past the stored schedule's end (3 steps here) a resume must say whether to
# stretch or keep it; either way it says where it resumed.
"$bin" train "${common[@]}" --steps 3 --out g.safetensors >/dev/null || bad "3-step run failed"
check 2 "resume past the schedule's end" -- train --resume g.safetensors --data synthetic:markov:5 --steps 6 --out h.safetensors
grep -q -- "schedule ends at step 3.*--schedule-steps 6 to stretch it.*--schedule-steps 3 to keep it" err.txt ||
  bad "the refusal does not offer both choices: $(cat err.txt)"
if out=$("$bin" train --resume g.safetensors --data synthetic:markov:5 --steps 6 --schedule-steps 6 \
         --log-every 1 --out h.safetensors 2>/dev/null) &&
   j=$("$bin" train --resume g.safetensors --data synthetic:markov:5 --steps 6 --schedule-steps 3 \
       --out i.safetensors --json 2>/dev/null); then
  grep -q "^resumed from step 3 of g.safetensors" <<<"$out" || bad "no resume line: $out"
  grep -q "schedule 6 steps" <<<"$out" || bad "the stretched schedule is not shown: $out"
  grep -q "^step      4/6 | loss [0-9.]* | lr 3.00e-04" <<<"$out" &&
    bad "the stretched schedule still runs at the minimum rate: $out"
  [ "$(field "$j" resumed_from)" = 3 ] || bad "train --json lacks resumed_from: $j"
  ok "resume past the schedule: stretched with --schedule-steps 6, kept with 3"
else
  bad "resume with --schedule-steps failed: $out $j"
fi

if j=$("$bin" eval --checkpoint a.safetensors --data synthetic:markov:5 --batches 3 --batch 4 \
       --seq 32 --json); then
  grep -q '"loss": [0-9.]*' <<<"$j" && grep -q '"tokens": 384' <<<"$j" || bad "eval json: $j"
  ok "eval --json: $(tr -d '\n ' <<<"$j")"
else
  bad "eval failed: $j"
fi

# Held-out evaluation: --eval-data moves train's eval loss and names the
# source; eval defaults to the data the checkpoint records, and --eval-data
# (or --data, not both) overrides it.
if j=$("$bin" train "${common[@]}" --steps 6 --eval-batches 2 --out e.safetensors --json) &&
   k=$("$bin" train "${common[@]}" --steps 6 --eval-batches 2 --eval-data synthetic:markov:6 \
       --out f.safetensors --json); then
  [ "$(field "$j" eval_data)" = synthetic:markov:5 ] && [ "$(field "$k" eval_data)" = synthetic:markov:6 ] ||
    bad "train --json eval_data: $j $k"
  [ "$(field "$j" eval_loss)" != "$(field "$k" eval_loss)" ] || bad "--eval-data left the eval loss: $k"
  cmp -s e.safetensors f.safetensors || bad "--eval-data changed the training"
  # A token count is an integer (6 steps of 4 x 32), not a float.
  python3 -c 'import json,sys; t=json.loads(sys.argv[1])["tokens"]; assert type(t) is int and t == 768, t' "$j" ||
    bad "train --json tokens is not the integer 768: $j"
  ok "train --eval-data: eval loss $(field "$j" eval_loss) -> $(field "$k" eval_loss)"
else
  bad "train --eval-data failed: $j $k"
fi
ev=(eval --checkpoint e.safetensors --batches 2 --batch 4 --seq 32)
if out=$("$bin" "${ev[@]}") && a=$("$bin" "${ev[@]}" --json) &&
   b=$("$bin" "${ev[@]}" --data synthetic:markov:5 --json) &&
   c=$("$bin" "${ev[@]}" --eval-data synthetic:markov:6 --json); then
  grep -q "^data: synthetic:markov:5 (recorded in the checkpoint): synthetic Markov" <<<"$out" ||
    bad "eval does not say which data it used: $out"
  [ "$(field "$a" eval_data)" = synthetic:markov:5 ] && [ "$(field "$a" eval_data_from_checkpoint)" = True ] &&
  [ "$(field "$b" eval_data_from_checkpoint)" = False ] && [ "$(field "$c" eval_data)" = synthetic:markov:6 ] ||
    bad "eval --json eval_data: $a $b $c"
  [ "$(field "$a" loss)" = "$(field "$b" loss)" ] && [ "$(field "$a" loss)" = "$(field "$j" eval_loss)" ] ||
    bad "the recorded data is not the training data: $a $b $j"
  [ "$(field "$c" loss)" = "$(field "$k" eval_loss)" ] || bad "eval --eval-data disagrees with train: $c $k"
  ok "eval: recorded data $(field "$a" loss), --eval-data $(field "$c" loss)"
else
  bad "eval with the recorded data or --eval-data failed: $out $a $b $c"
fi

# Without --seq, eval scores at the length the checkpoint was trained at
# (32 here, not the default 256) and says so; a checkpoint that records
# none keeps the default.
cp a.safetensors lone.safetensors # no optimizer state beside it
if out=$("$bin" eval --checkpoint e.safetensors --batches 2 --batch 4) &&
   s=$("$bin" eval --checkpoint e.safetensors --batches 2 --batch 4 --json) &&
   l=$("$bin" eval --checkpoint lone.safetensors --data synthetic:markov:5 --batches 1 --batch 2 --json); then
  grep -q "^seq: 32 tokens (the training length, recorded in the checkpoint)" <<<"$out" ||
    bad "eval does not say which length it used: $out"
  [ "$(field "$s" seq)" = 32 ] && [ "$(field "$s" loss)" = "$(field "$a" loss)" ] ||
    bad "eval without --seq is not the training length: $s / $a"
  [ "$(field "$l" seq)" = 256 ] && [ "$(field "$l" seq_from)" = "the default" ] ||
    bad "eval of a checkpoint without options: $l"
  ok "eval defaults to the training length: seq $(field "$s" seq), loss $(field "$s" loss)"
else
  bad "eval without --seq failed: $out $s $l"
fi

if j=$("$bin" bench train --model tiny --batch 2 --seq 32 --steps 1 --threads 1 --json); then
  for k in tokens_per_s params threads batch seq gflops sgemm_gflops gemm_tflops backend gpus; do
    grep -q "\"$k\":" <<<"$j" || bad "bench train json lacks $k: $j"
  done
  ok "bench train --json has its keys"
else
  bad "bench train failed: $j"
fi

# --layers: one layer of the 1B example shape (vocabulary cut to 512), and the
# whole model's step projected from it; more layers than the model has refused.
root=$(realpath "$(dirname "$0")/../..")
if j=$("$bin" bench train --model-config "$root/docs/examples/llama-1b-like.json" --vocab 512 \
        --layers 1 --batch 1 --seq 16 --steps 1 --warmup 0 --threads 1 --json) &&
   python3 -c 'import json,sys; d=json.loads(sys.argv[1])
assert d["layers"]==1 and d["model_layers"]==16 and d["ms_per_layer"]>0, d
assert abs(d["projected_step_ms"]-16*d["ms_per_layer"])<1e-6*d["projected_step_ms"], d
assert 60e6 < d["params"] < 62e6, d' "$j"; then
  ok "bench train --layers 1 of the 1B shape: $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%.0f ms a layer, %.0f ms projected" % (d["ms_per_layer"], d["projected_step_ms"]))' "$j")"
else
  bad "bench train --layers: $j"
fi
"$bin" bench train --model tiny --layers 3 --steps 1 >/dev/null 2>&1
[ $? -eq 2 ] || bad "bench train --layers past the model's was not a usage error"

# --profile: as many steps again with each op timed. The tiny model's two
# layers make four gate/up matmuls (64 -> 192) a step, one output layer
# (64 -> 256); every share is a fraction of the step, and together at most it.
if j=$("$bin" bench train --model tiny --batch 2 --seq 32 --steps 2 --threads 1 --profile --json) &&
   python3 -c 'import json,sys; p=json.loads(sys.argv[1])["profile"]; ops=p["ops"]
at=lambda op,i,o: [e for e in ops if (e["op"],e["in_dim"],e["out_dim"])==(op,i,o)]
assert p["steps"]==2 and p["step_ms"]>0 and p["outside_ms"]>=0
up,head=at("matmul_forward",64,192),at("matmul_forward",64,256)
assert len(up)==1 and up[0]["calls"]==4 and up[0]["gflops"]>0, up
assert len(head)==1 and head[0]["calls"]==1, head
assert all(0<=e["share"]<=1 for e in ops) and sum(e["share"] for e in ops)<=1.001
assert {"attention_backward","adamw","cross_entropy_forward"} <= {e["op"] for e in ops}' "$j"; then
  ok "bench train --profile --json: the ops of a step and their shares"
else
  bad "bench train --profile: $j"
fi
if out=$("$bin" bench train --model tiny --batch 2 --seq 32 --steps 1 --threads 1 --profile) &&
   grep -q "^  profile " <<<"$out" && grep -Eq "^    matmul_backward +64x192 " <<<"$out"; then
  ok "bench train --profile prints the table"
else
  bad "bench train --profile (text): $out"
fi

# Backends: version lists what is compiled in and usable; --backend takes
# only their names, and one that cannot run here is an error that says why.
if j=$("$bin" version --json) &&
   python3 -c 'import json,sys; j=json.loads(sys.argv[1]); b=j["backends"]
assert isinstance(j["version"], str) and "cpu" in b["compiled"] and "cpu" in b["usable"]
assert set(b["usable"]) <= set(b["compiled"]) <= {"cpu", "cuda"}' "$j"; then
  ok "version --json: $(tr -d ' \n' <<<"$j")"
else
  bad "version --json: $j"
fi
"$bin" version | grep -q "^  cpu   usable" || bad "version does not list the cpu backend"
out=$("$bin" train "${common[@]}" --steps 1 --backend rocm --out x.safetensors 2>&1)
[ $? -eq 2 ] && grep -q "unknown backend 'rocm'" <<<"$out" || bad "--backend rocm: $out"
# --gpus: data parallelism is for GPUs; the cpu backend is one rank.
out=$("$bin" train "${common[@]}" --steps 1 --backend cpu --gpus 2 --out x.safetensors 2>&1)
[ $? -eq 2 ] && grep -q "the cpu backend takes one rank" <<<"$out" || bad "--gpus 2 on cpu: $out"
out=$("$bin" train "${common[@]}" --steps 1 --gpus 17 --out x.safetensors 2>&1)
[ $? -eq 2 ] && grep -q "\-\-gpus must be 1..16" <<<"$out" || bad "--gpus 17: $out"
out=$("$bin" train "${common[@]}" --steps 2 --backend cpu --out cpu.safetensors 2>&1)
grep -q "backend cpu" <<<"$out" || bad "train --backend cpu banner: $out"
# eval on a backend gives the CPU's loss on the CPU, and refuses unknown names.
l_auto=$("$bin" eval --checkpoint cpu.safetensors --batches 2 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["loss"])')
l_cpu=$("$bin" eval --checkpoint cpu.safetensors --batches 2 --backend cpu --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["loss"])')
cuda_usable=$("$bin" version --json | python3 -c 'import json,sys; print("cuda" in json.load(sys.stdin)["backends"]["usable"])')
[ -n "$l_cpu" ] && { [ "$l_cpu" = "$l_auto" ] || [ "$cuda_usable" = True ]; } ||
  bad "eval --backend cpu: $l_cpu vs auto $l_auto"
out=$("$bin" eval --checkpoint cpu.safetensors --batches 1 --backend rocm 2>&1)
[ $? -eq 2 ] && grep -q "unknown backend 'rocm'" <<<"$out" || bad "eval --backend rocm: $out"
# cuda where it is compiled but cannot run is exit 1 with the reason; where
# it is not compiled in, a usage error (exit 2).
backends=$("$bin" version --json)
has() { python3 -c 'import json,sys; sys.exit(sys.argv[2] not in json.loads(sys.argv[1])["backends"][sys.argv[3]])' "$backends" cuda "$1"; }
if has usable; then
  ok "cuda usable here: not testing its refusal"
else
  want=2; has compiled && want=1
  out=$("$bin" train "${common[@]}" --steps 1 --backend cuda --out x.safetensors 2>&1)
  code=$?
  if [ $code -eq $want ] && grep -q "cuda" <<<"$out" && [ ! -e x.safetensors ]; then
    ok "--backend cuda where it cannot run: exit $code, $(head -1 <<<"$out")"
  else
    bad "--backend cuda where it cannot run: exit $code (want $want): $out"
  fi
fi

printf '{"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
 "num_attention_heads": 5, "vocab_size": 100}' > inconsistent.json
printf 'not a checkpoint' > junk.safetensors
head -c 100 a.safetensors > truncated.safetensors
check 2 "unknown preset" -- train --model gigantic --data synthetic:markov:1 --steps 1 --out x.safetensors
check 2 "inconsistent config" -- train --model-config inconsistent.json --data synthetic:markov:1 --steps 1 --out x.safetensors
check 2 "missing --out" -- train --model tiny --data synthetic:markov:1 --steps 1
check 2 "bad data spec" -- train --model tiny --data synthetic:markov:zz --steps 1 --out x.safetensors
check 1 "missing data file" -- train --model tiny --data /no/such/shard.bin --steps 1 --out x.safetensors
check 2 "seq beyond the model" -- train --model tiny --data synthetic:markov:1 --steps 1 --seq 4096 --out x.safetensors
check 2 "unknown sharding" -- train --model tiny --data synthetic:markov:1 --steps 1 --shard tensor --out x.safetensors
grep -q -- "--shard must be optimizer or full, not 'tensor'" err.txt || bad "--shard tensor: $(cat err.txt)"
check 2 "unknown attention" -- train --model tiny --data synthetic:markov:1 --steps 1 --attention sparse --out x.safetensors
check 2 "micro-batch not dividing" -- train --model tiny --data synthetic:markov:1 --steps 1 --batch 6 --micro-batch 4 --out x.safetensors
check 2 "vocabulary too small for the data" -- train --model tiny --vocab 8 --data synthetic:markov:1 --steps 1 --out x.safetensors
check 1 "corrupt checkpoint" -- eval --checkpoint junk.safetensors --data synthetic:markov:1
check 1 "truncated checkpoint" -- eval --checkpoint truncated.safetensors --data synthetic:markov:1
check 1 "missing checkpoint" -- eval --checkpoint none.safetensors --data synthetic:markov:1
check 1 "resume without optimizer state" -- train --resume junk.safetensors --data synthetic:markov:1 --steps 2 --out y.safetensors
check 2 "bad eval data spec" -- train --model tiny --data synthetic:markov:1 --steps 1 --eval-batches 1 --eval-data synthetic:markov:zz --out x.safetensors
check 1 "missing eval data file" -- train --model tiny --data synthetic:markov:1 --steps 1 --eval-batches 1 --eval-data /no/such/shard.bin --out x.safetensors
check 2 "eval data beyond the vocabulary" -- train --model tiny --vocab 16 --data synthetic:markov:1 --steps 1 --eval-batches 1 --eval-data synthetic:markov:1:32 --out x.safetensors
[ -e x.safetensors ] && bad "a run whose eval data does not fit the model trained anyway"
check 2 "eval data without eval batches" -- train --model tiny --data synthetic:markov:1 --steps 1 --eval-data synthetic:markov:2 --out x.safetensors
check 2 "eval with --data and --eval-data" -- eval --checkpoint a.safetensors --data synthetic:markov:1 --eval-data synthetic:markov:2
"$bin" train --model tiny --vocab 16 --data synthetic:markov:1 --steps 1 --batch 2 --seq 16 \
  --out v16.safetensors >/dev/null || bad "training a vocabulary-16 model failed"
check 2 "eval data beyond the model's vocabulary" -- eval --checkpoint v16.safetensors --eval-data synthetic:markov:1:32
head -c 3000 /dev/zero | tr '\0' 'x' > bytes.txt
check 2 "text eval data beyond the model's vocabulary" -- eval --checkpoint v16.safetensors --eval-data text:bytes.txt --seq 16
check 2 "no data given and none recorded" -- eval --checkpoint lone.safetensors
check 1 "missing eval data file" -- eval --checkpoint a.safetensors --eval-data text:/no/such/*.txt
# Non-finite weights are an error, as text and as --json (which never fails
# formatting a nan).
python3 - a.safetensors nan.safetensors <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", d[:8])[0]
body = struct.pack("<f", float("nan")) * ((len(d) - 8 - n) // 4)
open(sys.argv[2], "wb").write(d[:8 + n] + body)
PY
cp a.optim.safetensors nan.optim.safetensors
check 1 "a checkpoint of nan weights" -- eval --checkpoint nan.safetensors --batches 1
grep -q "parameters are not finite" err.txt || bad "the nan checkpoint's error: $(cat err.txt)"
check 1 "a checkpoint of nan weights, --json" -- eval --checkpoint nan.safetensors --batches 1 --json
grep -q "parameters are not finite" err.txt || bad "the nan checkpoint's --json error: $(cat err.txt)"
[ -s out.txt ] && bad "eval of nan weights printed a result: $(cat out.txt)"
check 2 "bad learning rate" -- train --model tiny --data synthetic:markov:1 --steps 1 --lr -1 --out x.safetensors
# Optimizer moments AdamW never writes are a corrupt file (exit 1, naming
# the tensor and index), not a diverged run to retry at a lower rate.
moment() { # checkpoint tensor index value: overwrite one float of its optimizer state
  cp "${1%.safetensors}.optim.safetensors" "m.optim.safetensors" && cp "$1" m.safetensors &&
  python3 - m.optim.safetensors "$2" "$3" "$4" <<'PY'
import json, struct, sys
path, name, index, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
with open(path, "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    start = json.loads(f.read(n))[name]["data_offsets"][0]
    f.seek(8 + n + start + 4 * index)
    f.write(struct.pack("<f", value))
PY
}
for v in -1 nan; do
  moment a.safetensors adamw.exp_avg_sq 70 "$v" || bad "could not edit the optimizer state"
  check 1 "second moment $v on resume" -- train --resume m.safetensors --data synthetic:markov:5 --steps 8 --out r.safetensors
  grep -q "adamw.exp_avg_sq holds .* at index 70 .*corrupt" err.txt || bad "the error does not name the tensor and index: $(cat err.txt)"
done
[ ! -e r.safetensors ] || bad "a resume from a corrupt optimizer state trained anyway"
# The option checks name what was given, and are the optimizer's own limits.
check 2 "micro-batch 0" -- train --model tiny --data synthetic:markov:1 --steps 1 --batch 2 --micro-batch 0 --out x.safetensors
grep -q -- "--micro-batch 0 must divide the batch 2" err.txt || bad "micro-batch 0: not the values given: $(cat err.txt)"
check 2 "micro-batch beyond the batch" -- eval --checkpoint a.safetensors --batch 2 --micro-batch 4
grep -q -- "--micro-batch 4 must divide the batch 2" err.txt || bad "eval micro-batch: $(cat err.txt)"
check 2 "learning rate 10" -- train --model tiny --data synthetic:markov:1 --steps 1 --lr 10 --out x.safetensors
grep -q -- "--lr wants a number in \[1e-12, 10)" err.txt || bad "--lr 10 is not refused by the option check: $(cat err.txt)"
# The betas' range is open at 1, and the message says so (not "[0, 1]").
check 2 "beta1 of 1" -- train --model tiny --data synthetic:markov:1 --steps 1 --beta1 1 --out x.safetensors
grep -q -- "--beta1 wants a number in \[0, 1), got '1'" err.txt || bad "--beta1 1: $(cat err.txt)"
check 2 "beta2 of 1" -- train --model tiny --data synthetic:markov:1 --steps 1 --beta2 1 --out x.safetensors
grep -q -- "--beta2 wants a number in \[0, 1), got '1'" err.txt || bad "--beta2 1: $(cat err.txt)"
exit $fail
