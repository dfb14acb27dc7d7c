#!/usr/bin/env bash
# gonka-diloco sim through the real binary: a small run with both baselines
# and validator spot checks prints per-round lines and a summary, --json has
# the documented keys, --eval-data moves every evaluation to another source,
# and bad input gets one "error:" line and exit 2 (1 for missing files).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0
small=(--model tiny --vocab 32 --data synthetic:markov:3 --workers 2 --inner-steps 4
       --segment-steps 2 --rounds 2 --batch 2 --seq 16 --eval-batches 2 --threads 2)

if out=$("$bin" sim "${small[@]}" --baseline ddp --baseline local --verify --warm-start 3 \
          2>progress.txt); then
  grep -q "^round    1/2 | inner loss [0-9.]* | eval loss [0-9.]* | sent" <<<"$out" ||
    bad "no round line: $out"
  # The round's time is the link model's, and says so.
  grep -q "| sim_wall [0-9.]* s$" <<<"$out" && ! grep -q "| wall " <<<"$out" ||
    bad "the round line does not label its time simulated: $out"
  # Piped, every phase says when it starts and when it is done, as plain
  # lines (no terminal redraws).
  for phase in "warm start" "evaluation of G_0" "DiLoCo rounds" "DDP baseline" "local baseline"; do
    grep -q "^sim: $phase \.\.\.$" progress.txt && grep -q "^sim: $phase done in [0-9.]* s$" progress.txt ||
      bad "no progress lines for the $phase: $(cat progress.txt)"
  done
  if grep -q $'\r' progress.txt; then bad "piped progress redraws: $(cat -A progress.txt)"; fi
  ok "sim progress, piped: $(wc -l <progress.txt) lines on stderr"
  grep -q "^DDP     eval loss" <<<"$out" && grep -q "^local   eval loss" <<<"$out" ||
    bad "no baseline lines: $out"
  grep -q "validators re-executed 4 segments; all matched" <<<"$out" || bad "no verification: $out"
  ok "sim text: $(grep '^excess loss DiLoCo' <<<"$out")"
else
  bad "sim failed: $out"
fi

if j=$("$bin" sim "${small[@]}" --codec topk:0.1 --overlap --warm-start 3 --baseline ddp \
       --baseline local --json); then
  /usr/bin/env python3 - "$j" <<'PY' || fail=1
import json, sys
d = json.loads(sys.argv[1])
need = {"diloco": ["eval_loss", "bytes_per_worker"], "ddp": ["eval_loss", "bytes_per_worker"],
        "local": ["eval_loss"]}
for part, keys in need.items():
    for k in keys:
        assert k in d[part], (part, k)
for k in ["entropy_floor", "loss_ratio", "byte_reduction", "utilization", "rounds"]:
    assert k in d, k
assert isinstance(d["entropy_floor"], float) and d["loss_ratio"] > 0 and d["byte_reduction"] > 1
assert [r["round"] for r in d["rounds"]] == [0, 1]
for r in d["rounds"]:
    assert isinstance(r["eval_loss"], float) and r["bytes_per_worker"] > 0
assert d["diloco"]["codec"] == "topk:0.1" and d["diloco"]["overlap"] is True
print("ok: sim --json keys present; byte reduction %.1fx" % d["byte_reduction"])
PY
else
  bad "sim --json failed: $j"
fi

# On a terminal the progress is one line redrawn in place, with elapsed and
# remaining time, erased before each round line.
if command -v script >/dev/null; then
  script -qec "$(printf '%q ' "$bin" sim "${small[@]}" --warm-start 3 --baseline ddp)" tty.txt \
    >/dev/null 2>&1
  if grep -q $'\r\e\\[Ksim: warm start: 1/3, 33% | elapsed [0-9.]* s | remaining ~[0-9.]* s' tty.txt &&
     grep -q $'\r\e\\[Ksim: DDP baseline: 1/9, 11% | elapsed [0-9.]* s | remaining ~' tty.txt &&
     grep -q $'\r\e\\[Kround    1/2 |' tty.txt && grep -q "sim: DDP baseline done in" tty.txt; then
    ok "sim progress on a terminal redraws one line with elapsed and remaining time"
  else
    bad "sim progress on a terminal: $(cat -A tty.txt | head -c 2000)"
  fi
else
  echo "skip: no script(1) to give sim a terminal"
fi

