#!/usr/bin/env bash
# The training module's tx commands through the real binary, without a
# node: every kind signs offline, 'tx decode' shows its type URL and the
# signature verifies; malformed input to every tx and query command is one
# "error:" line and exit 2 (a missing file: 1).
# Usage: diloco_tx.sh GONKA_DILOCO [GD_BENCH_CODEC] (default: beside the first)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
bench=$(realpath "${2:-$(dirname "$1")/gd-bench-codec}")
spec=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../../docs/examples/run-spec.json")
if [ ! -x "$bench" ]; then
  echo "FAIL: $bench not built (build the gd-bench-codec target)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0

"$bin" keys import --hex 0000000000000000000000000000000000000000000000000000000000000003 \
  --out k.key >/dev/null || { echo "FAIL: key setup"; exit 1; }
me=$("$bin" keys show --key k.key --json | sed -n 's/.*"address": "\([^"]*\)".*/\1/p')
to=gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc
h=$(printf 'ab%.0s' {1..32})
z=$(printf '00%.0s' {1..32})
"$bench" --write-sample s.gdpl --codec int8 --values 50000 --chunk-elems 2000 >/dev/null ||
  { echo "FAIL: --write-sample failed"; exit 1; }
# The signer's own payload, for commit-round (s.gdpl is another worker's).
"$bench" --write-sample mine.gdpl --codec int8 --values 50000 --chunk-elems 2000 \
  --participant "$me" >/dev/null || { echo "FAIL: --write-sample --participant failed"; exit 1; }
off=(--offline --chain-id diloco-test --account-number 3 --sequence 1)

# Signs one command offline and checks the decoded type URL and signature.
signs() { # type-url description -- args...
  local url="$1" what="$2"
  shift 3
  local out b64 dec
  if ! out=$("$bin" "$@" --key k.key "${off[@]}" --json 2>err.txt); then
    bad "$what: $(cat err.txt)"
    return
  fi
  b64=$(sed -n 's/.*"tx_base64": "\([^"]*\)".*/\1/p' <<<"$out")
  if dec=$("$bin" tx decode "$b64" --chain-id diloco-test --account-number 3 2>err.txt) &&
     grep -q "\"@type\": \"$url\"" <<<"$dec" && grep -q '"signature": "valid"' <<<"$dec" &&
     grep -q "\"signer\": \"$me\"" <<<"$dec"; then
    ok "$what signs as $url"
  else
    bad "$what: decode: $(cat err.txt) $dec"
  fi
}

signs /gonka.diloco.v1.MsgCreateRun "create-run" -- tx create-run --spec "$spec" --pool 5000000000ngonka
signs /gonka.diloco.v1.MsgJoinRun "join-run" -- tx join-run --run 1 --artifact-url http://10.0.0.2:8080 \
  --hw-class cpu-x86-64 --collateral 100000000ngonka
signs /gonka.diloco.v1.MsgCommitRound "commit-round by hand" -- tx commit-round --run 1 --round 0 \
  --payload-root "$h" --payload-leaves 26 --payload-bytes 51234 --transcript-root "$h" --segments 4 \
  --loss-first-micro 2300000 --loss-last-micro 1900000
signs /gonka.diloco.v1.MsgCommitRound "commit-round --payload" -- tx commit-round --run 1 --round 0 \
  --payload mine.gdpl --transcript-root "$h" --segments 4
proof=$(printf '0500000006000000020000%s%s%s' 00 "$h" "$h")
signs /gonka.diloco.v1.MsgReportAvailability "report-availability --payload" -- tx report-availability \
  --run 1 --round 0 --target "$to" --payload s.gdpl --randomness "$h" --chunks 4
signs /gonka.diloco.v1.MsgReportAvailability "report-availability by hand" -- tx report-availability \
  --run 1 --round 0 --target "$to" --leaf-hash "$h" --proof "$proof"
signs /gonka.diloco.v1.MsgReportAvailability "report-availability by hand, two chunks" -- \
  tx report-availability --run 1 --round 0 --target "$to" --leaf-hash "$h" --proof "$proof" \
  --leaf-hash "$z" --proof "$proof"
signs /gonka.diloco.v1.MsgSubmitVerdict "submit-verdict --seal-only" -- tx submit-verdict --run 1 --round 0 \
  --target "$to" --check 0 --verdict pass --digest "$h" --seal-only
