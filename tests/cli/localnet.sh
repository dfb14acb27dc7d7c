#!/usr/bin/env bash
# gonka-localnet on the homes and inputs a new user, or a damaged disk,
# gives it: what init prints and writes, --genesis-time checked strictly,
# block times that never go back, and a chain.db that is damaged, empty or
# paired with an edited genesis.json refused with what to do, by start and
# export alike. Each node runs a second or less on a loopback port.
set -uo pipefail
bin="$1"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
node=""
trap '[ -n "$node" ] && kill "$node" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail=0
source "$here/lib.sh"

# run_blocks HOME N ARGS...: runs the node until it has made N blocks,
# then stops it with SIGTERM (10 s at most).
made() { grep -c "localnet: block [0-9]*:" "$1"; }
run_blocks() {
  local home="$1" n="$2"
  shift 2
  "$bin" start --home "$home" --rpc 127.0.0.1:0 --block-time 10ms "$@" 2>"$home.log" &
  node=$!
  for _ in $(seq 100); do
    [ "$(made "$home.log")" -ge "$n" ] && break
    kill -0 "$node" 2>/dev/null || break
    sleep 0.1
  done
  kill -TERM "$node" 2>/dev/null
  wait "$node"
  local rc=$?
  node=""
  [ "$(made "$home.log")" -ge "$n" ] && [ $rc -eq 0 ]
}

# --- init: the funded accounts, where their keys are, accounts.json -------
"$bin" init --home a --accounts 3 --genesis-time 2026-01-01T01:00:00+01:00 >init.out 2>init.err ||
  bad "init: $(cat init.err)"
for i in 0 1 2; do
  addr=$(python3 -c 'import json,sys; print(json.load(open("a/keys/accounts.json"))[int(sys.argv[1])]["address"])' $i)
  grep -q "account $i: $addr  key a/keys/account-$i.key" init.out &&
    ok "init prints account $i: $addr and its key file" || bad "init does not print account $i ($addr): $(cat init.out)"
done
python3 - <<'PY' && ok "keys/accounts.json lists index, address and key file" || bad "keys/accounts.json: $(cat a/keys/accounts.json)"
import json, os
a = json.load(open("a/keys/accounts.json"))
assert [x["index"] for x in a] == [0, 1, 2]
assert all(os.path.isfile(os.path.join("a", x["key_file"])) for x in a)
assert all(x["address"].startswith("gonka1") for x in a)
PY
[ "$(stat -c %a a/keys/accounts.json)" = 644 ] && ok "accounts.json is 0644 (no secret in it)" ||
  bad "accounts.json mode $(stat -c %a a/keys/accounts.json)"
grep -q '"genesis_time": "2026-01-01T00:00:00Z"' a/genesis.json && ok "an offset is stored in UTC" ||
  bad "genesis_time: $(grep genesis_time a/genesis.json)"

# --- --genesis-time ----------------------------------------------------------
check 2 "genesis time that is not a time" -- init --home t1 --accounts 1 --genesis-time notatime
check 2 "genesis time past year 9999" -- init --home t2 --accounts 1 --genesis-time 10000-01-01T00:00:00Z
check 2 "genesis time on a day February lacks" -- init --home t3 --accounts 1 --genesis-time 2026-02-29T00:00:00Z
check 2 "genesis time without a zone" -- init --home t4 --accounts 1 --genesis-time 2026-01-01T00:00:00
[ ! -e t1/genesis.json ] && [ ! -e t2 ] && ok "a refused --genesis-time leaves no home" || bad "a home was left behind"

# --- block times never go back -----------------------------------------------
# Home b's genesis is in 2020: a chain run first on the wall clock, then
# with --deterministic-time, whose schedule (2020 + height x 10 ms) lies
# before its last block.
"$bin" init --home b --accounts 1 --genesis-time 2020-01-01T00:00:00Z >/dev/null || bad "init b"
run_blocks b 5 || bad "b did not run: $(cat b.log)"
run_blocks b 5 --deterministic-time || bad "b did not run deterministically: $(cat b.log)"
grep -q "deterministic-time: block [0-9]* would be at genesis time + height x block time, before the last block's time" b.log &&
  ok "--deterministic-time behind the last block says so" || bad "no warning: $(cat b.log)"