# --json: stdout stays one JSON object (progress is on stderr) and every
# round names each worker's committed payload root, the root the file
# --payload-dir wrote verifies against.
mkdir roots
if "$bin" sim "${small[@]}" --payload-dir roots --json >roots.json 2>roots.err; then
  want=$("$bin" payload inspect roots/r0001-worker-00001.gdpl --json |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["root"])')
  python3 - roots.json "$want" <<'PY' || fail=1
import json, re, sys
d = json.load(open(sys.argv[1]))
for r in d["rounds"]:
    assert [p["worker"] for p in r["payloads"]] == ["worker-00000", "worker-00001"], r
    for p in r["payloads"]:
        assert re.fullmatch("[0-9a-f]{64}", p["payload_root"]), p
assert d["rounds"][1]["payloads"][1]["payload_root"] == sys.argv[2], (d["rounds"][1], sys.argv[2])
print("ok: sim --json names each worker's payload root per round")
PY
  grep -q "^sim: DiLoCo rounds done" roots.err || bad "sim --json printed no progress: $(cat roots.err)"
else
  bad "sim --json --payload-dir failed: $(cat roots.err)"
fi

# --eval-data: every evaluation (start, rounds, baselines) reads it, the
# training does not change, and the JSON names it.
if a=$("$bin" sim "${small[@]}" --baseline ddp --baseline local --json) &&
   b=$("$bin" sim "${small[@]}" --eval-data synthetic:markov:4 --baseline ddp --baseline local --json); then
  /usr/bin/env python3 - "$a" "$b" <<'PY' || fail=1
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["eval_data"] == "synthetic:markov:3" and b["eval_data"] == "synthetic:markov:4", (a["eval_data"], b["eval_data"])
assert a["start_eval_loss"] != b["start_eval_loss"]
for part in ["diloco", "ddp", "local"]:
    assert a[part]["eval_loss"] != b[part]["eval_loss"], part
for ra, rb in zip(a["rounds"], b["rounds"]):
    assert ra["inner_loss"] == rb["inner_loss"] and ra["eval_loss"] != rb["eval_loss"]
assert a["entropy_floor"] != b["entropy_floor"]  # the floor is the evaluation source's
print("ok: sim --eval-data: DiLoCo eval loss %.4f -> %.4f, DDP %.4f -> %.4f" %
      (a["diloco"]["eval_loss"], b["diloco"]["eval_loss"], a["ddp"]["eval_loss"], b["ddp"]["eval_loss"]))
PY
else
  bad "sim --eval-data failed: $a $b"
fi
if out=$("$bin" sim "${small[@]}" --eval-data synthetic:markov:4); then
  grep -q "^evaluated on synthetic:markov:4 (trained on synthetic:markov:3)" <<<"$out" ||
    bad "sim does not say what it evaluated on: $out"
else
  bad "sim --eval-data (text output) failed: $out"
fi

# --payload-dir: the files a worker would serve, readable by payload
# inspect and verify (a flipped byte then fails verification).
mkdir pl
if "$bin" sim "${small[@]}" --codec int4 --payload-dir pl >/dev/null 2>err.txt; then
  n=$(ls pl | wc -l)
  f=pl/r0001-worker-00001.gdpl
  if [ "$n" -ne 4 ] || [ ! -f "$f" ]; then
    bad "--payload-dir wrote $n files: $(ls pl)"
  else
    root=$("$bin" payload inspect "$f" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["root"])')
    if "$bin" payload verify "$f" --root "$root" >/dev/null; then
      ok "--payload-dir: $n payloads, $f verifies against $root"
    else
      bad "payload verify of $f failed"
    fi
    printf '\x55' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") - 3 )) conv=notrunc 2>/dev/null
    if "$bin" payload verify "$f" --root "$root" >/dev/null 2>&1; then
      bad "a corrupted payload from --payload-dir still verifies"
    fi
  fi
else
  bad "sim --payload-dir failed: $(cat err.txt)"
fi
# A payload directory that does not exist yet is made, parents and all.
if "$bin" sim "${small[@]}" --payload-dir new/pl >/dev/null 2>err.txt &&
   [ -f new/pl/r0000-worker-00001.gdpl ]; then
  ok "--payload-dir creates a missing directory: $(ls new/pl | wc -l) payloads in new/pl"
else
  bad "sim --payload-dir into a missing directory: $(cat err.txt)"
fi

