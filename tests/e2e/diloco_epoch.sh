#!/usr/bin/env bash
# A full epoch of the DiLoCo training module (protocol v2) on gonka-localnet,
# driven by scripted `gonka-diloco tx` commands (no trainer): the commands'
# wiring, not training. The layout digest, G_0, transcript roots, verdict
# digests and state hashes are placeholders the module stores and compares
# but never recomputes; the epoch with every value real (trained,
# re-executed, aggregated) is test_member_epoch and, with separate daemon
# processes, e2e_node_daemons. Genesis creates
# run 1; six hosts of the run's one hardware class join and get ranks 0 to
# 5, and seal a secret for round 0; round 0 opens in epoch 1's Inference
# phase; each host commits a real payload file, reveals its secret, reports
# the others' payloads with MMR proofs of the chunks drawn from the round's
# seed, seals and reveals PASS verdicts (salted) on its assigned checks, and
# seals and reveals the next state hash; every check passes undisputed and
# the round is DONE; one host leaves the run with `node leave` and gets its
# collateral back;
# epoch 1 settles when epoch 2 starts; at the claim-money stage each host
# claims, and its balance grows by exactly its settle amount less the fee;
# a second claim is refused.
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
hosts="1 2 3 4 5 6"

cat >spec.json <<'JSON'
{
  "model": "tiny",
  "layout_digest": "1111111111111111111111111111111111111111111111111111111111111111",
  "seed": "1",
  "data_spec": "synthetic:markov:1",
  "initial_state_hash": "2222222222222222222222222222222222222222222222222222222222222222",
  "data_digest": "3333333333333333333333333333333333333333333333333333333333333333",
  "h_min": 20, "h_max": 40, "segment_steps": 10, "tokens_per_step": "512",
  "outer_lr_ppm": 700000, "outer_momentum_ppm": 900000, "codec": "int8",
  "windows": {"train": 2, "commit": 32, "reveal": 16, "verify": 88, "open": 48,
              "dispute": 2, "dispute_open": 2, "attest": 18, "attest_open": 22},
  "reward_per_epoch": "90000ngonka", "min_collateral": "100000ngonka",
  "fail_bond": "1000ngonka", "checks_per_commit": 2, "double_check_ppm": 500000,
  "recheck_validators": 3, "validator_share_ppm": 200000, "attest_share_ppm": 50000,
  "hw_classes": ["cpu-x86"], "min_class_members": 6, "avail_chunks": 2,
  "cheat_slash": "90000ngonka", "skip_slash": "1000ngonka",
  "withhold_slash": "45000ngonka", "suspend_rounds": 2,
  "max_members": 16,
  "inner_lr": "0.003", "inner_min_lr": "0.0003", "inner_warmup_steps": "10",
  "inner_schedule_steps": "1000", "adam_beta1": "0.9", "adam_beta2": "0.95",
  "adam_eps": "0.00000001", "weight_decay": "0.1", "grad_clip": "1",
  "batch": 8, "seq_len": 64, "micro_batch": 8, "clip_factor": "2",
  "error_feedback": true, "error_feedback_decay": "1", "chunk_elems": 1000,
  "overlap": false
}
JSON
# Epochs of 260 blocks: epoch 1's PoC starts at 20, epoch 2's at 280 (its
# claim-money stage at 305), and round 0's 230 blocks fit in between (from
# 42, where epoch 1's Inference phase begins). The windows leave each host
# several times the blocks its transactions need, so that a loaded machine
# does not push one past its window: in the verify window each host sends
# five reports and its sealed verdicts one transaction after another, each
# a CLI start and a block or two (at 250 ms a block). Nothing is disputed,
# so the dispute windows are short and the attest windows long: under the
# sanitizers six hosts' attestations at once took 16 blocks to land.
epoch_length=260
poc2=$((20 + epoch_length))
"$bin/gonka-localnet" init --home home --accounts 7 --epoch-length "$epoch_length" --diloco-run spec.json \
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
  for _ in $(seq 1 1200); do
    alive
    [ "$(height)" -ge "$1" ] && return 0
    sleep 0.05
  done
  fail "height did not reach $1"
}
seq_no=0
tx() { # tx KEY_INDEX SUBCOMMAND ARGS...: must succeed; its JSON goes to $last
  local who="$1" sub="$2"
  shift 2
  last="tx-$who-$sub-$BASHPID-$((seq_no++)).json"
  "$dg" tx "$sub" --key "home/keys/account-$who.key" --node "$node" --gas 3000000 --json "$@" \
    >"$last" 2>&1 || fail "tx $sub by account $who: $(cat "$last")"
}
json_key() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
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
# What host $1's round driver would do now (a dry run; the hosts seal no
# secret for round 1, so --sealed-next keeps that duty out).
duties() { "$dg" node duties --run 1 --address "${A[$1]}" --sealed-next --node "$node" --json \
  >"duties-$1.json" || fail "node duties: $(cat "duties-$1.json")"; }
