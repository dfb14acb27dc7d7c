/* Genesis JSON helpers. */
#include "chain/module/json_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/parse.h"

static const json_t *gd_json_member(const json_t *obj, const char *key) {
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_null(v) ? NULL : v;
}

gd_status gd_json_u64_field(uint64_t *out, const json_t *obj, const char *key, bool optional,
                            uint64_t dflt) {
    const json_t *v = gd_json_member(obj, key);
    if (v == NULL) {
        if (!optional)
            return gd_fail(GD_ERR_PARSE, "missing '%s'", key);
        *out = dflt;
        return GD_OK;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return GD_OK;
    }
    if (json_is_string(v) && gd_parse_u64(out, json_string_value(v)) == GD_OK)
        return GD_OK;
    return gd_fail(GD_ERR_PARSE, "'%s' must be a non-negative integer (as a string)", key);
}

gd_status gd_json_i64_field(int64_t *out, const json_t *obj, const char *key, bool optional,
                            int64_t dflt) {
    const json_t *v = gd_json_member(obj, key);
    if (v == NULL) {
        if (!optional)
            return gd_fail(GD_ERR_PARSE, "missing '%s'", key);
        *out = dflt;
        return GD_OK;
    }
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return GD_OK;
    }
    if (json_is_string(v) && gd_parse_i64(out, json_string_value(v)) == GD_OK)
        return GD_OK;
    return gd_fail(GD_ERR_PARSE, "'%s' must be an integer (as a string)", key);
}

gd_status gd_json_str_field(char *out, size_t cap, const json_t *obj, const char *key,
                            bool optional) {
    const json_t *v = gd_json_member(obj, key);
    out[0] = '\0';
    if (v == NULL)
        return optional ? GD_OK : gd_fail(GD_ERR_PARSE, "missing '%s'", key);
    if (!json_is_string(v))
        return gd_fail(GD_ERR_PARSE, "'%s' must be a string", key);
    size_t len = json_string_length(v);
    if (len >= cap)
        return gd_fail(GD_ERR_PARSE, "'%s' is longer than %zu bytes", key, cap - 1);
    memcpy(out, json_string_value(v), len + 1);
    return GD_OK;
}

gd_status gd_json_b64_field(uint8_t *out, size_t cap, const json_t *obj, const char *key,
                            bool optional, size_t *len) {
    const json_t *v = gd_json_member(obj, key);
    *len = 0;
    if (v == NULL)
        return optional ? GD_OK : gd_fail(GD_ERR_PARSE, "missing '%s'", key);
    if (!json_is_string(v) ||
        gd_base64_decode(out, cap, len, json_string_value(v), json_string_length(v)) != GD_OK)
        return gd_fail(GD_ERR_PARSE, "'%s' must be base64 of at most %zu bytes", key, cap);
    return GD_OK;
}

gd_status gd_json_only_keys(const json_t *obj, const char *what, ...) {
    if (!json_is_object(obj))
        return gd_fail(GD_ERR_PARSE, "%s must be a JSON object", what);
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        (void)value;
        bool known = false;
        va_list ap;
        va_start(ap, what);
        for (const char *k = va_arg(ap, const char *); k && !known; k = va_arg(ap, const char *))
            known = strcmp(k, key) == 0;
        va_end(ap);
        if (!known)
            return gd_fail(GD_ERR_PARSE, "%s has an unknown field '%.64s'", what, key);
    }
    return GD_OK;
}

json_t *gd_json_u64_str(uint64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return json_string(buf);
}

json_t *gd_json_i64_str(int64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return json_string(buf);
}
