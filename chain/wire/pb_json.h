/* Any decoded protobuf-c message as JSON, field by field, from its
 * descriptor, in the shape of the Cosmos SDK's proto JSON: field names as
 * in the .proto, 64-bit integers as decimal strings, bytes as base64, enums
 * by value name, repeated fields as arrays, nested messages as objects.
 * `tx decode` shows messages it has no hand-written view of this way. */
#ifndef GD_CHAIN_WIRE_PB_JSON_H
#define GD_CHAIN_WIRE_PB_JSON_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

/* A new object, or NULL when out of memory or past a nesting depth of 32
 * (decoded messages are finite, so only a hostile descriptor could). */
json_t *gd_pb_to_json(const ProtobufCMessage *msg);

#endif
