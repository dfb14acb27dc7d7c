/* Byte values as JSON strings. */
#include "chain/wire/json_bytes.h"

#include <stdlib.h>

#include "common/base64.h"
#include "common/bytes.h"

json_t *gd_json_base64(const uint8_t *data, size_t len) {
    char *text = malloc(gd_base64_encoded_len(len) + 1);
    if (text == NULL)
        return NULL;
    gd_base64_encode(text, data ? data : (const uint8_t *)"", len);
    json_t *j = json_string(text);
    free(text);
    return j;
}

json_t *gd_json_hex(const uint8_t *data, size_t len, bool uppercase) {
    char *text = malloc(2 * len + 1);
    if (text == NULL)
        return NULL;
    gd_hex_encode(text, data, len, uppercase);
    json_t *j = json_string(text);
    free(text);
    return j;
}
