/* Unknown-field checks on decoded protobuf-c messages, recursing into
 * nested messages as the Cosmos SDK's RejectUnknownFields does. protobuf-c
 * keeps unknown fields (even field number 0, which protobuf forbids and Go
 * rejects) and would re-encode them differently, so strict decoders refuse
 * them. */
#ifndef GD_CHAIN_WIRE_PB_STRICT_H
#define GD_CHAIN_WIRE_PB_STRICT_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* Returns GD_OK if msg and every nested message has no unknown field;
 * with allow_non_critical, unknown fields whose number has bit 11 set
 * (1024 and up, ADR-027's "non-critical") are tolerated, except number 0
 * which is never valid. Fails with GD_ERR_PARSE naming the message and tag. */
gd_status gd_pb_reject_unknown(const ProtobufCMessage *msg, bool allow_non_critical) GD_MUST_CHECK;

/* Whether s[0..len) is valid UTF-8 as Go's utf8.Valid has it: shortest
 * forms only, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF. */
bool gd_utf8_valid(const char *s, size_t len);

/* Returns GD_OK if every string field of msg and of every nested message
 * is valid UTF-8 (gd_utf8_valid). The Cosmos SDK's decoder refuses a
 * transaction otherwise (protobuf-go checks proto3 strings), and a string
 * that is not UTF-8 has no JSON form. Fails with GD_ERR_PARSE naming the
 * message and field. The bytes inside an Any are not looked into. */
gd_status gd_pb_reject_invalid_utf8(const ProtobufCMessage *msg) GD_MUST_CHECK;

#endif
