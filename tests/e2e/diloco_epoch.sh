#!/usr/bin/env bash
# A full epoch of the DiLoCo training module on gonka-localnet, driven by
# scripted `gonka-diloco tx` commands (no trainer): genesis creates run 1;
# three hosts join and get ranks 0 to 2; round 0 opens in epoch 1's
# Inference phase; each host commits a real payload file, reports the
# others' payloads with MMR proofs, seals and reveals PASS verdicts on its
# assigned checks and attests the next state hash; the round is DONE;
# epoch 1 settles when epoch 2 starts; at the claim-money stage each host
# claims, and its balance grows by exactly its settle amount; a second
# claim is refused.
# The node runs with --check-invariants, so a block that breaks any
# module's invariant stops it (and the test).
# Usage: diloco_epoch.sh BIN_DIR
set -uo pipefail
bin=$(realpath "$1")
work=$(mktemp -d)
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/node.log" ] && tail -n 20 "$work/node.log"; exit 1; }
ok() { echo "ok: $*"; }
cd "$work"
dg="$bin/gonka-diloco"

cat >spec.json <<'JSON'
{
  "model": "tiny",
  "layout_digest": "1111111111111111111111111111111111111111111111111111111111111111",
  "seed": "1",
  "data_spec": "synthetic:markov:1",
  "initial_state_hash": "2222222222222222222222222222222222222222222222222222222222222222",
  "h_min": 20, "h_max": 40, "segment_steps": 10, "tokens_per_step": "512",
  "outer_lr_ppm": 700000, "outer_momentum_ppm": 900000, "codec": "int8",
  "windows": {"train": 2, "commit": 10, "reveal": 14, "verify": 16, "open": 16,
              "dispute": 4, "attest": 14},
  "reward_per_epoch": "90000ngonka", "min_collateral": "5000ngonka",
  "fail_bond": "1000ngonka", "checks_per_commit": 1, "double_check_ppm": 0,
  "recheck_validators": 2, "slash_ppm": 500000, "skip_slash_ppm": 100000,
  "validator_share_ppm": 200000,
  "inner_lr": "0.003", "inner_min_lr": "0.0003", "inner_warmup_steps": "10",
  "inner_schedule_steps": "1000", "adam_beta1": "0.9", "adam_beta2": "0.95",
  "adam_eps": "0.00000001", "weight_decay": "0.1", "grad_clip": "1",
  "batch": 8, "seq_len": 64, "micro_batch": 8, "clip_factor": "2",
  "error_feedback": true, "error_feedback_decay": "1", "chunk_elems": 1000,
  "overlap": false
}
JSON
"$bin/gonka-localnet" init --home home --accounts 4 --diloco-run spec.json \
  --diloco-pool 1000000ngonka >/dev/null || fail "init"
"$bin/gonka-localnet" start --home home --rpc 127.0.0.1:0 --rpc-addr-file rpc.addr \
  --block-time 250ms --check-invariants >>node.log 2>&1 &
node_pid=$!
disown "$node_pid"
for _ in $(seq 1 100); do [ -s rpc.addr ] && break; sleep 0.05; done
[ -s rpc.addr ] || fail "node did not start"
node="http://$(cat rpc.addr)"

alive() { kill -0 "$node_pid" 2>/dev/null || fail "the node stopped (an invariant broke?)"; }
height() { "$dg" status --node "$node" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["latest_block_height"])'; }
until_height() { # waits until the latest block is at least $1
  for _ in $(seq 1 600); do
    alive
    [ "$(height)" -ge "$1" ] && return 0
    sleep 0.05
  done
  fail "height did not reach $1"
}
tx() { # tx KEY_INDEX SUBCOMMAND ARGS...: must succeed
  local who="$1" sub="$2"
  shift 2
  "$dg" tx "$sub" --key "home/keys/account-$who.key" --node "$node" --gas 3000000 --json "$@" \
    >"tx-$who-$sub.json" 2>&1 || fail "tx $sub by account $who: $(cat "tx-$who-$sub.json")"
}
# Background jobs: `bg CMD...` starts one, `join_all` waits for them and
# fails if any failed (a failure inside a job only ends that job).
pids=()
bg() { "$@" & pids+=($!); }
join_all() {
  local p bad=0
  for p in "${pids[@]}"; do wait "$p" || bad=1; done
  pids=()
  [ "$bad" = 0 ] || fail "a background transaction failed (see above)"
}
addr() { "$dg" keys show --key "home/keys/account-$1.key" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])'; }
balance() { "$dg" query balance "$1" --node "$node" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["amount"])'; }
round_json() { "$dg" query round 1 0 --node "$node" --json >round.json || fail "query round"; }
pyround() { python3 -c "import json; r=json.load(open('round.json')); $1"; }

declare -A A
for i in 0 1 2 3; do A[$i]=$(addr "$i"); done
for i in 1 2 3; do
  bg tx "$i" join-run --run 1 --artifact-url "http://127.0.0.1:900$i" --hw-class cpu-x86 \
    --collateral 10000ngonka
done
join_all
"$dg" query run 1 --node "$node" --json >run.json || fail "query run"
python3 -c "
import json
r = json.load(open('run.json'))
assert sorted(m['rank'] for m in r['members']) == [0, 1, 2] and r['run']['next_rank'] == 3, r" ||
  fail "ranks are not 0, 1, 2: $(cat run.json)"
ok "hosts 1-3 joined run 1 (created in genesis) and got ranks 0, 1 and 2"

