#!/usr/bin/env bash
# cmake --install into a fresh prefix: the two programs, libgonka_diloco.so
# and its header, and the installed gonka-diloco runs.
# Usage: install.sh CMAKE BUILD_DIR
set -uo pipefail
cmake_bin="$1"
build="$2"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake_bin" --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 ||
  { echo "FAIL: cmake --install: $(tail -5 "$prefix.log")"; rm -f "$prefix.log"; exit 1; }
rm -f "$prefix.log"
fail=0
for f in bin/gonka-diloco bin/gonka-localnet include/gonka_diloco.h; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; fail=1; }
done
[ -n "$(find "$prefix" -name "libgonka_diloco.so*" -print -quit)" ] || { echo "FAIL: libgonka_diloco.so not installed"; fail=1; }
"$prefix/bin/gonka-diloco" version >/dev/null || { echo "FAIL: the installed gonka-diloco does not run"; fail=1; }
[ $fail -eq 0 ] && echo "ok: installed $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
exit $fail
