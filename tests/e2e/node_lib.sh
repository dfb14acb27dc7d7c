# What the daemons' end-to-end tests share (sourced by node_daemons.sh and
# node_faults.sh after they set $windows, a Python dict of the run's window
# lengths, $accounts and $epoch_length): a real run spec for the tiny model
# (`sim --print-spec`, with incentive knobs a few members can meet and this
# host's hardware class), a localnet with the run in its genesis on a free
# loopback port (200 ms blocks, invariants checked), and hosts: `start_host
# N ROLES [PUBLIC_URL]` inits host N's home with account N's key on a free
# port and starts `gonka-diloco run` (or, with ADV[N] set, the test-only
# `gd-adversary ${ADV[N]} run`; a second call restarts it with the same
# config), `kill_host N`, `status N`, `height`, `until_height H` (failing if
# the chain or a host not killed on purpose stopped, unless STOPS_WHEN[N]
# names the log line of a stop by design), `checkpoint N FILE`,
# `own_g N R` (the hash of host N's stored G_R), `slashed N...` (what the
# chain's events say it slashed from each), `start_four` (hosts 1-3
# workers, 4 a validator, and G_0's checkpoint as g0.safetensors), `save_rounds H`,
# `collect N...`, `agreed_g N...`, `learned` and `eval_loss FILE`.
# $checks (default 2), $double_ppm (0), $min_class (3) and $overlap (False)
# are the spec's checks_per_commit, double_check_ppm, min_class_members and
# overlap; $model_args (the tiny model, H = 8, K = 2, batch 8, chunks of
# 4096) its model and round shape as `sim` flags, $block_time (200ms) the
# chain's, and $memory_budget (none) each host's node.yaml memory_budget.
# Usage: . node_lib.sh BIN_DIR   (KEEP=1: keep the directory and the logs)
set -uo pipefail
bin=$(realpath "$1")
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$work"/*.log; do echo "--- $f"; tail -n 15 "$f"; done
  exit 1
}
ok() { echo "ok: $*"; }
cd "$work"
dg="$bin/gonka-diloco"
py() { python3 -c "$@"; }

cls=$("$dg" node hardware-class --json | py 'import json,sys; print(json.load(sys.stdin)["hardware_class"])')
# shellcheck disable=SC2086 # $model_args are words
"$dg" sim ${model_args:---model tiny --inner-steps 8 --segment-steps 2 --batch 8 --chunk-elems 4096} \
  --data synthetic:markov:1 --workers 3 --seq 64 --rounds 20 --print-spec >base.json 2>sim.log || fail "sim --print-spec"
py "
import json
s = json.load(open('base.json'))
s.update({
  'windows': $windows,
  'reward_per_epoch': '90000ngonka', 'min_collateral': '100000ngonka', 'fail_bond': '1000ngonka',
  'checks_per_commit': ${checks:-2}, 'double_check_ppm': ${double_ppm:-0}, 'recheck_validators': 1,
  'validator_share_ppm': 200000, 'attest_share_ppm': 50000, 'hw_classes': ['$cls'],
  'min_class_members': ${min_class:-3}, 'avail_chunks': 2, 'cheat_slash': '90000ngonka',
  'skip_slash': '1000ngonka', 'withhold_slash': '45000ngonka', 'suspend_rounds': 2, 'max_members': 16,
  'overlap': ${overlap:-False}})
json.dump(s, open('spec.json', 'w'))
" || fail "spec"
"$bin/gonka-localnet" init --home home --accounts "$accounts" --epoch-length "$epoch_length" --diloco-run spec.json \
  --diloco-pool 1000000ngonka >init.log 2>&1 || fail "localnet init: $(cat init.log)"
"$bin/gonka-localnet" start --home home --rpc 127.0.0.1:0 --rpc-addr-file rpc.addr \
  --block-time "${block_time:-200ms}" --check-invariants >chain.log 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s rpc.addr ] && break; sleep 0.05; done
