#!/bin/sh
# translate.sh IN OUT: a .cu file as host C++ for the emulator
# (tests/cuda_emu/README.md). Each launch `kernel<<<grid, block[, shared[,
# stream]]>>>(args)`, written on one line as the kernels write it, becomes
# `gd_emu::launch(kernel, "kernel", grid, block, ...)(args)`; the #line
# keeps the compiler's messages pointing at IN.
set -eu
in=$1 out=$2
tmp=$out.tmp
{
  printf '#line 1 "%s"\n' "$in"
  sed 's/\([A-Za-z_][A-Za-z_0-9]*\)<<<\(.*\)>>>(/gd_emu::launch(\1, "\1", \2)(/' "$in"
} >"$tmp"
if grep -n '<<<' "$tmp" >&2; then
  echo "translate.sh: $in: a launch the emulator cannot read (write it on one line)" >&2
  rm -f "$tmp"
  exit 1
fi
mv "$tmp" "$out"
