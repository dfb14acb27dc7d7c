/* Protobuf messages as JSON by reflection (chain/wire/pb_json.h). */
#include "chain/wire/pb_json.h"

#include <inttypes.h>
#include <stdio.h>

#include "chain/wire/json_bytes.h"

#define GD_PB_JSON_DEPTH 32

static json_t *gd_pb_message_json(const ProtobufCMessage *msg, int depth);

/* One value of a field at p (a scalar, a pointer for strings and messages,
 * ProtobufCBinaryData for bytes). */
static json_t *gd_pb_value_json(const ProtobufCFieldDescriptor *f, const void *p, int depth) {
    char num[24];
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: return json_integer(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: return json_integer((json_int_t) * (const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        snprintf(num, sizeof num, "%" PRId64, *(const int64_t *)p);
        return json_string(num);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        snprintf(num, sizeof num, "%" PRIu64, *(const uint64_t *)p);
        return json_string(num);
    case PROTOBUF_C_TYPE_FLOAT: return json_real(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE: return json_real(*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL: return json_boolean(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value((const ProtobufCEnumDescriptor *)f->descriptor, v);
        return ev ? json_string(ev->name) : json_integer(v);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return json_string(s ? s : "");
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;
        return gd_json_base64(b->data, b->len);
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(ProtobufCMessage *const *)p;
        return m ? gd_pb_message_json(m, depth + 1) : json_null();
    }
    }
    return json_null();
}

static size_t gd_pb_value_size(ProtobufCType t) {
    switch (t) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: return 8;
    case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    default: return 4;
    }
}

static json_t *gd_pb_message_json(const ProtobufCMessage *msg, int depth) {
    if (depth > GD_PB_JSON_DEPTH)
        return NULL;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    const char *base = (const char *)msg;
    json_t *obj = json_object();
    for (unsigned i = 0; obj && i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        json_t *v;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            const char *items = *(char *const *)(base + f->offset);
            v = json_array();
            for (size_t k = 0; v && k < n; k++) {
                json_t *item = gd_pb_value_json(f, items + k * gd_pb_value_size(f->type), depth);
                if (item == NULL || json_array_append_new(v, item) != 0) {
                    json_decref(v);
                    v = NULL;
                }
            }
        } else {
            v = gd_pb_value_json(f, base + f->offset, depth);
        }
        if (v == NULL || json_object_set_new(obj, f->name, v) != 0) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

json_t *gd_pb_to_json(const ProtobufCMessage *msg) { return gd_pb_message_json(msg, 0); }