pyduties() { python3 -c "import json; d=json.load(open('duties-$1.json')); $2"; }
pyround() { python3 -c "import json; r=json.load(open('round.json')); $1"; }

declare -A A
for i in 0 $hosts; do A[$i]=$(addr "$i"); done
"$dg" tx join-run --key home/keys/account-1.key --node "$node" --gas 3000000 --run 1 \
  --artifact-url http://127.0.0.1:9001 --hw-class gpu-h100 --collateral 200000ngonka \
  >private.txt 2>&1 && fail "a class the run does not accept was joined"
grep -q "not one of run 1's" private.txt || fail "private class: $(cat private.txt)"
ok "a hardware class the run does not list is refused"
join_and_seal() {
  tx "$1" join-run --run 1 --artifact-url "http://127.0.0.1:900$1" --hw-class cpu-x86 \
    --collateral 200000ngonka
  tx "$1" randomness --run 1 --round 0 --seal-only
  json_key "$last" secret >"secret-$1"
}
for i in $hosts; do bg join_and_seal "$i"; done
join_all
"$dg" query run 1 --node "$node" --json >run.json || fail "query run"
python3 -c "
import json
r = json.load(open('run.json'))
assert sorted(m['rank'] for m in r['members']) == [0, 1, 2, 3, 4, 5] and r['run']['next_rank'] == 6, r" ||
  fail "ranks are not 0 to 5: $(cat run.json)"
ok "hosts 1-6 joined run 1 (created in genesis), got ranks 0 to 5 and sealed secrets for round 0"

# Payload files: real MMR commitments (run 1, round 0) of stand-in values,
# not of the run's spec, so they are committed by their root, leaves and
# size (`tx commit-round --payload` refuses a header that is not the run's
# and the signer's: the CLI tests play that). They are made before the
# round opens, so that the commit window is left to the commitments (a
# sanitizer build takes seconds over the files).
for i in $hosts; do
  "$bin/gd-bench-codec" --write-sample "p$i.gdpl" --codec int8 --values $((3000 + i)) \
    --chunk-elems 1000 >/dev/null || fail "payload $i"
  "$dg" payload inspect "p$i.gdpl" --json >"p$i.json" || fail "inspect payload $i"
done

# Round 0 opens at the first Inference height of epoch 1 where it fits.
for _ in $(seq 1 1200); do
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
ok "round 0 opened at $train_start: commit $commit_start, reveal $reveal_start, verify $verify_start, open $open_start, dispute $dispute_start/$dispute_open_start, attest $attest_start/$attest_open_start, end $end"

until_height "$commit_start"
for i in $hosts; do
  read -r root leaves bytes < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["root"], j["leaf_count"], j["wire_bytes"])' "p$i.json")
  bg tx "$i" commit-round --run 1 --round 0 --payload-root "$root" --payload-leaves "$leaves" \
    --payload-bytes "$bytes" --transcript-root "$(printf '%064x' "$i")" --segments 3
done
join_all
ok "six commitments"

until_height "$reveal_start"
for i in $hosts; do bg tx "$i" randomness --run 1 --round 0 --secret "$(cat "secret-$i")"; done
join_all
ok "secrets revealed"

