#!/usr/bin/env bash
# The examples the docs mark with `<!-- example: NAME -->` before a ```sh
# block, run exactly as written: each in a fresh directory holding what a
# fresh clone's root gives it (docs/examples), with the built binaries
# first on PATH (the only substitution: the commands' names find them),
# under bash -e so that every command must succeed, within a time limit,
# and with every process it left in the background (nodes, daemons)
# killed after it. An example that disappears from the docs, or whose port
# is taken, fails the test.
# Usage: doc_examples.sh BIN_DIR   (KEEP=1: keep the directory and the logs)
set -uo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../..")
# The marked examples and the seconds each may take.
declare -A limit=([localnet]=30 [module]=60 [sim-chain]=120 [node]=40 [node-quickstart]=40
                  [train]=150)
ports=(26657 26658 26659 26670 8080 8081)
work=$(mktemp -d)
groups=()
cleanup() {
  local g
  for g in "${groups[@]}"; do kill -9 -- "-$g" 2>/dev/null; done
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# Every marked block, into $work/blocks/NAME.sh, named by where it is.
mkdir "$work/blocks"
python3 - "$root" "$work/blocks" <<'PY' || { echo "FAIL: extracting the examples"; exit 1; }
import glob, os, re, sys
root, out = sys.argv[1], sys.argv[2]
seen = {}
for path in [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        m = re.fullmatch(r"<!-- example: ([a-z0-9-]+) -->", line.strip())
        if not m:
            continue
        name = m.group(1)
        rel = os.path.relpath(path, root)
        if name in seen:
            sys.exit(f"example {name} is marked twice: {seen[name]} and {rel}")
        if i + 1 >= len(lines) or lines[i + 1] != "```sh":
            sys.exit(f"{rel}:{i + 1}: the marker of {name} is not right before a ```sh block")
        body = []
        for line in lines[i + 2:]:
            if line == "```":
                break
            body.append(line)
        else:
            sys.exit(f"{rel}:{i + 1}: the block of {name} does not end")
        seen[name] = rel
        open(os.path.join(out, name + ".sh"), "w").write("\n".join(body) + "\n")
        open(os.path.join(out, name + ".where"), "w").write(rel + "\n")
PY
for name in "${!limit[@]}"; do
  [ -f "$work/blocks/$name.sh" ] || bad "no example marked '$name' in README.md or docs/*.md"
done
for f in "$work"/blocks/*.sh; do
  name=$(basename "$f" .sh)
  [ -n "${limit[$name]:-}" ] || bad "example '$name' ($(cat "$work/blocks/$name.where")) has no time limit here"
done
[ "$fail" = 0 ] || exit 1

# The examples' ports must be free, or a node of someone else's answers.
for p in "${ports[@]}"; do
  python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1])))' "$p" 2>/dev/null ||
    { echo "FAIL: port $p is in use; the examples need it free"; exit 1; }
done

run_example() { # name
  local name="$1" dir="$work/run-$1" pid i status
  mkdir -p "$dir/docs"
  cp -r "$root/docs/examples" "$dir/docs/"
  # Its own process group (setsid), so that what it leaves running dies with it.
  (cd "$dir" && PATH="$bin:$PATH" exec setsid bash -e -o pipefail "$work/blocks/$name.sh") \
    >"$work/$name.log" 2>&1 &
  pid=$!
  groups+=("$pid")
  status=timeout
  for ((i = 0; i < limit[$name] * 10; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      status=$?
      break
    fi
    sleep 0.1
  done
  kill -9 -- "-$pid" 2>/dev/null
  local where
  where=$(cat "$work/blocks/$name.where")
  if [ "$status" = 0 ]; then
    ok "example $name ($where) in $((i / 10)).$((i % 10)) s"
  else
    bad "example $name ($where): exit $status; its output:"
    tail -n 30 "$work/$name.log"
  fi
}

for name in localnet module sim-chain node node-quickstart train; do
  [ -f "$work/blocks/$name.sh" ] && run_example "$name"
done
# What the examples show: the transfer, the commitment, the daemon's status.
grep -q "^1000000001000ngonka$" "$work/localnet.log" || bad "the localnet example shows no balance after the transfer"
grep -q '"participant": "gonka1' "$work/module.log" || bad "the module example's round has no commitment"
grep -q '"run": *1' "$work/node.log" || bad "the node example's daemon status names no run"
# The train example's eval runs at the length the checkpoint was trained at.
grep -q "the training length" "$work/train.log" || bad "the train example's eval did not say it used the training length"
exit $fail
