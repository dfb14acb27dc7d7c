// Builds and signs a MsgSend with cosmjs, printing the base64 TxRaw, so the
// C implementation's bytes can be compared with an independent one.
// Usage: node sign_direct.mjs MNEMONIC_FILE HD_PATH TO AMOUNT DENOM FEE GAS MEMO CHAIN_ID ACCNUM SEQ
import { readFileSync } from "node:fs";
import { stringToPath } from "@cosmjs/crypto";
import { toBase64 } from "@cosmjs/encoding";
import {
  DirectSecp256k1HdWallet, Registry, encodePubkey, makeAuthInfoBytes, makeSignDoc,
} from "@cosmjs/proto-signing";
import { MsgSend } from "cosmjs-types/cosmos/bank/v1beta1/tx.js";
import { TxRaw } from "cosmjs-types/cosmos/tx/v1beta1/tx.js";

const [mnemonicFile, hdPath, to, amount, denom, fee, gas, memo, chainId, accnum, seq] =
  process.argv.slice(2);
const mnemonic = readFileSync(mnemonicFile, "utf8").trim();
const wallet = await DirectSecp256k1HdWallet.fromMnemonic(mnemonic, {
  prefix: "gonka", hdPaths: [stringToPath(hdPath)],
});
const [account] = await wallet.getAccounts();
const registry = new Registry([["/cosmos.bank.v1beta1.MsgSend", MsgSend]]);
const bodyBytes = registry.encode({
  typeUrl: "/cosmos.tx.v1beta1.TxBody",
  value: {
    messages: [{
      typeUrl: "/cosmos.bank.v1beta1.MsgSend",
      value: { fromAddress: account.address, toAddress: to, amount: [{ denom, amount }] },
    }],
    memo,
  },
});
const pubkey = encodePubkey({ type: "tendermint/PubKeySecp256k1", value: toBase64(account.pubkey) });
const feeCoins = fee === "0" ? [] : [{ denom, amount: fee }];
const authInfoBytes = makeAuthInfoBytes([{ pubkey, sequence: Number(seq) }], feeCoins, Number(gas));
const signDoc = makeSignDoc(bodyBytes, authInfoBytes, chainId, Number(accnum));
const { signature } = await wallet.signDirect(account.address, signDoc);
const raw = TxRaw.encode(TxRaw.fromPartial({
  bodyBytes, authInfoBytes, signatures: [Buffer.from(signature.signature, "base64")],
})).finish();
console.log(account.address);
console.log(toBase64(raw));
