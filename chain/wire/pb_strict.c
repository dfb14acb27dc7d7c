/* Recursive unknown-field and UTF-8 checks over protobuf-c descriptors. */
#include "chain/wire/pb_strict.h"

#include <string.h>

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

bool gd_utf8_valid(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        /* Lead byte: the sequence length and the range of the second byte
         * that excludes overlong forms, surrogates and values past U+10FFFF
         * (RFC 3629's table, as Go's utf8.Valid). */
        size_t n;
        unsigned lo = 0x80, hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf)
            n = 2;
        else if (c >= 0xe0 && c <= 0xef) {
            n = 3;
            if (c == 0xe0)
                lo = 0xa0;
            else if (c == 0xed)
                hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 4;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f;
        } else
            return false;
        if (len - i < n || p[i + 1] < lo || p[i + 1] > hi)
            return false;
        for (size_t k = 2; k < n; k++)
            if (p[i + k] < 0x80 || p[i + k] > 0xbf)
                return false;
        i += n;
    }
    return true;
}

static gd_status gd_pb_utf8_field(const ProtobufCMessageDescriptor *d,
                                  const ProtobufCFieldDescriptor *fd, const char *text) {
    if (text == NULL || gd_utf8_valid(text, strlen(text)))
        return GD_OK;
    return gd_fail(GD_ERR_PARSE, "%s.%s is not valid UTF-8", d->short_name, fd->name);
}

static gd_status gd_pb_utf8_walk(const ProtobufCMessage *msg, int depth) {
    if (depth > GD_PB_MAX_DEPTH)
        return gd_fail(GD_ERR_PARSE, "protobuf message nested deeper than %d", GD_PB_MAX_DEPTH);
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    const char *base = (const char *)msg;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE && fd->type != PROTOBUF_C_TYPE_STRING)
            continue;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + fd->quantifier_offset);
            void *const *items = *(void *const *const *)(base + fd->offset);
            for (size_t k = 0; k < n; k++)
                GD_TRY(fd->type == PROTOBUF_C_TYPE_STRING
                           ? gd_pb_utf8_field(d, fd, items[k])
                           : gd_pb_utf8_walk(items[k], depth + 1));
            continue;
        }
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
            continue;
        const void *v = *(void *const *)(base + fd->offset);
        if (fd->type == PROTOBUF_C_TYPE_STRING)
            GD_TRY(gd_pb_utf8_field(d, fd, v));
        else if (v != NULL)
            GD_TRY(gd_pb_utf8_walk(v, depth + 1));
    }
    return GD_OK;
}

gd_status gd_pb_reject_invalid_utf8(const ProtobufCMessage *msg) {
    return gd_pb_utf8_walk(msg, 0);
}
