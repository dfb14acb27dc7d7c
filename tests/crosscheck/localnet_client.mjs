// Drives a running gonka-localnet with cosmjs's stock StargateClient and
// SigningStargateClient, unchanged: connect (CometBFT 0.38 detection via
// /status), chain id, height, account and balance queries (abci_query with
// the auth and bank gRPC paths), a signed MsgSend (broadcast_tx_sync, then
// /tx polling until inclusion) and searchTx (tx_search). The fee is cosmjs's
// own calculateFee at localnet's default minimum gas price (0.0025ngonka),
// which must agree with ours (ceil(200000 x 0.0025) = 500ngonka); the same
// send without a fee is refused with the SDK's code 13.
//
// Usage: node localnet_client.mjs RPC_URL PRIVKEY_HEX TO_ADDRESS CHAIN_ID
// Prints "FROM AMOUNT_BEFORE AMOUNT_AFTER HEIGHT TXHASH" on success.
import { DirectSecp256k1Wallet } from "@cosmjs/proto-signing";
import { calculateFee, GasPrice, SigningStargateClient, StargateClient } from "@cosmjs/stargate";
import { fromHex } from "@cosmjs/encoding";
import { TxRaw } from "cosmjs-types/cosmos/tx/v1beta1/tx.js";

const [url, privHex, to, chainId] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) {
    console.error(`cosmjs check failed: ${what}`);
    process.exit(1);
  }
}

const wallet = await DirectSecp256k1Wallet.fromKey(fromHex(privHex), "gonka");
const [{ address: from }] = await wallet.getAccounts();

const reader = await StargateClient.connect(url);
check((await reader.getChainId()) === chainId, "chain id");
check((await reader.getHeight()) > 0, "height");
const account = await reader.getAccount(from);
check(account !== null && account.address === from, "getAccount");
const before = await reader.getBalance(to, "ngonka");

const client = await SigningStargateClient.connectWithSigner(url, wallet);
// Signed by cosmjs, broadcast without waiting (signAndBroadcast's poll timer
// would keep the process alive for its full timeout after a refusal).
const unpaid = await client.sign(from, [{
  typeUrl: "/cosmos.bank.v1beta1.MsgSend",
  value: { fromAddress: from, toAddress: to, amount: [{ denom: "ngonka", amount: "1" }] },
}], { amount: [], gas: "200000" }, "no fee");
let refused = null;
try {
  await client.broadcastTxSync(TxRaw.encode(unpaid).finish());
  refused = "accepted";
} catch (e) {
  refused = e.code === 13 && e.codespace === "sdk" && /insufficient fees/.test(e.log) ? 13 : String(e);
}
check(refused === 13, `a send without a fee was not refused with code 13: ${refused}`);

const fee = calculateFee(200000, GasPrice.fromString("0.0025ngonka"));
check(fee.amount.length === 1 && fee.amount[0].amount === "500", `cosmjs fee ${JSON.stringify(fee)}`);
const result = await client.sendTokens(from, to, [{ denom: "ngonka", amount: "4242" }], fee,
                                       "from cosmjs");
check(result.code === 0, `sendTokens code ${result.code}: ${result.rawLog}`);

const after = await reader.getBalance(to, "ngonka");
check(BigInt(after.amount) - BigInt(before.amount) === 4242n, "balance moved by 4242");

const found = await reader.searchTx(`tx.height=${result.height}`);
check(found.some((t) => t.hash === result.transactionHash), "searchTx by height");
const byHash = await reader.getTx(result.transactionHash);
check(byHash !== null && byHash.height === result.height, "getTx");

console.log(`${from} ${before.amount} ${after.amount} ${result.height} ${result.transactionHash}`);
reader.disconnect();
client.disconnect();