signs /gonka.diloco.v1.MsgSubmitVerdict "submit-verdict revealed" -- tx submit-verdict --run 1 --round 0 \
  --target "$to" --check 0 --verdict fail --digest "$h" --salt "$h"
signs /gonka.diloco.v1.MsgSubmitVerdict "submit-verdict unavailable" -- tx submit-verdict --run 1 --round 0 \
  --target "$to" --check 1 --verdict unavailable --salt "$z"
signs /gonka.diloco.v1.MsgDispute "dispute --seal-only" -- tx dispute --run 1 --round 0 --target "$to" \
  --check 0 --verdict pass --digest "$h" --seal-only
signs /gonka.diloco.v1.MsgDispute "dispute revealed" -- tx dispute --run 1 --round 0 --target "$to" \
  --check 0 --verdict unavailable --salt "$h"
signs /gonka.diloco.v1.MsgAttestRound "attest-round --seal-only" -- tx attest-round --run 1 --round 0 \
  --state-hash "$h" --seal-only
signs /gonka.diloco.v1.MsgAttestRound "attest-round revealed" -- tx attest-round --run 1 --round 0 \
  --state-hash "$h" --salt "$h"
signs /gonka.diloco.v1.MsgRandomness "randomness --seal-only" -- tx randomness --run 1 --round 1 --seal-only
signs /gonka.diloco.v1.MsgRandomness "randomness revealed" -- tx randomness --run 1 --round 1 --secret "$h"
signs /gonka.diloco.v1.MsgLeaveRun "leave-run" -- tx leave-run --run 1
signs /gonka.diloco.v1.MsgClaimRewards "claim-rewards" -- tx claim-rewards --run 1 --epoch 7

# A seal prints the salt its reveal needs, and the reveal with it carries it.
out=$("$bin" tx submit-verdict --run 1 --round 0 --target "$to" --check 0 --verdict pass --digest "$h" \
      --seal-only --key k.key "${off[@]}")
salt=$(sed -n 's/^salt: \([0-9a-f]\{64\}\)$/\1/p' <<<"$out")
if [ -n "$salt" ] && grep -q '^seal: [0-9a-f]\{64\}$' <<<"$out"; then
  ok "submit-verdict --seal-only prints salt $salt and the seal"
else
  bad "submit-verdict --seal-only output: $out"
fi
b64=$("$bin" tx submit-verdict --run 1 --round 0 --target "$to" --check 0 --verdict pass --digest "$h" \
      --salt "$salt" --key k.key "${off[@]}" --json | sed -n 's/.*"tx_base64": "\([^"]*\)".*/\1/p')
"$bin" tx decode "$b64" 2>/dev/null | grep -q "\"salt\": \"$(printf '%s' "$salt" | xxd -r -p | base64 -w0)\"" &&
  ok "the reveal carries the printed salt" || bad "the reveal does not carry salt $salt"

# Text output is tx send's.
out=$("$bin" tx claim-rewards --run 1 --epoch 7 --key k.key "${off[@]}")
grep -q '^tx_base64: ' <<<"$out" && grep -q '^txhash: [0-9A-F]\{64\}$' <<<"$out" ||
  bad "claim-rewards text output: $out"

