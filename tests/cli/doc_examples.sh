#!/usr/bin/env bash
# The examples the docs mark with `<!-- example: NAME -->` before a ```sh
# block, run exactly as written: each in a fresh directory holding what a
# fresh clone's root gives it (docs/examples), with the built binaries
# first on PATH (the only substitution: the commands' names find them),
# under bash -e so that every command must succeed, within a time limit,
# and with every process it left in the background (nodes, daemons)
# killed after it. An example that disappears from the docs, or whose port
# is taken, fails the test. node.md's first run (node-quickstart) is its own
# test (docs_first_run): after its block, three daemons must train, check
# each other, and claim their rewards for epoch 1 with nothing slashed and no
# duty missed, which takes about three minutes of one-second blocks.
# Usage: doc_examples.sh BIN_DIR [EXAMPLE]   (EXAMPLE: that one alone;
#        KEEP=1: keep the directory and the logs)
set -uo pipefail
bin=$(realpath "$1")
only="${2:-}"
root=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../..")
# The marked examples and the seconds each may take.
declare -A limit=([localnet]=30 [module]=60 [sim-chain]=120 [node]=40 [node-quickstart]=40
                  [train]=150)
# Run only when asked for by name (their own tests).
declare -A alone=([node-quickstart]=1)
if [ -n "$only" ]; then
  ports=(26670 8081 8082 8083)
else
  ports=(26657 26658 26659 8080)
fi
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

# node-quickstart's three daemons, once its block ran: each a member that
# trained, passed checks and claimed a reward, nothing slashed, no duty
# missed, no check UNAVAILABLE.
first_run_earns() {
  local i
  for ((i = 0; i < 300; i += 5)); do
    if python3 - <<'PY'
import json, sys, urllib.request
done = True
for port in (8081, 8082, 8083):
    s = json.load(urllib.request.urlopen("http://127.0.0.1:%d/v1/status" % port, timeout=5))
    bad = [k for k, ok in [("membership", s["membership"] in ("member", "not_joined")),
                           ("slashed", s["slashed_ngonka"] == 0),
                           ("missed", sum(s["missed_duties"].values()) == 0),
                           ("unavailable", s["checks"]["unavailable"] == 0)] if not ok]
    if bad:
        sys.exit("host on %d: %s: %s" % (port, ", ".join(bad), json.dumps(s)[:600]))
    done &= (s["membership"] == "member" and s["rewards_claimed_ngonka"] > 0 and len(s["losses"]) > 0
             and s["checks"]["pass"] > 0)
sys.exit(0 if done else 3)
PY
    then
      ok "node-quickstart: three hosts trained, checked each other and claimed rewards in $((i + 40)) s or less"
      return 0
    elif [ $? -ne 3 ]; then
      bad "node-quickstart: an honest host lost something"
      return 1
    fi
    sleep 5
  done
  bad "node-quickstart: no reward claimed by every host within 300 s"
  for f in "$work"/run-node-quickstart/h*.log; do tail -n 5 "$f"; done
}

run_example() { # name [then: a check to run while what it started still runs]
  local name="$1" then="${2:-}" dir="$work/run-$1" pid i status
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
  [ "$status" = 0 ] && [ -n "$then" ] && "$then"
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

if [ -n "$only" ]; then
  [ "$only" = node-quickstart ] && then=first_run_earns || then=
  run_example "$only" $then
  exit $fail
fi
for name in localnet module sim-chain node train; do
  [ -n "${alone[$name]:-}" ] || { [ -f "$work/blocks/$name.sh" ] && run_example "$name"; }
done
# What the examples show: the transfer, the commitment, the daemon's status.
grep -q "^1000000001000ngonka$" "$work/localnet.log" || bad "the localnet example shows no balance after the transfer"
grep -q '"participant": "gonka1' "$work/module.log" || bad "the module example's round has no commitment"
grep -q '"run": *1' "$work/node.log" || bad "the node example's daemon status names no run"
# The train example's eval runs at the length the checkpoint was trained at.
grep -q "the training length" "$work/train.log" || bad "the train example's eval did not say it used the training length"
exit $fail
