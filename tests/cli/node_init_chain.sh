#!/usr/bin/env bash
# node init against a live gonka-localnet holding docs/examples/run-spec.json:
# without --collateral it bonds the run's min_collateral (read from the
# chain), a --collateral below it is refused before anything is written (a
# join would be refused and pay its fee every try), one at the minimum is
# taken; without a chain, --collateral is required.
# Then run: a daemon whose hardware class or collateral the run does not
# take stops before it sends a join (which would be refused and pay its
# fee every block): exit 3, the reason named, its balance untouched; and
# node check says so too, and what to fix. Last, `run --steps N` with the
# run's class takes its N steps one a poll and joins.
# Usage: node_init_chain.sh GONKA_DILOCO GONKA_LOCALNET
set -uo pipefail
bin=$(realpath "$1")
localnet=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
spec="$here/../../docs/examples/run-spec.json"
work=$(mktemp -d)
node=""
trap '[ -n "$node" ] && kill -9 "$node" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail=0
source "$here/lib.sh"

min=$(sed -n 's/.*"min_collateral": "\([0-9]*ngonka\)".*/\1/p' "$spec")
[ -n "$min" ] || { echo "FAIL: no min_collateral in $spec"; exit 1; }
"$localnet" init --home ln --accounts 2 --diloco-run "$spec" >/dev/null 2>init.err ||
  { echo "FAIL: localnet init: $(cat init.err)"; exit 1; }
"$localnet" start --home ln --rpc 127.0.0.1:0 --block-time 50ms >ln.out 2>ln.log &
node=$!
url=""
for _ in $(seq 100); do
  url=$(sed -n 's|.*RPC listening on \(127\.0\.0\.1:[0-9]*\):.*|http://\1|p' ln.log | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "FAIL: the localnet did not say its RPC address: $(cat ln.log)"; exit 1; }

"$bin" node init --home a --chain-id prod-sim --node "$url" --key ln/keys/account-1.key >a.out 2>a.err ||
  bad "node init without --collateral: $(cat a.err)"
grep -q "^collateral: \"$min\"" a/node.yaml && ok "without --collateral: the run's $min" ||
  bad "without --collateral: $(grep '^collateral' a/node.yaml 2>/dev/null)"
check 2 "--collateral below the run's minimum" -- node init --home b --chain-id c --node "$url" \
  --key ln/keys/account-1.key --collateral 1ngonka
[ ! -e b/node.yaml ] || bad "node.yaml written for a collateral below the minimum"
grep -q "min_collateral $min" err.txt || bad "the refusal does not name $min: $(cat err.txt)"
"$bin" node init --home c --chain-id c --node "$url" --key ln/keys/account-1.key \
  --collateral "$min" >/dev/null 2>c.err && grep -q "^collateral: \"$min\"" c/node.yaml &&
  ok "--collateral at the minimum" || bad "--collateral at the minimum: $(cat c.err)"
check 1 "no chain and no --collateral" -- node init --home d --chain-id c \
  --node http://127.0.0.1:1 --key ln/keys/account-1.key

# run: refused configurations stop the daemon before any transaction.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
addr=$("$bin" keys show --key ln/keys/account-1.key --json | sed -n 's/.*"address": "\([^"]*\)".*/\1/p')
balance() { "$bin" query balance "$addr" --denom ngonka --node "$url" 2>/dev/null; }
before=$(balance)
try_run() { # description sed-expression expected-text
  local port
  port=$(free_port)
  sed -e "s|^listen:.*|listen: \"127.0.0.1:$port\"|" -e "s|^public_url:.*|public_url: \"http://127.0.0.1:$port\"|" \
    -e "$2" a/node.yaml >run.yaml
  chmod 600 run.yaml
  timeout 60 "$bin" run --config run.yaml --poll-ms 100 >run.out 2>run.err
  local rc=$?
  if [ $rc -eq 3 ] && grep -q "$3" run.err && ! grep -q "refused with code" run.err; then
    ok "$1: $(grep -o "error: .*" run.err | head -1)"
  else
    bad "$1: exit $rc: $(tail -3 run.err)"
  fi
}
try_run "a hardware class the run does not take" 's|^hardware_class:.*|hardware_class: "gpu-h100"|' \
  "gpu-h100 is not one of run 1's"
