#!/usr/bin/env bash
# The payload commands end to end through the real binary: a sample payload
# (written by gd-bench-codec --write-sample, which prints its root) is shown
# by inspect (text, --all, --json) and checked by verify: exit 0 with the
# right root, 1 for a wrong root, a corrupted or truncated copy or a missing
# file, 2 for a malformed --root; every failure is one "error:" line.
# Usage: payload.sh GONKA_DILOCO [GD_BENCH_CODEC] (default: beside the first)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
bench=$(realpath "${2:-$(dirname "$1")/gd-bench-codec}")
if [ ! -x "$bench" ]; then
  echo "FAIL: $bench not built (build the gd-bench-codec target)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0

root=$("$bench" --write-sample s.gdpl --codec int8 --values 50000 --chunk-elems 2000) ||
  { echo "FAIL: --write-sample failed"; exit 1; }
[[ "$root" =~ ^[0-9a-f]{64}$ ]] || bad "sample root is not 64 hex digits: $root"

if out=$("$bin" payload inspect s.gdpl); then
  for want in "participant:  worker-00000" "param count:  50000" "codec:        int8" \
              "chunk size:   2000 values" "chunk count:  25" "... 5 more chunks" \
              "root:         $root (26 leaves)" "wire size:    $(stat -c %s s.gdpl) bytes"; do
    grep -qF -- "$want" <<<"$out" || bad "inspect lacks '$want': $out"
  done
  [ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+  (raw|zstd)$' <<<"$out")" -eq 20 ] ||
    bad "inspect should list 20 chunks: $out"
  ok "inspect: $(grep 'root:' <<<"$out" | tr -s ' ')"
else
  bad "inspect failed: $out"
fi
out=$("$bin" payload inspect s.gdpl --all) || bad "inspect --all failed"
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+  (raw|zstd)$' <<<"$out")" -eq 25 ] ||
  bad "inspect --all should list 25 chunks: $out"

if j=$("$bin" payload inspect s.gdpl --json); then
  for k in run round participant param_count layout_digest spec_digest codec chunk_elems chunk_count root \
           leaf_count wire_bytes chunks index stored_bytes raw_bytes zstd; do
    grep -q "\"$k\":" <<<"$j" || bad "inspect --json lacks $k"
  done
  grep -q "\"root\": \"$root\"" <<<"$j" && grep -q '"chunk_count": 25' <<<"$j" &&
    grep -q '"leaf_count": 26' <<<"$j" && grep -q '"codec": "int8"' <<<"$j" ||
    bad "inspect --json values: $j"
  ok "inspect --json has its keys"
else
  bad "inspect --json failed: $j"
fi

if out=$("$bin" payload verify s.gdpl --root "$root" 2>err.txt); then
  grep -q "^ok: 25 chunks match root $root" <<<"$out" || bad "verify output: $out"
  ok "verify: $out"
else
  bad "verify with the right root failed: $(cat err.txt)"
fi

# Every codec (bf16 and none compress with zstd) verifies against its root.
for codec in none bf16 int4 topk:0.01; do
  r=$("$bench" --write-sample "c.gdpl" --codec "$codec" --values 300000) &&
    "$bin" payload verify c.gdpl --root "$r" >/dev/null ||
    bad "verify of a $codec sample failed"
  rm -f c.gdpl
done
"$bench" --write-sample z.gdpl --codec bf16 --values 300000 >/dev/null &&
  "$bin" payload inspect z.gdpl | grep -qE ' zstd$' || bad "bf16 sample not stored as zstd"
ok "none, bf16, int4 and topk samples verify"

# XORs the byte at offset $2 of file $1 with 0xff.
flip() {
  local b
  b=$(od -An -tu1 -j"$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf %03o $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
wrong=$(printf '%s' "$root" | tr '0-9a-f' '1-9a-f0')
cp s.gdpl data.gdpl && flip data.gdpl 20000
cp s.gdpl header.gdpl && flip header.gdpl 10
cp s.gdpl table.gdpl && flip table.gdpl 150
head -c $(($(stat -c %s s.gdpl) - 1)) s.gdpl > truncated.gdpl
check 1 "wrong root" -- payload verify s.gdpl --root "$wrong"
check 1 "corrupted chunk data" -- payload verify data.gdpl --root "$root"
check 1 "corrupted header" -- payload verify header.gdpl --root "$root"
check 1 "corrupted chunk table" -- payload verify table.gdpl --root "$root"
check 1 "truncated copy" -- payload verify truncated.gdpl --root "$root"
check 1 "missing file" -- payload verify none.gdpl --root "$root"
check 1 "inspect of a truncated copy" -- payload inspect truncated.gdpl
check 2 "non-hex root" -- payload verify s.gdpl --root "zz${root:2}"
check 2 "short root" -- payload verify s.gdpl --root "${root:2}"
check 2 "missing --root" -- payload verify s.gdpl
exit $fail
