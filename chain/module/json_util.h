/* Reading and writing genesis JSON the way the Cosmos SDK writes it:
 * 64-bit integers as decimal strings, bytes as base64. Readers take outside
 * input and fail with a message naming the field. */
#ifndef GD_CHAIN_MODULE_JSON_UTIL_H
#define GD_CHAIN_MODULE_JSON_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* obj.key as a uint64 given as a string (a JSON integer is accepted too).
 * Absent: *out = dflt when optional, else an error. */
gd_status gd_json_u64_field(uint64_t *out, const json_t *obj, const char *key, bool optional,
                            uint64_t dflt) GD_MUST_CHECK;
gd_status gd_json_i64_field(int64_t *out, const json_t *obj, const char *key, bool optional,
                            int64_t dflt) GD_MUST_CHECK;
/* obj.key as a string copied into out (cap bytes). */
gd_status gd_json_str_field(char *out, size_t cap, const json_t *obj, const char *key,
                            bool optional) GD_MUST_CHECK;
/* obj.key as base64 bytes into out (cap bytes). */
gd_status gd_json_b64_field(uint8_t *out, size_t cap, const json_t *obj, const char *key,
                            bool optional, size_t *len) GD_MUST_CHECK;
/* Fails if obj has a member not in the NULL-terminated list (typos in a
 * genesis file are caught instead of silently ignored). */
gd_status gd_json_only_keys(const json_t *obj, const char *what, ...) GD_MUST_CHECK;

/* New JSON strings for integers, as the SDK writes them. */
json_t *gd_json_u64_str(uint64_t v);
json_t *gd_json_i64_str(int64_t v);

#endif