try_run "a collateral below the run's minimum" \
  's|^hardware_class:.*|hardware_class: "cpu-x86"|; s|^collateral:.*|collateral: "5ngonka"|' \
  "5ngonka against the run's min_collateral 2000000000ngonka"
# node check: one line per check; the class the run does not take is a FAIL with its fix.
sed -e 's|^hardware_class:.*|hardware_class: "gpu-h100"|' a/node.yaml >check.yaml && chmod 600 check.yaml
"$bin" node check --config check.yaml >check.out 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "^FAIL class .*gpu-h100.*fix: " check.out && grep -q "^ok   chain" check.out &&
  grep -q "^ok   collateral" check.out && ok "node check: $(grep -c . check.out) lines, the class failed" ||
  bad "node check: exit $rc: $(cat check.out)"
"$bin" node check --config a/node.yaml --json >check.json 2>&1
python3 - check.json <<'PY' && ok "node check --json" || bad "node check --json: $(cat check.json)"
import json, sys
d = json.load(open(sys.argv[1]))
names = [c["name"] for c in d["checks"]]
assert d["ok"] is False or d["ok"] is True
for want in ["key", "state_dir", "listen", "backend", "chain", "clock", "run", "class", "collateral", "balance", "disk", "memory"]:
    assert want in names, (want, names)
assert "archive" not in names, names  # no retention.archive_dir: nothing to check
assert all(c["status"] in ("ok", "warn", "FAIL") for c in d["checks"]), d
PY
# retention.archive_dir: made and written to by node check; a file in its way is a FAIL.
sed -e 's|^  archive_every:.*|  archive_every: 5|' -e "s|^  archive_dir:.*|  archive_dir: \"$PWD/arch/g\"|" \
  a/node.yaml >arch.yaml && chmod 600 arch.yaml
"$bin" node check --config arch.yaml >arch.out 2>&1
grep -q "^ok   archive .*arch/g: writable" arch.out && [ -d arch/g ] &&
  ok "node check: the archive directory made and writable" || bad "node check archive: $(cat arch.out)"
: >blocked
sed -e 's|^  archive_every:.*|  archive_every: 5|' -e "s|^  archive_dir:.*|  archive_dir: \"$PWD/blocked/g\"|" \
  a/node.yaml >arch.yaml && chmod 600 arch.yaml
"$bin" node check --config arch.yaml >arch.out 2>&1
[ $? -eq 1 ] && grep -q "^FAIL archive .*fix: give retention.archive_dir" arch.out &&
  ok "node check: an archive directory that cannot be made is a FAIL" || bad "node check archive: $(cat arch.out)"
[ "$(balance)" = "$before" ] && ok "no fee paid: $before" || bad "the balance moved: $before -> $(balance)"
# --steps: one step a poll (back to back, six steps saw one block and did nothing).
try_steps() {
  local port t0 t1
  port=$(free_port)
  sed -e "s|^listen:.*|listen: \"127.0.0.1:$port\"|" -e "s|^public_url:.*|public_url: \"http://127.0.0.1:$port\"|" \
    -e 's|^hardware_class:.*|hardware_class: "cpu-x86"|' a/node.yaml >steps.yaml
  chmod 600 steps.yaml
  t0=$(date +%s%N)
  timeout 60 "$bin" run --config steps.yaml --steps 8 --poll-ms 150 >steps.out 2>steps.err ||
    { bad "run --steps 8: exit $?: $(tail -3 steps.err)"; return; }
  t1=$(date +%s%N)
  [ $(((t1 - t0) / 1000000)) -ge 1000 ] || bad "run --steps 8 --poll-ms 150 took $(((t1 - t0) / 1000000)) ms"
  "$bin" query run 1 --node "$url" --json | grep -q "\"$addr\"" &&
    ok "run --steps 8: eight steps in $(((t1 - t0) / 1000000)) ms, and it joined" ||
    bad "run --steps 8 did not join: $(tail -3 steps.err)"
}
try_steps
exit $fail