python3 - <<'PY' && ok "block times strictly increase across the switch" || bad "block times went back"
import sqlite3, sys
rows = sqlite3.connect("b/data/chain.db").execute("SELECT height, time FROM blocks ORDER BY height").fetchall()
times = [t for _, t in rows]
print("  blocks", rows[0][0], "to", rows[-1][0], ":", times[0], "...", times[-1])
sys.exit(0 if len(rows) >= 10 and all(a < b for a, b in zip(times, times[1:])) else 1)
PY
# A fresh chain with --deterministic-time follows its schedule exactly.
"$bin" init --home c --accounts 1 --genesis-time 2026-01-01T00:00:00Z >/dev/null || bad "init c"
run_blocks c 3 --deterministic-time || bad "c did not run: $(cat c.log)"
[ "$(python3 -c 'import sqlite3; print(sqlite3.connect("c/data/chain.db").execute("SELECT time FROM blocks WHERE height=3").fetchone()[0])')" = 2026-01-01T00:00:00.030000000Z ] &&
  ok "--deterministic-time on a new chain: block 3 at genesis + 30 ms" || bad "block 3's time"

# --- the store and the genesis it began from ----------------------------------
run_blocks a 60 || bad "a did not run: $(cat a.log)"
"$bin" export --home a >/dev/null 2>&1 && ok "export of a sound home" || bad "export of a sound home failed"
cp -a a damaged && cp -a a empty && cp -a a edited
# Overwrites the page header of one leaf of the blocks table (the first
# child of its root): a store that opens, and whose last block reads, but
# that SQLite's quick_check finds damaged.
python3 - <<'PY' || bad "could not damage the copy"
import sqlite3, struct
path = "damaged/data/chain.db"
db = sqlite3.connect(path)
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
page_size = db.execute("PRAGMA page_size").fetchone()[0]
root = db.execute("SELECT rootpage FROM sqlite_master WHERE name='blocks'").fetchone()[0]
db.close()
with open(path, "r+b") as f:
    f.seek((root - 1) * page_size)
    page = f.read(page_size)
    assert page[0] == 0x05, "the blocks table has a single page: run more blocks"
    first_cell = struct.unpack(">H", page[12:14])[0]
    child = struct.unpack(">I", page[first_cell:first_cell + 4])[0]
    f.seek((child - 1) * page_size)
    f.write(b"\x00" * 8)
# What start reads (the head and the last block) still reads; block 1 does not.
db = sqlite3.connect(path)
last = db.execute("SELECT value FROM meta WHERE key='height'").fetchone()[0]
db.execute("SELECT block_json FROM blocks WHERE height=?", (int(last),)).fetchone()
try:
    db.execute("SELECT block_json FROM blocks WHERE height=1").fetchone()
    raise SystemExit("block 1 still reads")
except sqlite3.DatabaseError as e:
    print("  damaged copy: block %s reads, block 1: %s" % (int(last), e))
PY
check 1 "start on a damaged chain.db" -- start --home damaged --rpc 127.0.0.1:0 --log-level error
grep -q "damaged/data/chain.db is damaged (SQLite quick_check: .*remove damaged/data to start the chain over" err.txt ||
  bad "the refusal does not say what to do"
check 1 "export of a damaged chain.db" -- export --home damaged
: >empty/data/chain.db
rm -f empty/data/chain.db-wal empty/data/chain.db-shm
check 1 "start on an empty chain.db" -- start --home empty --rpc 127.0.0.1:0 --log-level error
grep -q "is empty (0 bytes), not a chain database: .*remove empty/data to start the chain over" err.txt ||
  bad "the refusal does not say what to do"
check 1 "export of an empty chain.db" -- export --home empty
rm -f empty/data/chain.db && mkfifo empty/data/chain.db
check 1 "start on a FIFO as chain.db" -- start --home empty --rpc 127.0.0.1:0 --log-level error
grep -q "is not a regular file, not a chain database" err.txt || bad "a FIFO chain.db: $(cat err.txt)"
cp -r a fifo-genesis && rm -rf fifo-genesis/data && rm fifo-genesis/genesis.json && mkfifo fifo-genesis/genesis.json
check 1 "start on a FIFO as genesis.json" -- start --home fifo-genesis --rpc 127.0.0.1:0 --log-level error
sed -i 's/"max_memo_characters": "256"/"max_memo_characters": "512"/' edited/genesis.json
check 1 "start after genesis.json was edited" -- start --home edited --rpc 127.0.0.1:0 --log-level error
grep -q "genesis.json has changed since the chain in edited/data began: its SHA-256 is [0-9a-f]\{64\}, the chain began from [0-9a-f]\{64\}. Put the original genesis.json back, or remove edited/data" err.txt ||
  bad "the refusal does not give both hashes and what to do"
check 1 "export after genesis.json was edited" -- export --home edited
cp a/genesis.json edited/genesis.json
"$bin" export --home edited >/dev/null 2>&1 && ok "the original genesis.json put back: export works" ||
  bad "export with the original genesis.json back failed"
exit $fail
