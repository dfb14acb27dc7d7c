/* JSON strings for byte values: base64 (protobuf JSON, Cosmos and CometBFT
 * []byte) and hex (CometBFT HexBytes, upper case). */
#ifndef GD_CHAIN_WIRE_JSON_BYTES_H
#define GD_CHAIN_WIRE_JSON_BYTES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* New JSON strings; NULL only when out of memory. */
json_t *gd_json_base64(const uint8_t *data, size_t len);
json_t *gd_json_hex(const uint8_t *data, size_t len, bool uppercase);

#endif