until_height "$verify_start"
round_json
[ "$(pyround 'print(len(r["randomness"]))')" = 6 ] || fail "randomness records: $(cat round.json)"
pyround '
for a in r["assignments"]:
    print(a["target"], a["check"], a["segment"], " ".join(a["validators"]))' >checks.txt
[ "$(wc -l <checks.txt)" = 12 ] || fail "not two checks per commitment: $(cat checks.txt)"
digest() { printf '%s' "$1/$2" | sha256sum | cut -c1-64; }
# One host's duties in the verify window: its reports, then its sealed
# verdicts (each salt kept for the reveal), and its own digest of each check
# of its own commitment (the same stand-in digest: what it kept training).
mine() { [ "$1" = "${A[$2]}" ] && echo "$1" || echo "$3"; }
verify_duties() {
  local i="$1" t target check segment validators v
  for t in $hosts; do
    [ "$i" = "$t" ] && continue
    tx "$i" report-availability --run 1 --round 0 --target "${A[$t]}" --payload "p$t.gdpl"
  done
  while read -r target check segment validators; do
    for v in $(mine "$target" "$i" "$validators"); do
      [ "$v" = "${A[$i]}" ] || continue
      tx "$i" submit-verdict --run 1 --round 0 --target "$target" --check "$check" \
        --verdict pass --digest "$(digest "$target" "$segment")" --seal-only
      json_key "$last" salt >"salt-$i-$target-$check"
    done
  done <checks.txt
}
duties 1
pyduties 1 '
reports = [x["target"] for x in d["duties"] if x["duty"] == "report"]
assert len(reports) == 5 and d["window"] == "verify", d' || fail "host 1's driver: $(cat duties-1.json)"
want=$(awk -v a="${A[1]}" '{if ($1 == a) n++; for (i = 4; i <= NF; i++) if ($i == a) n++} END {print n + 0}' checks.txt)
[ "$(pyduties 1 'print(sum(1 for x in d["duties"] if x["duty"] == "check"))')" = "$want" ] ||
  fail "host 1's driver does not list its $want checks: $(cat duties-1.json)"
for i in $hosts; do bg verify_duties "$i"; done
join_all
duties 1
[ "$(pyduties 1 'print(len(d["duties"]))')" = 0 ] || fail "duties left: $(cat duties-1.json)"
ok "host 1's round driver listed exactly its reports, checks and own digests, and nothing once they landed"
ok "availability reported with proofs of the seed-drawn chunks; $(ls salt-* | wc -l) verdicts sealed"

until_height "$open_start"
round_json
[ "$(pyround 'print(len(r["round"]["inclusion_set"]))')" = 6 ] || fail "inclusion set: $(cat round.json)"
reveal_verdicts() {
  local i="$1" target check segment validators v
  while read -r target check segment validators; do
    for v in $(mine "$target" "$i" "$validators"); do
      [ "$v" = "${A[$i]}" ] || continue
      tx "$i" submit-verdict --run 1 --round 0 --target "$target" --check "$check" \
        --verdict pass --digest "$(digest "$target" "$segment")" \
        --salt "$(cat "salt-$i-$target-$check")"
    done
  done <checks.txt
}
for i in $hosts; do bg reveal_verdicts "$i"; done
join_all
ok "verdicts revealed"

until_height "$attest_start"
round_json
pyround '
bad = [a for a in r["assignments"] if a["outcome"] != "passed" or a["recheckers"]]
assert not bad, bad' || fail "a check did not pass undisputed: $(cat round.json)"
[ "$(pyround 'print(len(r["round"]["aggregation_set"]))')" = 6 ] || fail "aggregation set"
next=$(printf 'G1' | sha256sum | cut -c1-64)
seal_attest() {
  tx "$1" attest-round --run 1 --round 0 --state-hash "$next" --seal-only
  json_key "$last" salt >"attest-salt-$1"
}
for i in $hosts; do bg seal_attest "$i"; done
join_all
until_height "$attest_open_start"
for i in $hosts; do
  bg tx "$i" attest-round --run 1 --round 0 --state-hash "$next" --salt "$(cat "attest-salt-$i")"
