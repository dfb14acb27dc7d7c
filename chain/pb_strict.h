/* Unknown-field checks on decoded protobuf-c messages, recursing into
 * nested messages as the Cosmos SDK's RejectUnknownFields does. protobuf-c
 * keeps unknown fields (even field number 0, which protobuf forbids and Go
 * rejects) and would re-encode them differently, so strict decoders refuse
 * them. */
#ifndef GD_CHAIN_PB_STRICT_H
#define GD_CHAIN_PB_STRICT_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

/* Returns GD_OK if msg and every nested message has no unknown field;
 * with allow_non_critical, unknown fields whose number has bit 11 set
 * (1024 and up, ADR-027's "non-critical") are tolerated, except number 0
 * which is never valid. Fails with GD_ERR_PARSE naming the message and tag. */
gd_status gd_pb_reject_unknown(const ProtobufCMessage *msg, bool allow_non_critical) GD_MUST_CHECK;

#endif
