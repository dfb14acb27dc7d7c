#!/usr/bin/env bash
# gonka-diloco plan from the command line: the JSON's keys, exit 0 when the
# plan fits and 1 when nothing does, a usage error (2) for bad sizes and
# settings, given settings budgeted as given, and docs/hardware.md's table
# is exactly what scripts/hardware_table prints now.
# Usage: plan.sh BIN_DIR
set -uo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
dg="$bin/gonka-diloco"
q32=docs/examples/qwen2.5-32b-like.json

out=$("$dg" plan --model "$q32" --gpus 8 --gpu-mem 80G --seq 4096 --json) || bad "32B on 8 x 80G: exit $?"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
for k in ["fits", "per_gpu_bytes", "host_bytes", "disk_per_round_bytes", "settings", "per_gpu", "host", "ladder", "params"]:
    assert k in d, k
assert d["fits"] is True and len(d["ladder"]) == 6, d
s = d["settings"]
assert s["recompute"] == "full" and s["moments"] == "bf16" and s["offload"] == "none", s
assert d["per_gpu_bytes"] <= 80 * 2**30 and d["ladder"][0]["fits"] is False, d
assert not d["ladder"][3]["fits"] and d["ladder"][3]["per_gpu_bytes"] > 80 * 2**30, d["ladder"][3]
' "$out" && ok "32B on 8 x 80G: the first rung that fits is rung 5" || bad "the 32B plan: $out"

"$dg" plan --model "$q32" --gpus 1 --gpu-mem 16G --seq 4096 >"$work/none.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "none fits" "$work/none.out" && ok "32B on one 16G GPU: exit 1, none fits" ||
  bad "32B on one 16G GPU: exit $rc: $(tail -2 "$work/none.out")"

out=$("$dg" plan --model small --gpu-mem 80G --seq 256 --shard full --precision bf16 --json) ||
  bad "given settings: exit $?"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
s = d["settings"]
assert s["shard"] == "full" and s["precision"] == "bf16" and s["attention"] == "naive", s
assert "ladder" not in d and "built" not in d, d
' "$out" && ok "given settings are budgeted as given" || bad "given settings: $out"

for args in "--gpu-mem lots" "--gpu-mem 80G --shard half" "--gpu-mem 80G --gpus 0x" "--gpu-mem 0G" ""; do
  # shellcheck disable=SC2086 # the arguments are words
  "$dg" plan --model small $args >/dev/null 2>&1
  rc=$?
  [ $rc -eq 2 ] || bad "plan --model small $args: exit $rc, not 2"
done
"$dg" plan --gpu-mem 80G >/dev/null 2>&1; [ $? -eq 2 ] || bad "no --model: not a usage error"
"$dg" plan --model /nonexistent/config.json --gpu-mem 80G >/dev/null 2>&1
[ $? -ne 0 ] || bad "a missing config.json was planned"
ok "bad sizes, settings and models are refused"

if diff <(scripts/hardware_table "$bin") <(sed -n '/^| model | parameters/,/^$/p' docs/hardware.md | sed '/^$/d') >"$work/diff.out"; then
  ok "docs/hardware.md's table is scripts/hardware_table's output"
else
  bad "docs/hardware.md's table differs from scripts/hardware_table's output: $(cat "$work/diff.out")"
fi
exit $fail
