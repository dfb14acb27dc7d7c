/* Protobuf answers of abci_query: the first byte picks the decoder, the
 * rest is the message. Also TxRaw/TxBody/AuthInfo through protobuf-c, whose
 * re-encoding of an accepted message must decode again. */
#include "chain/wire/pb_strict.h"
#include "chain/wire/query_answer.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "tests/fuzz/fuzz.h"

/* A message with no unknown field anywhere must re-encode to bytes that
 * decode again to the same encoding (protobuf-c keeps unknown fields, even
 * invalid ones, which is why strict decoders reject them first). */
static void gd_fuzz_repack(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                           size_t size) {
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, size, data);
    if (m == NULL)
        return;
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    FUZZ_ASSERT(protobuf_c_message_pack(m, buf) == n);
    if (gd_pb_reject_unknown(m, false) == GD_OK) {
        ProtobufCMessage *again = protobuf_c_message_unpack(desc, NULL, n, buf);
        FUZZ_ASSERT(again != NULL);
        FUZZ_ASSERT(protobuf_c_message_get_packed_size(again) == n);
        protobuf_c_message_free_unpacked(again, NULL);
    }
    protobuf_c_message_free_unpacked(m, NULL);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    const uint8_t *msg = data + 1;
    size_t len = size - 1;
    switch (data[0] % 7) {
    case 0: {
        gd_account_info a;
        if (gd_decode_account_info(&a, msg, len) == GD_OK)
            FUZZ_ASSERT(a.address[sizeof a.address - 1] == '\0');
        break;
    }
    case 1: {
        gd_coin c;
        if (gd_decode_balance(&c, msg, len) == GD_OK)
            FUZZ_ASSERT(gd_amount_check(c.amount) == GD_OK);
        break;
    }
    case 2: {
        gd_epoch_info e;
        if (gd_decode_epoch_info(&e, msg, len) == GD_OK) {
            gd_epoch_stages s;
            FUZZ_ASSERT(gd_epoch_params_check(&e.params) == GD_OK);
            gd_epoch_stages_compute(&s, &e.epoch, &e.params);
            FUZZ_IGNORE(gd_epoch_phase_at(&e.epoch, &e.params, e.block_height));
        }
        break;
    }
    case 3: {
        uint64_t gas;
        FUZZ_IGNORE(gd_decode_simulate(msg, len, &gas));
        break;
    }
    case 4:
        gd_fuzz_repack(&cosmos__tx__v1beta1__tx_raw__descriptor, msg, len);
        break;
    case 5:
        gd_fuzz_repack(&cosmos__tx__v1beta1__tx_body__descriptor, msg, len);
        break;
    case 6:
        gd_fuzz_repack(&cosmos__tx__v1beta1__auth_info__descriptor, msg, len);
        break;
    }
    return 0;
}
