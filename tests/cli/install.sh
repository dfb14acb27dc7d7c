#!/usr/bin/env bash
# cmake --install into a fresh prefix: the two programs, libgonka_diloco.so
# and its header, and the installed gonka-diloco runs; the operations kit
# (contrib/): the systemd unit, written with the prefix's binary, passes
# `systemd-analyze verify`; the alert rules pass `promtool check rules` and
# their own cases (`promtool test rules`); the dashboard is JSON.
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
unit="$prefix/lib/systemd/system/gonka-diloco.service"
share="$prefix/share/gonka-diloco"
for f in "$unit" "$prefix/lib/sysusers.d/gonka-diloco.conf" "$share/prometheus/gonka-diloco-alerts.yml" \
  "$share/prometheus/gonka-diloco-alerts-test.yml" "$share/grafana/gonka-diloco-dashboard.json" \
  "$prefix/share/doc/gonka-diloco/operations.md"; do
  [ -e "$f" ] || { echo "FAIL: ${f#"$prefix/"} not installed"; fail=1; }
done
if [ -e "$unit" ]; then
  grep -q "^ExecStart=$prefix/bin/gonka-diloco run --config " "$unit" ||
    { echo "FAIL: the unit does not start the installed binary: $(grep ExecStart "$unit")"; fail=1; }
  # verify wants the unit's user to exist only at start; it checks the rest.
  out=$(systemd-analyze verify "$unit" 2>&1) || { echo "FAIL: systemd-analyze verify: $out"; fail=1; }
  [ -z "$out" ] || { echo "FAIL: systemd-analyze verify warns: $out"; fail=1; }
fi
(cd "$share/prometheus" && promtool check rules gonka-diloco-alerts.yml >/dev/null &&
  promtool test rules gonka-diloco-alerts-test.yml >/dev/null) ||
  { echo "FAIL: promtool: $(cd "$share/prometheus" && promtool test rules gonka-diloco-alerts-test.yml 2>&1 | tail -5)"; fail=1; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["panels"]' \
  "$share/grafana/gonka-diloco-dashboard.json" || { echo "FAIL: the dashboard is not JSON with panels"; fail=1; }
[ $fail -eq 0 ] && echo "ok: installed $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
exit $fail