# --print-spec: the RunSpec of these flags, taken as is by gonka-localnet
# init --diloco-run and tx create-run; sim --spec of it runs the very same
# bits as the flags (a sim is a spec run without a chain).
preset=(--model tiny --data synthetic:markov:3 --workers 2 --inner-steps 4 --segment-steps 2
        --rounds 2 --batch 2 --seq 16 --eval-batches 2 --threads 2)
localnet="$(dirname "$bin")/gonka-localnet"
host_class=$("$bin" node hardware-class | head -1)
if "$bin" sim "${preset[@]}" --lr 4e-3 --print-spec > spec.json 2>err.txt; then
  python3 - spec.json "$host_class" <<'PY' || fail=1
import json, sys
s = json.load(open(sys.argv[1]))
assert s["model"] == "tiny" and s["inner_lr"] == "0.004" and s["inner_min_lr"] == "0.0004", s
assert s["h_max"] == 4 and s["segment_steps"] == 2 and s["tokens_per_step"] == "32", s
assert s["inner_schedule_steps"] == "8" and len(s["initial_state_hash"]) == 64, s
# The chain-side proposals of the v2 spec, and none of v1's proportional slashes.
assert "slash_ppm" not in s and "skip_slash_ppm" not in s, s
# A run this host's daemons join as printed: this host's class, and with 2
# workers the fewest checkers (one validator, one re-checker: 3 members).
assert s["hw_classes"] == [sys.argv[2]] and s["min_class_members"] == 3, s
assert s.get("double_check_ppm", 0) == 0 and s["recheck_validators"] == 1 and s["avail_chunks"] == 4, s
assert s["cheat_slash"] == s["reward_per_epoch"] == "1000000000ngonka", s
assert s["skip_slash"] == "10000000ngonka" and s["min_collateral"] == "2000000000ngonka", s
assert s["withhold_slash"] == "500000000ngonka", s  # half the epoch's reward (seed grinding)
assert s["suspend_rounds"] == 4 and s["max_members"] == 256 and s["attest_share_ppm"] == 50000, s
assert list(s["windows"]) == ["train", "commit", "reveal", "verify", "open", "dispute", "attest",
                              "dispute_open", "attest_open"], s["windows"]
