#!/usr/bin/env bash
# The trainer's model against an independent PyTorch implementation of
# Hugging Face's Llama (bench/torch_llama.py): both read the same
# checkpoint and the same llm.c token shard (written here by numpy, not by
# us) and must agree on the evaluation loss. This checks tensor names,
# weight layouts, the rotary convention, grouped-query heads and the tied
# or untied head: everything "Hugging Face-compatible" means. Skipped
# (exit 77) without Debian's python3-torch (bench/compare_torch --install).
# Usage: torch_eval.sh GONKA_DILOCO_BINARY
set -uo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
torch_llama="$here/../../bench/torch_llama.py"
if ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
  echo "PyTorch not installed (bench/compare_torch --install); skipping"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
tokens = rng.integers(0, 256, size=5000).astype("<u2")
header = np.zeros(256, dtype="<i4")
header[0], header[1], header[2] = 20240520, 1, len(tokens)
with open("tokens.bin", "wb") as f:
    f.write(header.tobytes()); f.write(tokens.tobytes())
PY
printf '{"hidden_size": 48, "intermediate_size": 80, "num_hidden_layers": 2,
 "num_attention_heads": 6, "num_key_value_heads": 2, "vocab_size": 256,
 "max_position_embeddings": 128, "rope_theta": 500.0, "tie_word_embeddings": false}' > untied.json
fail=0
for model in "--model tiny" "--model-config untied.json"; do
  # A few steps so the weights are not at their symmetric initial values.
  "$bin" train $model --data text:"$torch_llama" --steps 5 --batch 2 --seq 64 --lr 1e-2 \
    --threads 2 --out m.safetensors --json >/dev/null || { echo "FAIL: train $model"; exit 1; }
  ours=$("$bin" eval --checkpoint m.safetensors --data tokens.bin --batches 3 --batch 4 --seq 64 --json |
         sed -n 's/.*"loss": \([0-9.e+-]*\).*/\1/p')
  theirs=$(/usr/bin/python3 "$torch_llama" eval --checkpoint m.safetensors --tokens tokens.bin \
           --batches 3 --batch 4 --seq 64 | sed -n 's/.*"loss": \([0-9.e+-]*\).*/\1/p')
  if awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-4 * b) }'; then
    echo "ok: $model: gonka-diloco $ours, PyTorch (float64) $theirs"
  else
    echo "FAIL: $model: gonka-diloco $ours, PyTorch $theirs"
    fail=1
  fi
done
exit $fail