# Bad input.
printf '{"model": "tiny", "colour": 1}' > unknown.json
printf '{"model": ' > broken.json
sed 's/"h_min": 40/"h_min": 45/' "$spec" > rule.json
sed 's/"seed": "1",/"seed": "1", "seed": "2",/' "$spec" > twice.json
sed 's/"inner_lr": "0.003"/"inner_lr": 0.003/' "$spec" > number.json
sed 's/"micro_batch": 8/"micro_batch": 3/' "$spec" > micro.json
tx=(--key k.key "${off[@]}")
check 2 "create-run without --spec" -- tx create-run --pool 1ngonka "${tx[@]}"
check 2 "create-run with an unknown key" -- tx create-run --spec unknown.json --pool 1ngonka "${tx[@]}"
check 2 "create-run with broken JSON" -- tx create-run --spec broken.json --pool 1ngonka "${tx[@]}"
check 2 "create-run breaking a rule" -- tx create-run --spec rule.json --pool 1ngonka "${tx[@]}"
check 2 "create-run with a key twice" -- tx create-run --spec twice.json --pool 1ngonka "${tx[@]}"
check 2 "create-run with a decimal as a JSON number" -- tx create-run --spec number.json --pool 1ngonka "${tx[@]}"
grep -q 'inner_lr must be a decimal in a JSON string' err.txt || bad "number.json: $(cat err.txt)"
check 2 "create-run with a micro-batch that does not divide the batch" -- tx create-run --spec micro.json --pool 1ngonka "${tx[@]}"
check 2 "create-run pool in another denom" -- tx create-run --spec "$spec" --pool 5stake "${tx[@]}"
check 2 "create-run bad pool" -- tx create-run --spec "$spec" --pool 5 "${tx[@]}"
check 1 "create-run missing spec file" -- tx create-run --spec none.json --pool 1ngonka "${tx[@]}"
check 2 "join-run without --run" -- tx join-run --artifact-url u --hw-class c --collateral 1ngonka "${tx[@]}"
check 2 "join-run non-numeric run" -- tx join-run --run one --artifact-url u --hw-class c --collateral 1ngonka "${tx[@]}"
check 2 "join-run bad collateral" -- tx join-run --run 1 --artifact-url u --hw-class c --collateral 1.5ngonka "${tx[@]}"
check 2 "join-run collateral over 64 bits" -- tx join-run --run 1 --artifact-url u --hw-class c --collateral 18446744073709551616ngonka "${tx[@]}"
check 2 "join-run empty hw class" -- tx join-run --run 1 --artifact-url u --hw-class "" --collateral 1ngonka "${tx[@]}"
check 2 "commit-round payload and root" -- tx commit-round --run 1 --round 0 --payload s.gdpl --payload-root "$h" --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "commit-round short root" -- tx commit-round --run 1 --round 0 --payload-root ab --payload-leaves 2 --payload-bytes 900 --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "commit-round one leaf" -- tx commit-round --run 1 --round 0 --payload-root "$h" --payload-leaves 1 --payload-bytes 900 --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "commit-round no segments" -- tx commit-round --run 1 --round 0 --payload-root "$h" --payload-leaves 2 --payload-bytes 900 --transcript-root "$h" --segments 0 "${tx[@]}"
check 2 "commit-round payload below a header" -- tx commit-round --run 1 --round 0 --payload-root "$h" --payload-leaves 2 --payload-bytes 143 --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "commit-round leaves over 32 bits" -- tx commit-round --run 1 --round 0 --payload-root "$h" --payload-leaves 4294967296 --payload-bytes 900 --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "commit-round payload of another round" -- tx commit-round --run 1 --round 3 --payload mine.gdpl --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "commit-round payload of another participant" -- tx commit-round --run 1 --round 0 --payload s.gdpl --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "commit-round without transcript root" -- tx commit-round --run 1 --round 0 --payload s.gdpl --segments 1 "${tx[@]}"
check 1 "commit-round missing payload file" -- tx commit-round --run 1 --round 0 --payload none.gdpl --transcript-root "$h" --segments 1 "${tx[@]}"
check 2 "report-availability bad target" -- tx report-availability --run 1 --round 0 --target gonka1zz --leaf-hash "$h" --proof 00 "${tx[@]}"
check 2 "report-availability own payload" -- tx report-availability --run 1 --round 0 --target "$me" --leaf-hash "$h" --proof "$(printf '0500000006000000020000%s%s%s' 00 "$h" "$h")" "${tx[@]}"
check 2 "report-availability offline without randomness" -- tx report-availability --run 1 --round 0 --target "$to" --payload s.gdpl "${tx[@]}"
check 2 "report-availability randomness without chunks" -- tx report-availability --run 1 --round 0 --target "$to" --payload s.gdpl --randomness "$h" "${tx[@]}"
check 2 "report-availability zero chunks" -- tx report-availability --run 1 --round 0 --target "$to" --payload s.gdpl --randomness "$h" --chunks 0 "${tx[@]}"
check 2 "report-availability randomness by hand" -- tx report-availability --run 1 --round 0 --target "$to" --leaf-hash "$h" --proof "$proof" --randomness "$h" "${tx[@]}"
check 2 "report-availability leaf without proof" -- tx report-availability --run 1 --round 0 --target "$to" --leaf-hash "$h" --proof "$proof" --leaf-hash "$h" "${tx[@]}"
check 2 "report-availability nothing to prove" -- tx report-availability --run 1 --round 0 --target "$to" "${tx[@]}"
check 2 "report-availability short leaf" -- tx report-availability --run 1 --round 0 --target "$to" --leaf-hash abcd --proof "$proof" "${tx[@]}"
check 2 "report-availability proof not hex" -- tx report-availability --run 1 --round 0 --target "$to" --leaf-hash "$h" --proof xyz "${tx[@]}"
check 2 "report-availability malformed proof" -- tx report-availability --run 1 --round 0 --target "$to" --leaf-hash "$h" --proof 0102 "${tx[@]}"
check 2 "report-availability payload and leaf" -- tx report-availability --run 1 --round 0 --target "$to" --payload s.gdpl --leaf-hash "$h" "${tx[@]}"
check 2 "submit-verdict bad verdict" -- tx submit-verdict --run 1 --round 0 --target "$to" --check 0 --verdict maybe --digest "$h" "${tx[@]}"
check 2 "submit-verdict pass without digest" -- tx submit-verdict --run 1 --round 0 --target "$to" --check 0 --verdict pass "${tx[@]}"
check 2 "submit-verdict unavailable with digest" -- tx submit-verdict --run 1 --round 0 --target "$to" --check 0 --verdict unavailable --digest "$h" "${tx[@]}"
check 2 "submit-verdict check out of range" -- tx submit-verdict --run 1 --round 0 --target "$to" --check 99 --verdict pass --digest "$h" --seal-only "${tx[@]}"
check 2 "submit-verdict on itself, not a pass" -- tx submit-verdict --run 1 --round 0 --target "$me" --check 0 --verdict fail --digest "$h" --seal-only "${tx[@]}"
check 2 "submit-verdict reveal without salt" -- tx submit-verdict --run 1 --round 0 --target "$to" --check 0 --verdict pass --digest "$h" "${tx[@]}"
check 2 "submit-verdict short salt" -- tx submit-verdict --run 1 --round 0 --target "$to" --check 0 --verdict pass --digest "$h" --salt "${h:2}" "${tx[@]}"
check 2 "dispute unavailable with a digest" -- tx dispute --run 1 --round 0 --target "$to" --check 0 --verdict unavailable --digest "$h" --seal-only "${tx[@]}"
check 2 "dispute without digest" -- tx dispute --run 1 --round 0 --target "$to" --check 0 --verdict fail --seal-only "${tx[@]}"
check 2 "dispute reveal without salt" -- tx dispute --run 1 --round 0 --target "$to" --check 0 --verdict fail --digest "$h" "${tx[@]}"
check 2 "attest-round without state hash" -- tx attest-round --run 1 --round 0 --seal-only "${tx[@]}"
check 2 "attest-round short state hash" -- tx attest-round --run 1 --round 0 --state-hash "${h:2}" --seal-only "${tx[@]}"
check 2 "attest-round reveal without salt" -- tx attest-round --run 1 --round 0 --state-hash "$h" "${tx[@]}"
check 2 "randomness reveal without secret" -- tx randomness --run 1 --round 1 "${tx[@]}"
check 2 "randomness short secret" -- tx randomness --run 1 --round 1 --secret "${h:2}" "${tx[@]}"
check 2 "randomness without round" -- tx randomness --run 1 --seal-only "${tx[@]}"
check 2 "leave-run without run" -- tx leave-run "${tx[@]}"
check 2 "claim-rewards without epoch" -- tx claim-rewards --run 1 "${tx[@]}"
check 2 "claim-rewards epoch overflow" -- tx claim-rewards --run 1 --epoch 18446744073709551616 "${tx[@]}"
check 2 "gas auto offline" -- tx claim-rewards --run 1 --epoch 2 --gas auto "${tx[@]}"
check 2 "offline without sequence" -- tx claim-rewards --run 1 --epoch 2 --key k.key --offline --chain-id c --account-number 0
check 2 "query run non-numeric" -- query run x --node http://127.0.0.1:9
check 2 "query round without ROUND" -- query round 1 --node http://127.0.0.1:9
check 2 "query rewards bad address" -- query rewards gonka1zz --node http://127.0.0.1:9
check 1 "query runs, node refused" -- query runs --node http://127.0.0.1:9 --retries 0
exit $fail