done
join_all
until_height "$end"
round_json
[ "$(pyround 'print(r["round"]["phase"])')" = done ] || fail "round not done: $(cat round.json)"
"$dg" query run 1 --node "$node" --json >run.json
python3 -c "import json; r=json.load(open('run.json'))['run']; assert r['state_hash']=='$next', r" ||
  fail "run state hash is not the attested one"
ok "round 0 done; the run's state hash is the attested G1"

# No round is live (the next does not fit before epoch 2's PoC), so a host
# that leaves gets its collateral back at once.
# Host 6 leaves as an operator would: `node leave` with its node.yaml.
"$dg" node init --home n6 --chain-id prod-sim --node "$node" --key home/keys/account-6.key \
  --run 1 >/dev/null || fail "node init"
before=$(balance "${A[6]}")
"$dg" node leave --config n6/node.yaml --json >leave.json || fail "node leave: $(cat leave.json)"
after=$(balance "${A[6]}")
fee=$(json_key leave.json fee)
[ "$(json_key leave.json result)" = left ] && [ "$after" = $((before + 200000 - ${fee%ngonka})) ] ||
  fail "host 6 left: balance $before + 200000 collateral - $fee fee != $after: $(cat leave.json)"
"$dg" node leave --config n6/node.yaml --json >again.json || fail "second node leave"
[ "$(json_key again.json result)" = "not a member" ] || fail "second leave: $(cat again.json)"
[ -f n6/state/leave ] && [ "$(stat -c %a n6/state/leave)" = 600 ] \
  || fail "the state directory does not record the leave"
ok "host 6 left the run with node leave and got its 200000ngonka collateral back"

until_height $((poc2 + 1))
"$dg" tx claim-rewards --key home/keys/account-1.key --node "$node" --run 1 --epoch 1 \
  --gas 3000000 >early.txt 2>&1 && fail "a claim before the claim stage was accepted"
grep -q "code 18" early.txt || grep -q '"code": 18' early.txt ||
  fail "early claim: $(cat early.txt)"
until_height $((poc2 + 25))
total=0
for i in $hosts; do
  owed=$("$dg" query rewards "${A[$i]}" --node "$node" --json | python3 -c '
import json,sys
a = [x for x in json.load(sys.stdin)["amounts"] if str(x["epoch"]) == "1"]
print(a[0]["amount"] if a else 0)')
  [ "$owed" -gt 0 ] || fail "nothing settled to host $i"
  duties "$i"
  pyduties "$i" 'assert d["duties"] == [{"duty": "claim", "epoch": 1}], d' ||
    fail "host $i's driver before its claim: $(cat "duties-$i.json")"
  before=$(balance "${A[$i]}")
  tx "$i" claim-rewards --run 1 --epoch 1
  duties "$i"
  [ "$(pyduties "$i" 'print(len(d["duties"]))')" = 0 ] || fail "host $i: a claim still due"
  after=$(balance "${A[$i]}")
  # The claim paid the client's default fee: ceil(3000000 gas x 0.0025ngonka).
  fee=$(json_key "$last" fee)
  [ "$fee" = 7500ngonka ] || fail "host $i: the claim paid $fee, not the default 7500ngonka"
  [ "$after" = $((before + owed - 7500)) ] ||
    fail "host $i: balance $before + $owed - 7500 (fee) != $after"
  total=$((total + owed))
done
[ "$total" -gt 89000 ] && [ "$total" -le 90000 ] || fail "the hosts were settled $total of 90000"
ok "claims paid exactly the settle amounts ($total of the 90000 epoch reward: tokens, checks, attestations), less the default fee"
"$dg" tx claim-rewards --key home/keys/account-1.key --node "$node" --run 1 --epoch 1 \
  --gas 3000000 >twice.txt 2>&1 && fail "a second claim was accepted"
grep -q "16" twice.txt || fail "second claim: $(cat twice.txt)"
alive
ok "second claim refused; every block passed the invariant checks"
