#!/usr/bin/env bash
# gonka-diloco sim through the real binary: a small run with both baselines
# and validator spot checks prints per-round lines and a summary, --json has
# the documented keys, --eval-data moves every evaluation to another source,
# and bad input gets one "error:" line and exit 2 (1 for missing files).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0
small=(--model tiny --vocab 32 --data synthetic:markov:3 --workers 2 --inner-steps 4
       --segment-steps 2 --rounds 2 --batch 2 --seq 16 --eval-batches 2 --threads 2)

if out=$("$bin" sim "${small[@]}" --baseline ddp --baseline local --verify); then
  grep -q "^round    1/2 | inner loss [0-9.]* | eval loss [0-9.]* | sent" <<<"$out" ||
    bad "no round line: $out"
  grep -q "^DDP     eval loss" <<<"$out" && grep -q "^local   eval loss" <<<"$out" ||
    bad "no baseline lines: $out"
  grep -q "validators re-executed 4 segments; all matched" <<<"$out" || bad "no verification: $out"
  ok "sim text: $(grep '^excess loss DiLoCo' <<<"$out")"
else
  bad "sim failed: $out"
fi

if j=$("$bin" sim "${small[@]}" --codec topk:0.1 --overlap --warm-start 3 --baseline ddp \
       --baseline local --json); then
  /usr/bin/env python3 - "$j" <<'PY' || fail=1
import json, sys
d = json.loads(sys.argv[1])
need = {"diloco": ["eval_loss", "bytes_per_worker"], "ddp": ["eval_loss", "bytes_per_worker"],
        "local": ["eval_loss"]}
for part, keys in need.items():
    for k in keys:
        assert k in d[part], (part, k)
for k in ["entropy_floor", "loss_ratio", "byte_reduction", "utilization", "rounds"]:
    assert k in d, k
assert isinstance(d["entropy_floor"], float) and d["loss_ratio"] > 0 and d["byte_reduction"] > 1
assert [r["round"] for r in d["rounds"]] == [0, 1]
for r in d["rounds"]:
    assert isinstance(r["eval_loss"], float) and r["bytes_per_worker"] > 0
assert d["diloco"]["codec"] == "topk:0.1" and d["diloco"]["overlap"] is True
print("ok: sim --json keys present; byte reduction %.1fx" % d["byte_reduction"])
PY
else
  bad "sim --json failed: $j"
fi

# --eval-data: every evaluation (start, rounds, baselines) reads it, the
# training does not change, and the JSON names it.
if a=$("$bin" sim "${small[@]}" --baseline ddp --baseline local --json) &&
   b=$("$bin" sim "${small[@]}" --eval-data synthetic:markov:4 --baseline ddp --baseline local --json); then
  /usr/bin/env python3 - "$a" "$b" <<'PY' || fail=1
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["eval_data"] == "synthetic:markov:3" and b["eval_data"] == "synthetic:markov:4", (a["eval_data"], b["eval_data"])
assert a["start_eval_loss"] != b["start_eval_loss"]
for part in ["diloco", "ddp", "local"]:
    assert a[part]["eval_loss"] != b[part]["eval_loss"], part
for ra, rb in zip(a["rounds"], b["rounds"]):
    assert ra["inner_loss"] == rb["inner_loss"] and ra["eval_loss"] != rb["eval_loss"]
assert a["entropy_floor"] != b["entropy_floor"]  # the floor is the evaluation source's
print("ok: sim --eval-data: DiLoCo eval loss %.4f -> %.4f, DDP %.4f -> %.4f" %
      (a["diloco"]["eval_loss"], b["diloco"]["eval_loss"], a["ddp"]["eval_loss"], b["ddp"]["eval_loss"]))
PY
else
  bad "sim --eval-data failed: $a $b"
fi
if out=$("$bin" sim "${small[@]}" --eval-data synthetic:markov:4); then
  grep -q "^evaluated on synthetic:markov:4 (trained on synthetic:markov:3)" <<<"$out" ||
    bad "sim does not say what it evaluated on: $out"
else
  bad "sim --eval-data (text output) failed: $out"
fi

# --payload-dir: the files a worker would serve, readable by payload
# inspect and verify (a flipped byte then fails verification).
mkdir pl
if "$bin" sim "${small[@]}" --codec int4 --payload-dir pl >/dev/null 2>err.txt; then
  n=$(ls pl | wc -l)
  f=pl/r0001-worker-00001.gdpl
  if [ "$n" -ne 4 ] || [ ! -f "$f" ]; then
    bad "--payload-dir wrote $n files: $(ls pl)"
  else
    root=$("$bin" payload inspect "$f" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["root"])')
    if "$bin" payload verify "$f" --root "$root" >/dev/null; then
      ok "--payload-dir: $n payloads, $f verifies against $root"
    else
      bad "payload verify of $f failed"
    fi
    printf '\x55' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") - 3 )) conv=notrunc 2>/dev/null
    if "$bin" payload verify "$f" --root "$root" >/dev/null 2>&1; then
      bad "a corrupted payload from --payload-dir still verifies"
    fi
  fi
else
  bad "sim --payload-dir failed: $(cat err.txt)"
fi

check 2 "missing --data" -- sim --model tiny
check 2 "unknown codec" -- sim "${small[@]}" --codec int9
check 2 "unknown baseline" -- sim "${small[@]}" --baseline fedavg
check 2 "segment not dividing H" -- sim --model tiny --data synthetic:markov:3 --inner-steps 4 --segment-steps 3
check 2 "wrong number of speeds" -- sim "${small[@]}" --speeds 1,2,3
check 2 "negative link" -- sim "${small[@]}" --link-mbps -5
check 2 "outer momentum of 1" -- sim "${small[@]}" --outer-momentum 1
check 1 "missing data file" -- sim --model tiny --data /no/such.bin --workers 2 --inner-steps 2 --rounds 1
check 2 "bad eval data spec" -- sim "${small[@]}" --eval-data synthetic:markov:x
check 1 "missing eval data file" -- sim "${small[@]}" --eval-data /no/such.bin
check 2 "eval data beyond the vocabulary" -- sim "${small[@]}" --eval-data synthetic:markov:3:64
head -c 20 /dev/zero | tr '\0' 'x' > short.txt
check 2 "eval data without an evaluation batch" -- sim "${small[@]}" --eval-data text:short.txt
check 1 "missing payload dir" -- sim "${small[@]}" --payload-dir /no/such/dir
exit $fail
