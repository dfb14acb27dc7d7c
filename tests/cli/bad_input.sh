#!/usr/bin/env bash
# Runs the real gonka-diloco binary on malformed input: each case must exit
# with the expected status (1 or 2), print exactly one line on stderr
# starting "error: ", and never die from a signal or hang (each case is
# bounded by timeout, whose status 124 fails it).
set -uo pipefail
bin="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin" keys import --hex 0000000000000000000000000000000000000000000000000000000000000003 \
  --out good.key >/dev/null || { echo "setup failed"; exit 1; }
cp good.key open.key && chmod 644 open.key
printf 'type: secp256k1\nprivkey: zz\n' > broken.key && chmod 600 broken.key
printf 'abandon abandon abandon\n' > short.mnemonic && chmod 600 short.mnemonic
printf 'legal winner thank year wave sausage worth useful legal winner thank yellow\n' > good.mnemonic
chmod 600 good.mnemonic
head -c 3000 /dev/urandom > noise.bin && chmod 600 noise.bin
to=gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc
off=(--offline --chain-id c --account-number 0 --sequence 0)

fail=0
check() { # expected-status description -- command...
  local want="$1" what="$2"
  shift 3
  timeout 10 "$bin" "$@" >out.txt 2>err.txt
  local rc=$?
  local lines
  lines=$(wc -l <err.txt)
  if [ "$rc" -ne "$want" ] || [ "$lines" -ne 1 ] || ! grep -q '^error: ' err.txt; then
    echo "FAIL: $what: status $rc (want $want), stderr:"
    sed 's/^/    /' err.txt
    fail=1
  else
    echo "ok: $what: $(cat err.txt)"
  fi
}

check 2 "bad recipient checksum" -- tx send --key good.key --to gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahd --amount 1ngonka "${off[@]}"
check 2 "recipient of another chain" -- tx send --key good.key --to cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6 --amount 1ngonka "${off[@]}"
check 2 "empty recipient" -- tx send --key good.key --to "" --amount 1ngonka "${off[@]}"
check 2 "amount without denom" -- tx send --key good.key --to $to --amount 1000 "${off[@]}"
check 2 "negative amount" -- tx send --key good.key --to $to --amount -1ngonka "${off[@]}"
check 2 "amount too large" -- tx send --key good.key --to $to --amount 999999999999999999999999999999999999999999999999999999999999999999999999999999ngonka "${off[@]}"
check 2 "fractional amount" -- tx send --key good.key --to $to --amount 0.5gonka "${off[@]}"
check 2 "duplicate denoms" -- tx send --key good.key --to $to --amount 1ngonka,2ngonka "${off[@]}"
check 2 "bad fee" -- tx send --key good.key --to $to --amount 1ngonka --fees "10 ngonka" "${off[@]}"
check 2 "bad gas" -- tx send --key good.key --to $to --amount 1ngonka --gas lots "${off[@]}"
check 2 "bad gas price" -- tx send --key good.key --to $to --amount 1ngonka --gas-prices cheap "${off[@]}"
check 2 "gas price without denom" -- tx send --key good.key --to $to --amount 1ngonka --gas-prices 0.5 "${off[@]}"
check 2 "gas price with 19 decimals" -- tx send --key good.key --to $to --amount 1ngonka --gas-prices 0.0000000000000000001ngonka "${off[@]}"
check 2 "fees and gas price together" -- tx send --key good.key --to $to --amount 1ngonka --fees 1ngonka --gas-prices 1ngonka "${off[@]}"
check 2 "sequence overflow" -- tx send --key good.key --to $to --amount 1ngonka --offline --chain-id c --account-number 0 --sequence 18446744073709551616
check 2 "offline without sequence" -- tx send --key good.key --to $to --amount 1ngonka --offline --chain-id c --account-number 0
check 1 "key file open to others" -- tx send --key open.key --to $to --amount 1ngonka "${off[@]}"
check 1 "malformed key file" -- keys show --key broken.key
check 1 "random bytes as key file" -- keys show --key noise.bin
check 1 "missing key file" -- keys show --key nope.key
check 2 "bad hex key" -- keys import --hex xyz --out x.key
check 2 "short mnemonic" -- keys import --mnemonic-file short.mnemonic --out y.key
check 2 "bad hd path" -- keys import --mnemonic-file good.mnemonic --hd-path "m/44'/x" --out y.key
check 2 "memo that is not UTF-8" -- tx send --key good.key --to $to --amount 1ngonka --memo $'caf\xc3' "${off[@]}"
# A signed transaction whose memo bytes are then made invalid UTF-8.
signed=$("$bin" tx send --key good.key --to $to --amount 1ngonka --memo QQQQ "${off[@]}" --json |
         sed -n 's/.*"tx_base64": "\([^"]*\)".*/\1/p')