# Round 0 opens at the first Inference height of epoch 1 where it fits.
for _ in $(seq 1 600); do
  alive
  "$dg" query run 1 --node "$node" --json >run.json 2>/dev/null &&
    python3 -c "import json,sys; r=json.load(open('run.json')); sys.exit(0 if r.get('current_round') else 1)" &&
    break
  sleep 0.05
done
python3 - <<'PY' >windows.env || fail "no round opened"
import json
r = json.load(open("run.json"))["current_round"]
for k, v in r["windows"].items():
    print(f"{k}={v}")
PY
source windows.env
ok "round 0 opened at $train_start: commit $commit_start, reveal $reveal_start, verify $verify_start, open $open_start, dispute $dispute_start, attest $attest_start, end $end"

# Payload files: real MMR commitments (run 1, round 0).
for i in 1 2 3; do
  "$bin/gd-bench-codec" --write-sample "p$i.gdpl" --codec int8 --values $((3000 + i)) \
    --chunk-elems 1000 >/dev/null || fail "payload $i"
done
until_height "$commit_start"
for i in 1 2 3; do
  bg tx "$i" commit-round --run 1 --round 0 --payload "p$i.gdpl" \
    --transcript-root "$(printf '%064x' "$i")" --segments 3
done
join_all
ok "three commitments"

until_height "$reveal_start"
round_json
beacon=$(pyround 'print(r["round"]["beacon"])')
for i in 1 2 3; do
  for t in 1 2 3; do
    [ "$i" = "$t" ] && continue
    bg tx "$i" report-availability --run 1 --round 0 --target "${A[$t]}" --payload "p$t.gdpl"
  done
  join_all
done
ok "availability reported with MMR proofs of the beacon-chosen chunks"

until_height "$verify_start"
round_json
[ "$(pyround 'print(len(r["round"]["inclusion_set"]))')" = 3 ] || fail "inclusion set: $(cat round.json)"
pyround '
for a in r["assignments"]:
    print(a["target"], a["check"], a["segment"], " ".join(a["validators"]))' >checks.txt
[ -s checks.txt ] || fail "no checks assigned"
digest() { printf '%s' "$1/$2" | sha256sum | cut -c1-64; }
verdicts_of() { # verdicts_of HOST EXTRA_ARGS...: that validator's checks, in order
  local i="$1" target check segment validators v
  shift
  while read -r target check segment validators; do
    for v in $validators; do
      [ "$v" = "${A[$i]}" ] || continue
      tx "$i" submit-verdict --run 1 --round 0 --target "$target" --check "$check" \
        --verdict pass --digest "$(digest "$target" "$segment")" "$@"
    done
  done <checks.txt
}
verdict_all() { # validators in parallel
  for i in 1 2 3; do bg verdicts_of "$i" "$@"; done
  join_all
}
verdict_all --seal-only
ok "$(wc -l <checks.txt) checks sealed"
until_height "$open_start"
verdict_all
ok "verdicts revealed"

until_height "$attest_start"
round_json
[ "$(pyround 'print(len(r["round"]["aggregation_set"]))')" = 3 ] || fail "aggregation set"
next=$(printf 'G1' | sha256sum | cut -c1-64)
for i in 1 2 3; do bg tx "$i" attest-round --run 1 --round 0 --state-hash "$next"; done
join_all
until_height "$end"
round_json
[ "$(pyround 'print(r["round"]["phase"])')" = done ] || fail "round not done: $(cat round.json)"
"$dg" query run 1 --node "$node" --json >run.json
python3 -c "import json; r=json.load(open('run.json'))['run']; assert r['state_hash']=='$next', r" ||
  fail "run state hash is not the attested one"
ok "round 0 done; the run's state hash is the attested G1"

# Epoch 2 starts at 120 (settlement); its claim-money stage is 145.
until_height 121
"$dg" tx claim-rewards --key home/keys/account-1.key --node "$node" --run 1 --epoch 1 \
  --gas 3000000 >early.txt 2>&1 && fail "a claim before the claim stage was accepted"
grep -q "code 18" early.txt || grep -q '"code": 18' early.txt ||
  fail "early claim: $(cat early.txt)"
until_height 145
total=0
for i in 1 2 3; do
  owed=$("$dg" query rewards "${A[$i]}" --node "$node" --json | python3 -c '
import json,sys
a = [x for x in json.load(sys.stdin)["amounts"] if str(x["epoch"]) == "1"]
print(a[0]["amount"] if a else 0)')
  [ "$owed" -gt 0 ] || fail "nothing settled to host $i"
  before=$(balance "${A[$i]}")
  tx "$i" claim-rewards --run 1 --epoch 1
  after=$(balance "${A[$i]}")
  # The claim paid the client's default fee: ceil(3000000 gas x 0.0025ngonka).
  fee=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fee"])' \
        "tx-$i-claim-rewards.json")
  [ "$fee" = 7500ngonka ] || fail "host $i: the claim paid $fee, not the default 7500ngonka"
  [ "$after" = $((before + owed - 7500)) ] ||
    fail "host $i: balance $before + $owed - 7500 (fee) != $after"
  total=$((total + owed))
done
ok "claims paid exactly the settle amounts ($total of the 90000 epoch reward), less the default fee"
"$dg" tx claim-rewards --key home/keys/account-1.key --node "$node" --run 1 --epoch 1 \
  --gas 3000000 >twice.txt 2>&1 && fail "a second claim was accepted"
grep -q "16" twice.txt || fail "second claim: $(cat twice.txt)"
alive
ok "second claim refused; every block passed the invariant checks"
