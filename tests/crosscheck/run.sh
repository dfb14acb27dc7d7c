#!/usr/bin/env bash
# Compares gonka-diloco's offline-signed MsgSend with cosmjs's, byte for byte,
# at Gonka's HD path and bech32 prefix. Skipped (exit 77) unless the npm
# packages are installed (scripts/crosscheck installs them). A fee of
# "default" gives ours no fee flag (it pays gas x the default gas price,
# 0.0025ngonka) and cosmjs that fee, ceil(gas x 0.0025); 0 gives ours
# --gas-prices 0 and cosmjs no fee coin.
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -d "$here/node_modules/@cosmjs/proto-signing" ] || ! command -v node >/dev/null; then
  echo "cosmjs not installed (run scripts/crosscheck); skipping"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%s\n' "economy stock theory fatal elder harbor betray wasp final emotion task crumble siren bottom lizard educate guess current outdoor pair theory focus wife stone" > "$work/m"
chmod 600 "$work/m"
"$bin" keys import --mnemonic-file "$work/m" --out "$work/k" >/dev/null
to=gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc
fail=0
while IFS='|' read -r amount fee gas memo chain accnum seq; do
  case "$fee" in
    0) fee_args=(--gas-prices 0); their_fee=0 ;;
    default) fee_args=(); their_fee=$(( (gas * 25 + 9999) / 10000 )) ;;
    *) fee_args=(--fees "${fee}ngonka"); their_fee=$fee ;;
  esac
  ours=$("$bin" tx send --key "$work/k" --to "$to" --amount "${amount}ngonka" \
          "${fee_args[@]}" --gas "$gas" --memo "$memo" \
          --chain-id "$chain" --offline --account-number "$accnum" --sequence "$seq" --json |
         sed -n 's/.*"tx_base64": "\(.*\)".*/\1/p')
  theirs=$(node "$here/sign_direct.mjs" "$work/m" "m/44'/1200'/0'/0/0" "$to" "$amount" ngonka \
           "$their_fee" "$gas" "$memo" "$chain" "$accnum" "$seq" | tail -n 1)
  if [ "$ours" = "$theirs" ]; then
    echo "same bytes: amount=$amount fee=$fee gas=$gas memo='$memo' chain=$chain acc=$accnum seq=$seq"
  else
    echo "DIFFERENT: amount=$amount fee=$fee gas=$gas memo='$memo' chain=$chain acc=$accnum seq=$seq"
    echo "  ours   $ours"
    echo "  cosmjs $theirs"
    fail=1
  fi
done <<'CASES'
1000|0|200000||gonka-mainnet|0|0
1|10|150000|hello gonka|prod-sim|42|7
123456789012345|2500|1000000000|DiLoCo round 3 ✓|gonka-mainnet|1234567|8901234
77|default|200000||prod-sim|3|5
5|default|123457|odd gas|prod-sim|3|6
CASES
exit $fail