bad_memo=$(python3 -c 'import base64,sys; r=base64.b64decode(sys.argv[1]); assert r.count(b"QQQQ")==1; print(base64.b64encode(r.replace(b"QQQQ", b"\xff\xfe\xc0\x80")).decode())' "$signed")
check 2 "decoding a memo that is not UTF-8" -- tx decode "$bad_memo"
grep -q "TxBody.memo is not valid UTF-8" err.txt || { echo "FAIL: the refusal does not name the memo"; fail=1; }
check 2 "garbage transaction" -- tx decode "$(head -c 300 noise.bin | base64 -w0)"
check 2 "not base64" -- tx decode '!!!'
check 1 "node refused" -- status --node http://127.0.0.1:9 --retries 0
check 2 "node URL without scheme" -- status --node 127.0.0.1:26657
# A node that accepts and never answers (a socket that listens and never
# accepts: the kernel completes the handshake) costs --timeout (10s) once,
# not once per retry, and the wait says what it waits for.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True); time.sleep(60)' > silent.port &
silent=$!
for _ in $(seq 50); do [ -s silent.port ] && break; sleep 0.1; done
t0=$(date +%s)
timeout 30 "$bin" status --node "http://127.0.0.1:$(cat silent.port)" >out.txt 2>err.txt
rc=$? took=$(( $(date +%s) - t0 ))
kill "$silent" 2>/dev/null
if [ "$rc" -eq 1 ] && [ "$took" -le 13 ] && grep -q "^note: waiting for http://127.0.0.1:.* to answer status" err.txt &&
   grep -q "^error: no answer from .* within 10000 ms" err.txt && [ "$(wc -l <err.txt)" -eq 2 ]; then
  echo "ok: node that never answers: ${took}s: $(tr '\n' ' ' <err.txt)"
else
  echo "FAIL: node that never answers: status $rc after ${took}s, stderr:"; sed 's/^/    /' err.txt; fail=1
fi
check 2 "bad address to query" -- query balance gonka1zzz --node http://127.0.0.1:9
check 2 "bad denom" -- query balance $to --denom x --node http://127.0.0.1:9
check 2 "unknown option" -- keys show --key good.key --frob
check 2 "unknown command" -- frobnicate
check 2 "epoch params rejected" -- epoch-clock --epoch 1 --poc-start 10 --height 11 --poc-validation-duration 0
check 2 "epoch clock height past 2^62" -- epoch-clock --epoch 1 --poc-start 10 --height 9223372036854775807
check 2 "epoch clock PoC start past 2^62" -- epoch-clock --epoch 1 --poc-start 4611686018427387905 --height 4611686018427387906
check 2 "epoch clock height before the PoC start" -- epoch-clock --epoch 1 --poc-start 100 --height 99
check 2 "epoch clock height past the epoch" -- epoch-clock --epoch 1 --poc-start 100 --height 17380
check 2 "run with a memory budget that is not a size" -- run --config node.yaml --memory-budget 5X
check 2 "node duties without --run" -- node duties --address $to
check 2 "node duties without --address" -- node duties --run 1
check 2 "node duties with a bad address" -- node duties --run 1 --address gonka1nope
check 2 "node duties with an unknown role" -- node duties --run 1 --address $to --roles miner
check 2 "node duties with empty roles" -- node duties --run 1 --address $to --roles ,
check 1 "node duties with a node that is not there" -- node duties --run 1 --address $to --node http://127.0.0.1:1 --retries 0 --timeout 1s
"$bin" node init --home nodehome --chain-id c --node http://127.0.0.1:1 --collateral 1ngonka >/dev/null 2>&1 || { echo "FAIL: node init"; fail=1; }
for f in nodehome/node.yaml nodehome/node.key nodehome/node.mnemonic; do
  [ "$(stat -c %a "$f")" = 600 ] || { echo "FAIL: $f is not 0600"; fail=1; }