assert sum(s["windows"].values()) == 76, s["windows"]
print("ok: sim --print-spec writes a complete RunSpec")
PY
  a=$("$bin" sim "${preset[@]}" --lr 4e-3 --verify --json)
  b=$("$bin" sim --spec spec.json --workers 2 --rounds 2 --eval-batches 2 --threads 2 --verify --json)
  if [ -n "$a" ] && [ "$(sed 's/"wall[^,]*,//g; s/"utilization[^,]*,//g' <<<"$a" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([r["eval_loss"] for r in d["rounds"]], d["diloco"]["bytes_per_worker"])')" = \
       "$(sed 's/"wall[^,]*,//g; s/"utilization[^,]*,//g' <<<"$b" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([r["eval_loss"] for r in d["rounds"]], d["diloco"]["bytes_per_worker"])')" ]; then
    ok "sim --spec of the printed spec gives the flags' losses and bytes exactly"
  else
    bad "sim --spec differs from the flags: $a / $b"
  fi
  if "$localnet" init --home ln --accounts 2 --diloco-run spec.json >/dev/null 2>err.txt; then
    ok "gonka-localnet init --diloco-run takes the printed spec"
  else
    bad "gonka-localnet init --diloco-run refused the printed spec: $(cat err.txt)"
  fi
  # Rounds of 79 blocks never fit the 78-block Inference phase of the
  # default 100-block epochs (PoC 10 + 2 + 10): refused with both numbers;
  # 101-block epochs leave room for one.
  python3 -c 'import json,sys; s=json.load(open("spec.json")); s["windows"]["train"]+=3; json.dump(s,open("long.json","w"))'
  if "$localnet" init --home ln2 --accounts 2 --diloco-run long.json >/dev/null 2>err.txt; then
    bad "gonka-localnet init --diloco-run took rounds longer than an epoch's Inference phase"
  elif grep -q "a round takes 79 blocks.*the 78 blocks of an epoch's Inference phase" err.txt &&
       [ ! -e ln2/genesis.json ]; then
    ok "gonka-localnet init --diloco-run refuses rounds that never fit: $(cat err.txt)"
  else
    bad "gonka-localnet init --diloco-run refusal does not say why: $(cat err.txt)"
  fi
  if "$localnet" init --home ln3 --accounts 2 --epoch-length 101 --diloco-run long.json \
       >/dev/null 2>err.txt; then
    ok "gonka-localnet init --diloco-run takes them with epochs of 101 blocks"
  else
    bad "gonka-localnet init --epoch-length 101 refused 79-block rounds: $(cat err.txt)"
  fi
  "$bin" keys import --hex 0000000000000000000000000000000000000000000000000000000000000005 \
    --out k.key >/dev/null
  if "$bin" tx create-run --spec spec.json --pool 1000ngonka --key k.key --offline \
       --chain-id prod-sim --account-number 0 --sequence 0 --json >/dev/null 2>err.txt; then
    ok "tx create-run takes the printed spec"
  else
    bad "tx create-run refused the printed spec: $(cat err.txt)"
  fi
  python3 - spec.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["initial_state_hash"] = "ab" * 32
json.dump(s, open("wrong_g0.json", "w"))
s = json.load(open(sys.argv[1]))
s["data_spec"] = "synthetic:markov:2"
json.dump(s, open("other_data.json", "w"))
PY
  check 2 "--spec naming another G_0" -- sim --spec wrong_g0.json --workers 2 --rounds 1
  check 2 "--spec whose data_digest is not its data's" -- sim --spec other_data.json --workers 2 --rounds 1
  grep -q "data_digest is" err.txt || bad "the refusal does not name data_digest: $(cat err.txt)"
  check 2 "--spec with a flag the spec fixes" -- sim --spec spec.json --lr 0.01
  check 2 "--spec with --data" -- sim --spec spec.json --data synthetic:markov:3
  check 1 "--spec of a missing file" -- sim --spec /no/such/spec.json
else
  bad "sim --print-spec failed: $(cat err.txt)"
fi
"$bin" sim "${small[@]}" --print-spec > digest_spec.json 2>/dev/null
check 2 "--spec naming a model config digest without the config" -- sim --spec digest_spec.json --workers 2
check 2 "--print-spec with --warm-start" -- sim "${preset[@]}" --warm-start 3 --print-spec
check 2 "an inner lr with too many decimals" -- sim "${preset[@]}" --lr 1e-30
check 2 "an outer lr with more than six decimals" -- sim "${preset[@]}" --outer-lr 0.1234567
check 2 "a learning rate that is not a number" -- sim "${preset[@]}" --lr fast

check 2 "missing --data" -- sim --model tiny
check 2 "unknown codec" -- sim "${small[@]}" --codec int9
check 2 "unknown attention" -- sim "${small[@]}" --attention sparse
grep -q "attention 'sparse' is not naive or flash" err.txt || bad "--attention sparse: $(cat err.txt)"
# --attention flash is the run's: its spec says so, and runs.
if "$bin" sim "${preset[@]}" --attention flash --print-spec > flash_spec.json 2>err.txt &&
   python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["attention"] == "flash"' flash_spec.json &&
   "$bin" sim --spec flash_spec.json --workers 2 --rounds 1 --eval-batches 1 --threads 2 --verify \
     > flash_run.txt 2>&1; then
  ok "sim --attention flash: the spec carries it and a round runs and verifies"
else
  bad "sim --attention flash: $(cat err.txt flash_run.txt 2>/dev/null | tail -5)"
fi
# bf16 storage and moments are the run's too: a round trained in bf16 is
# re-executed by its checks to the same bits.
check 2 "unknown precision" -- sim "${small[@]}" --precision fp16
grep -q "precision 'fp16' is not fp32 or bf16" err.txt || bad "--precision fp16: $(cat err.txt)"
if "$bin" sim "${preset[@]}" --precision bf16 --moments bf16 --print-spec > bf16_spec.json 2>err.txt &&
   python3 -c 'import json,sys; s = json.load(open(sys.argv[1])); assert s["precision"] == s["moments"] == "bf16"' bf16_spec.json &&
   "$bin" sim --spec bf16_spec.json --workers 2 --rounds 1 --eval-batches 1 --threads 2 --verify \
     > bf16_run.txt 2>&1; then
  ok "sim --precision bf16 --moments bf16: the spec carries them and a round runs and verifies"
else
  bad "sim --precision bf16: $(cat err.txt bf16_run.txt 2>/dev/null | tail -5)"
fi
# --timeline models a round without training: the 32B shape's payload
# goes to and comes from each of 7 peers, a segment start (12 bytes a
# parameter) each way for the one check; the rates given are not measured.
if out=$("$bin" sim --timeline --model-config "$src/docs/examples/qwen2.5-32b-like.json" \
    --workers 8 --link-mbps 100 --step-s 2 --disk 2000 --hash 1500 --inner-steps 500 \
    --segment-steps 50 --json) && python3 -c '
import json, sys
d = json.loads(sys.argv[1])
names = [p["name"] for p in d["phases"]]
assert names == ["train", "seal", "commit", "exchange", "aggregate", "verify", "settle"], names
assert d["phases"][0]["end_s"] == 1000 and d["measured"] == ["coding"], d
P, pay = d["params"], d["payload_bytes"]
assert abs(d["bytes_up"] - (7 * pay + 12 * P)) < 1 and d["bytes_down"] == d["bytes_up"], d
assert 0 < d["utilization"] < 1 and d["round_s"] == d["phases"][-1]["end_s"], d
ex = d["phases"][3]
assert abs(ex["end_s"] - ex["start_s"] - (0.05 + 7 * pay / 12.5e6)) < 1e-3, ex
' "$out"; then
  ok "sim --timeline: phases, bytes and utilization of a 32B round at 100 Mbit/s"
else
  bad "sim --timeline: $out"
fi
check 2 "timeline: a link of 0" -- sim --timeline --link-mbps 0 --step-s 1
check 2 "timeline: K not dividing H" -- sim --timeline --inner-steps 10 --segment-steps 3 --step-s 1
check 2 "unknown baseline" -- sim "${small[@]}" --baseline fedavg
check 2 "segment not dividing H" -- sim --model tiny --data synthetic:markov:3 --inner-steps 4 --segment-steps 3
check 2 "wrong number of speeds" -- sim "${small[@]}" --speeds 1,2,3
check 2 "a speed too small for a finite wall time" -- sim "${small[@]}" --speeds 4.9e-324,1
check 2 "negative link" -- sim "${small[@]}" --link-mbps -5
check 2 "outer momentum of 1" -- sim "${small[@]}" --outer-momentum 1
check 1 "missing data file" -- sim --model tiny --data /no/such.bin --workers 2 --inner-steps 2 --rounds 1
check 2 "bad eval data spec" -- sim "${small[@]}" --eval-data synthetic:markov:x
check 1 "missing eval data file" -- sim "${small[@]}" --eval-data /no/such.bin
check 2 "eval data beyond the vocabulary" -- sim "${small[@]}" --eval-data synthetic:markov:3:64
head -c 20 /dev/zero | tr '\0' 'x' > short.txt
check 2 "eval data without an evaluation batch" -- sim "${small[@]}" --eval-data text:short.txt
check 1 "a payload dir with a file in the way" -- sim "${small[@]}" --payload-dir short.txt/pl
grep -q "cannot create directory short.txt: a file is in the way" err.txt ||
  bad "the refusal does not name the directory: $(cat err.txt)"

# --chain: members over the module's state machine, with the daemon's driver.
"$bin" sim --chain --model tiny --data synthetic:markov:1 --workers 3 --validators 1 --rounds 3 \
  --inner-steps 4 --segment-steps 2 --chunk-elems 4096 --threads 1 --json >chain.json 2>chain.log
code=$?
if [ "$code" = 0 ] && python3 -c '
import json
o = json.load(open("chain.json"))
assert o["refused"] == 0, o
assert [r["round"] for r in o["rounds"]] == [0, 1, 2], o
for r in o["rounds"]:
    assert r["phase"] == "done" and r["aggregated"] == 3 and r["checks_passed"] == 6, r
    assert len(r["state_hash"]) == 64, r
assert len({r["state_hash"] for r in o["rounds"]}) == 3
'; then ok "sim --chain: three rounds DONE, every check passed, nothing refused"
else echo "FAIL: sim --chain (exit $code): $(tail -5 chain.log)"; fail=1; fi
# --chain --overlap: each worker trains the next round ahead of it, from
# G_r minus its own decoded progress, and the validator checks that start.
GD_LOG=info "$bin" sim --chain --overlap --model tiny --data synthetic:markov:1 --workers 3 --validators 1 \
  --rounds 3 --inner-steps 4 --segment-steps 2 --chunk-elems 4096 --threads 1 --json \
  >chain-overlap.json 2>chain-overlap.log
code=$?
if [ "$code" = 0 ] && python3 -c '
import json
o = json.load(open("chain-overlap.json"))
plain = json.load(open("chain.json"))
assert o["refused"] == 0, o
assert [r["round"] for r in o["rounds"]] == [0, 1, 2], o
for r in o["rounds"]:
    assert r["phase"] == "done" and r["aggregated"] == 3 and r["checks_passed"] == 6, r
# Round 0 starts from G_0 either way; later rounds start overlapped.
assert o["rounds"][0]["state_hash"] == plain["rounds"][0]["state_hash"]
assert not {r["state_hash"] for r in o["rounds"][1:]} & {r["state_hash"] for r in plain["rounds"]}
' && grep -q "round 2 trained ahead" chain-overlap.log; then
  ok "sim --chain --overlap: rounds trained ahead, three rounds DONE, every check passed"
else echo "FAIL: sim --chain --overlap (exit $code): $(tail -5 chain-overlap.log)"; fail=1; fi
# A memory budget under a round's floor: segment starts written in the
# foreground, each worker's state read back from its file between rounds,
# G's arrays read from its file, an overlapped start made into a file of
# its own; the same bits, with and without overlap.
for mode in plain overlap; do
  extra=(); want=chain.json
  [ "$mode" = overlap ] && { extra=(--overlap); want=chain-overlap.json; }
  GD_LOG=info "$bin" sim --chain "${extra[@]}" --memory-budget 64K --model tiny \
    --data synthetic:markov:1 --workers 3 --validators 1 --rounds 3 --inner-steps 4 \
    --segment-steps 2 --chunk-elems 4096 --threads 1 --json >budget.json 2>budget.log
  code=$?
  if [ "$code" = 0 ] && WANT=$want python3 -c '
import json, os
o, want = json.load(open("budget.json")), json.load(open(os.environ["WANT"]))
assert o["refused"] == 0, o
assert [r["state_hash"] for r in o["rounds"]] == [r["state_hash"] for r in want["rounds"]], o
# G evaluated in the trainer from its file: the same loss as from memory.
assert [r["eval_loss"] for r in o["rounds"]] == [r["eval_loss"] for r in want["rounds"]], o
' && grep -q "segment starts written in the foreground, a round's start (G's params, or an overlapped start) read from its file, G's momentum and an aggregated G read from their files" budget.log &&
     grep -q "memory_budget 64.0 KiB is under what a round of this model still holds" budget.log; then
    ok "sim --chain $mode --memory-budget 64K: the same state hashes, starts in the foreground"
  else echo "FAIL: sim --chain $mode --memory-budget (exit $code): $(tail -5 budget.log)"; fail=1; fi
done
check 2 "a memory budget that is not a size" -- sim --chain --memory-budget 12Q --model tiny \
  --data synthetic:markov:1 --workers 3 --validators 1 --rounds 1
check 2 "a memory budget without --chain" -- sim --memory-budget 1G --model tiny \
  --data synthetic:markov:1 --rounds 1
# Each round line is flushed: a killed --chain run left redirected to a
# file shows the rounds it finished.
if killed_log "^round   0 " 30 killed.log -- sim --chain --model tiny --data synthetic:markov:1 \
     --workers 3 --validators 1 --rounds 200 --inner-steps 4 --segment-steps 2 --chunk-elems 4096 --threads 1; then
  ok "a killed sim --chain leaves its round lines in a redirected log"
else
  echo "FAIL: a killed sim --chain left no round line in its log: $(head -c 300 killed.log)"; fail=1
fi
check 2 "--chain with too few members" -- sim --chain --model tiny --data synthetic:markov:1 --workers 1 --validators 1 --rounds 1
# --backend takes only the registry's names.
out=$("$bin" sim --backend rocm --data synthetic:markov:1 --rounds 1 2>&1)
if [ $? -eq 2 ] && grep -q "unknown backend 'rocm'" <<<"$out"; then
  ok "sim --backend rocm is a usage error"
else
  echo "FAIL: sim --backend rocm: $out"; fail=1
fi
# --gpus: data parallelism needs the cuda backend.
out=$("$bin" sim --backend cpu --gpus 2 --data synthetic:markov:1 --rounds 1 2>&1)
if [ $? -eq 2 ] && grep -q "the cpu backend takes one rank" <<<"$out"; then
  ok "sim --backend cpu --gpus 2 is a usage error"
else
  echo "FAIL: sim --gpus 2 on cpu: $out"; fail=1
fi

exit $fail
