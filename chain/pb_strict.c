/* Recursive unknown-field check over protobuf-c descriptors. */
#include "chain/pb_strict.h"

#define GD_PB_MAX_DEPTH 32

static gd_status gd_pb_walk(const ProtobufCMessage *msg, bool allow_non_critical, int depth) {
    if (depth > GD_PB_MAX_DEPTH)
        return gd_fail(GD_ERR_PARSE, "protobuf message nested deeper than %d", GD_PB_MAX_DEPTH);
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < msg->n_unknown_fields; i++) {
        uint32_t tag = msg->unknown_fields[i].tag;
        if (tag == 0 || !(allow_non_critical && (tag & 1024u)))
            return gd_fail(GD_ERR_PARSE, "%s has unknown field %u", d->short_name, tag);
    }
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *base = (const char *)msg;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + fd->quantifier_offset);
            ProtobufCMessage *const *items = *(ProtobufCMessage *const *const *)(base + fd->offset);
            for (size_t k = 0; k < n; k++)
                GD_TRY(gd_pb_walk(items[k], allow_non_critical, depth + 1));
        } else {
            /* A oneof member is only present when its case is selected. */
            if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
                uint32_t which = *(const uint32_t *)(base + fd->quantifier_offset);
                if (which != fd->id)
                    continue;
            }
            const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + fd->offset);
            if (sub != NULL)
                GD_TRY(gd_pb_walk(sub, allow_non_critical, depth + 1));
        }
    }
    return GD_OK;
}

gd_status gd_pb_reject_unknown(const ProtobufCMessage *msg, bool allow_non_critical) {
    return gd_pb_walk(msg, allow_non_critical, 0);
}
