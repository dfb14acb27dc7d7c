#!/usr/bin/env bash
# The trainer commands end to end through the real binary: train writes a
# checkpoint and prints progress and a final loss; eval scores it (--json);
# resume continues to the same bits as an uninterrupted run; bench train
# prints its figures; bad input gets one "error:" line and exit 1 or 2.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0

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

if j=$("$bin" eval --checkpoint a.safetensors --data synthetic:markov:5 --batches 3 --batch 4 \
       --seq 32 --json); then
  grep -q '"loss": [0-9.]*' <<<"$j" && grep -q '"tokens": 384' <<<"$j" || bad "eval json: $j"
  ok "eval --json: $(tr -d '\n ' <<<"$j")"
else
  bad "eval failed: $j"
fi

if j=$("$bin" bench train --model tiny --batch 2 --seq 32 --steps 1 --threads 1 --json); then
  for k in tokens_per_s params threads batch seq gflops sgemm_gflops; do
    grep -q "\"$k\":" <<<"$j" || bad "bench train json lacks $k: $j"
  done
  ok "bench train --json has its keys"
else
  bad "bench train failed: $j"
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
check 2 "micro-batch not dividing" -- train --model tiny --data synthetic:markov:1 --steps 1 --batch 6 --micro-batch 4 --out x.safetensors
check 2 "vocabulary too small for the data" -- train --model tiny --vocab 8 --data synthetic:markov:1 --steps 1 --out x.safetensors
check 1 "corrupt checkpoint" -- eval --checkpoint junk.safetensors --data synthetic:markov:1
check 1 "truncated checkpoint" -- eval --checkpoint truncated.safetensors --data synthetic:markov:1
check 1 "missing checkpoint" -- eval --checkpoint none.safetensors --data synthetic:markov:1
check 1 "resume without optimizer state" -- train --resume junk.safetensors --data synthetic:markov:1 --steps 2 --out y.safetensors
check 2 "bad learning rate" -- train --model tiny --data synthetic:markov:1 --steps 1 --lr -1 --out x.safetensors
exit $fail