done
check 1 "node init over an existing home" -- node init --home nodehome --chain-id c --node http://127.0.0.1:1 --collateral 1ngonka
# node.yaml names its key and state_dir absolutely, whatever --home said.
grep -q "^  key: \"$work/nodehome/node.key\"" nodehome/node.yaml &&
  grep -q "^state_dir: \"$work/nodehome/state\"" nodehome/node.yaml ||
  { echo "FAIL: node init wrote relative paths: $(grep -E 'key:|state_dir' nodehome/node.yaml)"; fail=1; }
check 1 "node init with a key file that is not there" -- node init --home h3 --chain-id c --key /missing --node http://127.0.0.1:1 --collateral 1ngonka
[ ! -e h3/node.yaml ] || { echo "FAIL: node init wrote h3/node.yaml for a missing key"; fail=1; }
check 2 "node init without --home" -- node init --chain-id c
check 2 "node init with an unknown role" -- node init --home other --chain-id c --roles boss
check 1 "node init without a chain or --collateral" -- node init --home h4 --chain-id c --node http://127.0.0.1:1
check 1 "node init with a key path that breaks the YAML" -- node init --home h2 --chain-id c --key 'a"b' --collateral 1ngonka
check 2 "node leave without --config" -- node leave
check 1 "node leave with a config that is not there" -- node leave --config nowhere/node.yaml
printf 'chain: {rpc: "http://127.0.0.1:1", chain_id: c, key: k}\nrun: 1\nroles: [worker]\n' > partial.yaml
check 1 "node leave with a config missing keys" -- node leave --config partial.yaml
# One path for the key and its mnemonic backup, however it is spelt, is
# refused before anything is written.
mkdir sub && ln -s . here
check 2 "key and mnemonic in one file" -- keys new --out s.key --mnemonic-out s.key
check 2 "key and mnemonic in one file, spelt twice" -- keys new --out s.key --mnemonic-out sub/../s.key
check 2 "key and mnemonic in one file, through a link" -- keys new --out "$work/s.key" --mnemonic-out here/s.key
[ ! -e s.key ] || { echo "FAIL: s.key was written: $(cat s.key)"; fail=1; }
# A FIFO where a file is expected is refused at once, not opened and waited on.
mkfifo pipe
check 1 "FIFO as key file" -- keys show --key pipe
check 1 "FIFO as mnemonic file" -- keys import --mnemonic-file pipe --out f.key
check 1 "FIFO as checkpoint" -- eval --checkpoint pipe
check 1 "FIFO as model config" -- train --model-config pipe --data synthetic:markov:1 --steps 1 --out f.safetensors
check 1 "FIFO as transaction file" -- tx broadcast --tx-file pipe
check 1 "FIFO as payload" -- payload inspect pipe
check 1 "FIFO as run spec" -- sim --spec pipe
check 1 "FIFO as node config" -- node leave --config pipe
check 2 "FIFO as training data" -- train --model tiny --data text:pipe --steps 1 --out f.safetensors
for f in f.key f.safetensors; do [ ! -e "$f" ] || { echo "FAIL: $f was written"; fail=1; }; done
exit $fail
