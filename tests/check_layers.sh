#!/usr/bin/env bash
# Checks the layering rule of docs/architecture.md on #include lines: a unit
# (a folder, or a subfolder of chain/ and plugin/) may include only the units
# it depends on. With a second argument, the build's bin/ directory, it also
# checks the link: gonka-localnet hosts the chain without its client, so it
# does not link libcurl.
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
bindir="${2:-}"
cd "$root"

# The units, most specific first (a file belongs to the first that prefixes it).
units="chain/keys chain/wire chain/client chain/module
       plugin/include plugin/member plugin/http plugin/ports plugin/sim plugin/abi plugin/cli plugin/demo
       common proofs kernels trainer localnet bench tests"

# What each unit may include besides itself.
allowed() {
  local chain="chain/keys chain/wire"
  local lower="common proofs kernels trainer"
  case "$1" in
    common)         echo "" ;;
    proofs)         echo "common" ;;
    kernels)        echo "common" ;;
    trainer)        echo "common proofs kernels" ;;
    chain/keys)     echo "common" ;;
    chain/wire)     echo "common proofs chain/keys" ;;
    chain/client)   echo "common proofs $chain" ;;
    chain/module)   echo "common proofs $chain" ;;
    localnet)       echo "common proofs $chain chain/module" ;;
    plugin/include) echo "" ;;
    plugin/member)  echo "$lower $chain" ;;
    plugin/http)    echo "common plugin/member" ;;
    plugin/ports)   echo "$lower $chain chain/client plugin/member plugin/http" ;;
    plugin/sim)     echo "$lower $chain chain/client chain/module plugin/member" ;;
    plugin/abi)     echo "$lower $chain plugin/include plugin/member plugin/ports plugin/http" ;;
    plugin/cli)     echo "$lower $chain chain/client plugin/include plugin/abi plugin/member plugin/ports plugin/http plugin/sim" ;;
    plugin/demo)    echo "$lower $chain chain/client plugin/include plugin/member plugin/ports plugin/http plugin/cli" ;;
    bench)          echo "$lower $chain chain/client chain/module localnet plugin/include plugin/abi plugin/member plugin/ports plugin/http plugin/sim plugin/cli tests" ;;
    tests)          echo "$lower $chain chain/client chain/module localnet plugin/include plugin/abi plugin/member plugin/ports plugin/http plugin/sim plugin/cli plugin/demo" ;;
  esac
}

unit_of() {
  local u
  for u in $units; do
    case "$1" in "$u"/*) echo "$u"; return ;; esac
  done
}

status=0
while IFS= read -r line; do
  file=${line%%:*}
  inc=$(printf '%s' "$line" | sed -n 's/.*#include "\([^"]*\)".*/\1/p')
  from=$(unit_of "$file")
  to=$(unit_of "$inc")
  [ -n "$from" ] && [ -n "$to" ] || continue # generated protos, local headers
  [ "$from" = "$to" ] && continue
  case " $(allowed "$from") " in
    *" $to "*) ;;
    *) echo "layer violation: $file includes $inc ($from may include: $(allowed "$from"))"; status=1 ;;
  esac
done < <(grep -rn --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' --include='*.inc' \
           '#include "' common proofs kernels trainer chain plugin localnet bench tests || true)
# The CPU ops are the CPU backend: outside kernels/ (and the tests that
# check the ops themselves) code reaches them only through a backend
# (kernels/backend.h), so a device backend runs the same trainer.
while IFS= read -r line; do
  echo "layer violation: ${line%%:*} calls a CPU op directly (use kernels/backend.h)"
  status=1
done < <(grep -rnE --include='*.c' --include='*.h' --include='*.inc' \
           'gd_cpu_[a-z0-9_]+_f(32|64)[[:space:]]*\(' common proofs chain trainer plugin localnet bench 2>/dev/null |
           grep -v '^trainer/model_f64.c:' || true)
# The double-precision ops serve the gradient checks only: no product
# source includes their headers.
while IFS= read -r line; do
  echo "layer violation: ${line%%:*} includes a double-precision header (tests only)"
  status=1
done < <(grep -rnE --include='*.c' --include='*.h' \
           '#include "(kernels/cpu/ops_f64.h|trainer/model_f64.h)"' plugin localnet bench chain 2>/dev/null || true)
# The link: the chain node never links the chain's client (libcurl).
if [ -n "$bindir" ] && [ -x "$bindir/gonka-localnet" ]; then
  if ldd "$bindir/gonka-localnet" | grep -q 'libcurl'; then
    echo "layer violation: gonka-localnet links libcurl (chain/client must stay out of it)"
    status=1
  fi
fi
[ $status -eq 0 ] && echo "layers ok"
exit $status