[ -s rpc.addr ] || fail "localnet did not start"
node="http://$(cat rpc.addr)"
chain_id=$("$dg" status --node "$node" --json | py 'import json,sys; print(json.load(sys.stdin)["network"])')

free_port() { py 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A PORT HOSTPID ADDR STOPPED
declare -A ADV # ADV[N]: gd-adversary options host N runs with (tests/adversary)
hosts=()
start_host() { # start_host N ROLES [PUBLIC_URL]: a second call restarts it with the same config
  local n=$1 roles=$2 url=${3:-}
  if [ ! -f "h$n/node.yaml" ]; then
    PORT[$n]=$(free_port)
    url=${url:-http://127.0.0.1:${PORT[$n]}}
    "$dg" node init --home "h$n" --node "$node" --chain-id "$chain_id" \
      --key "home/keys/account-$n.key" --roles "$roles" --collateral 200000ngonka >/dev/null \
      || fail "node init $n"
    sed -i "s|^listen: .*|listen: \"127.0.0.1:${PORT[$n]}\"|; s|^public_url: .*|public_url: \"$url\"|; s|^threads: .*|threads: 1|" "h$n/node.yaml"
    [ -z "${memory_budget:-}" ] || sed -i "s|^memory_budget: .*|memory_budget: \"$memory_budget\"|" "h$n/node.yaml"
    ADDR[$n]=$("$dg" keys show --key "home/keys/account-$n.key" --json | py 'import json,sys; print(json.load(sys.stdin)["address"])')
    hosts+=("$n")
  fi
  if [ -n "${ADV[$n]:-}" ]; then
    # shellcheck disable=SC2086 # the adversary's options are words
    "$bin/gd-adversary" ${ADV[$n]} run --config "h$n/node.yaml" --poll-ms 100 >>"host$n.log" 2>&1 &
  else
    "$dg" run --config "h$n/node.yaml" --poll-ms 100 >>"host$n.log" 2>&1 &
  fi
  pids+=($!)
  HOSTPID[$n]=$!
}
start_four() { # three workers and a validator; G_0 as served once round 0 is open
  start_host 1 worker
  start_host 2 worker
  start_host 3 worker
  start_host 4 validator
  until_height 40
  checkpoint 1 g0.safetensors
}
kill_host() { kill -9 "${HOSTPID[$1]}"; wait "${HOSTPID[$1]}" 2>/dev/null; HOSTPID[$1]=; }
declare -A STOPS_WHEN # STOPS_WHEN[N]: a line host N's log holds when it stopped as designed
alive() { # the chain and every host not killed on purpose, nor stopped as designed, are running
  kill -0 "${pids[0]}" 2>/dev/null || fail "localnet stopped (an invariant broke?)"
  for n in "${hosts[@]}"; do
    [ -z "${HOSTPID[$n]}" ] || kill -0 "${HOSTPID[$n]}" 2>/dev/null && continue
    if [ -n "${STOPS_WHEN[$n]:-}" ] && grep -q "${STOPS_WHEN[$n]}" "host$n.log"; then
      wait "${HOSTPID[$n]}" 2>/dev/null; HOSTPID[$n]=; STOPPED[$n]=1
      ok "host $n stopped as designed: ${STOPS_WHEN[$n]}"
      continue
    fi
    fail "host $n stopped"
  done
}
status() { curl -sf --max-time 5 "http://127.0.0.1:${PORT[$1]}/v1/status"; }
checkpoint() { # checkpoint N FILE: host N's served checkpoint, once it serves one
  for _ in $(seq 1 100); do
    curl -sf --max-time 10 -o "$2" "http://127.0.0.1:${PORT[$1]}/v1/runs/1/checkpoint.safetensors" && return 0
    sleep 0.2
  done
  fail "host $1 serves no checkpoint"
}
own_g() { # own_g N R: the state hash of host N's stored G_R (its descriptor's SHA-256)
  py "import hashlib; print(hashlib.sha256(open('h$1/state/run-1/round-$2/global.gdgs','rb').read(128)).hexdigest())"
}
save_rounds() { # save_rounds H: until height H, each round's record as round-R.json once
  # it has ended (the chain keeps only the last rounds'); $last: rounds saved
  last=0
  while [ "$(height)" -lt "$1" ]; do
    alive
    local cur
    cur=$("$dg" query run 1 --node "$node" --json | py 'import json,sys; r=json.load(sys.stdin).get("current_round"); print(int(r["index"]) if r else 0)')
    while [ "$last" -lt "$cur" ]; do
      "$dg" query round 1 "$last" --node "$node" --json >"round-$last.json" || fail "query round $last"
      last=$((last + 1))
    done
    sleep 1
  done
}
collect() { # collect N...: status-N.json (not for a host stopped as designed) and
  # rewards-N.json of each host
  for n in "$@"; do
    [ -n "${STOPPED[$n]:-}" ] || status "$n" >"status-$n.json" || fail "status of host $n"
    "$dg" query rewards "${ADDR[$n]}" --node "$node" --json >"rewards-$n.json" \
      || fail "rewards of host $n"
  done
}
slashed() { # slashed N...: the collateral the chain slashed from each host (its
  # diloco_slashed events, every block so far), one figure a line
  local a=() n
  for n in "$@"; do a+=("${ADDR[$n]}"); done
  NODE=$node py '
import json, os, sys, urllib.request
node, who = os.environ["NODE"], sys.argv[1:]
get = lambda path: json.load(urllib.request.urlopen(node + path, timeout=10))["result"]
top = int(get("/status")["sync_info"]["latest_block_height"])
paid = dict.fromkeys(who, 0)
for h in range(1, top + 1):
    r = get(f"/block_results?height={h}") or {}
    events = [e for t in r.get("txs_results") or [] for e in t.get("events") or []]
    events += r.get("finalize_block_events") or []
    for e in events:
        if e.get("type") != "diloco_slashed":
            continue
        kv = {x["key"]: x["value"] for x in e.get("attributes") or []}
        if kv.get("address") in paid:
            paid[kv["address"]] += int(kv["amount"])
for a in who:
    print(paid[a])
' "${a[@]}"
}
agreed_g() { # agreed_g N...: each host's own G_$last is the chain's (round $last's start)
  "$dg" query round 1 "$last" --node "$node" --json >round.json || fail "query round $last"
  local want got n
  want=$(py 'import json; print(json.load(open("round.json"))["round"]["start_state_hash"])')
  for n in "$@"; do
    got=$(own_g "$n" "$last") || fail "host $n holds no G_$last"
    [ "$got" = "$want" ] || fail "host $n's G_$last is $got, the chain's $want"
  done
  ok "the daemons' own G_$last ($*) is the chain's state hash"
}
learned() { # learned: the agreed G served at the end scores below G_0 (g0.safetensors)
  checkpoint 2 g1.safetensors
  local l0 l1
  l0=$(eval_loss g0.safetensors)
  l1=$(eval_loss g1.safetensors)
  py "assert $l1 < $l0, ($l0, $l1)" || fail "the loss did not fall: $l0 -> $l1"
  ok "eval loss of the agreed G: $l0 -> $l1"
}
eval_loss() { # eval_loss FILE: a checkpoint's eval loss on the run's data
  "$dg" eval --checkpoint "$1" --data synthetic:markov:1 --seq 64 --json | py 'import json,sys; print(json.load(sys.stdin)["loss"])'
}
height() { "$dg" status --node "$node" --json | py 'import json,sys; print(json.load(sys.stdin)["latest_block_height"])'; }
until_height() {
  for _ in $(seq 1 3000); do
    alive
    [ "$(height)" -ge "$1" ] && return 0
    sleep 0.1
  done
  fail "height did not reach $1"
}
