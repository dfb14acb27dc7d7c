#!/usr/bin/env bash
# Checks the layering rule on #include lines: a folder may include only the
# folders it depends on (docs/architecture.md):
#   common <- proofs <- {chain, trainer};  common <- kernels <- trainer;
#   plugin wires chain, trainer, proofs;   chain and trainer never meet;
#   chain/module builds on chain; localnet hosts chain; nothing includes localnet.
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"

allowed() {
  case "$1" in
    common)   echo "common" ;;
    proofs)   echo "common proofs" ;;
    kernels)  echo "common kernels" ;;
    chain)    echo "common proofs chain" ;;
    trainer)  echo "common proofs kernels trainer" ;;
    plugin)   echo "common proofs kernels chain trainer plugin" ;;
    localnet) echo "common proofs chain localnet" ;;
    bench)    echo "common proofs kernels chain trainer plugin localnet bench tests" ;;
    tests)    echo "common proofs kernels chain trainer plugin localnet tests" ;;
  esac
}

layers="common proofs kernels chain trainer plugin localnet bench tests"
status=0
for layer in $layers; do
  [ -d "$layer" ] || continue
  ok=$(allowed "$layer")
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(printf '%s' "$line" | sed -n 's/.*#include "\([a-z_]*\)\/.*/\1/p')
    [ -n "$inc" ] || continue
    case " $layers " in *" $inc "*) ;; *) continue ;; esac # generated protos etc.
    case " $ok " in
      *" $inc "*) ;;
      *) echo "layer violation: $file includes $inc/ (allowed: $ok)"; status=1 ;;
    esac
  done < <(grep -rn --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
             '#include "' "$layer" || true)
done
# Inside chain/: the state machine (chain/module) builds on the client code,
# never the other way round.
while IFS= read -r line; do
  echo "layer violation: ${line%%:*} includes chain/module/ (chain/ must not depend on it)"
  status=1
done < <(grep -rn --include='*.c' --include='*.h' '#include "chain/module/' chain |
           grep -v '^chain/module/' || true)
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
[ $status -eq 0 ] && echo "layers ok"
exit $status
