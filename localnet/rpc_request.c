/* Parsing of requests to the localnet's CometBFT-compatible RPC: JSON-RPC
 * bodies and URI GETs become typed calls, or calls carrying the JSON-RPC
 * error a CometBFT 0.38 node would answer with (rpc/jsonrpc/server). */
#include "localnet/rpc_request.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/bytes.h"
#include "common/parse.h"

/* Parameter names and order are those of CometBFT's rpc/core routes, so
 * positional params map the way a real node maps them. */
static const gd_rpc_method gd_rpc_methods[] = {
    {"health", {{0}}, 0},
    {"status", {{0}}, 0},
    {"abci_info", {{0}}, 0},
    {"abci_query",
     {{"path", GD_RPC_PARAM_STRING},
      {"data", GD_RPC_PARAM_HEX_BYTES},
      {"height", GD_RPC_PARAM_INT64},
      {"prove", GD_RPC_PARAM_BOOL}},
     4},
    {"broadcast_tx_sync", {{"tx", GD_RPC_PARAM_BYTES}}, 1},
    {"broadcast_tx_async", {{"tx", GD_RPC_PARAM_BYTES}}, 1},
    {"tx", {{"hash", GD_RPC_PARAM_BYTES}, {"prove", GD_RPC_PARAM_BOOL}}, 2},
    {"tx_search",
     {{"query", GD_RPC_PARAM_STRING},
      {"prove", GD_RPC_PARAM_BOOL},
      {"page", GD_RPC_PARAM_INT64},
      {"per_page", GD_RPC_PARAM_INT64},
      {"order_by", GD_RPC_PARAM_STRING}},
     5},
    {"block", {{"height", GD_RPC_PARAM_INT64}}, 1},
    {"block_results", {{"height", GD_RPC_PARAM_INT64}}, 1},
    {"genesis", {{0}}, 0},
    {"num_unconfirmed_txs", {{0}}, 0},
};

#define GD_RPC_N_METHODS (sizeof gd_rpc_methods / sizeof gd_rpc_methods[0])

/* Looks a name up by length: names from JSON or a decoded URI may hold NULs. */
static const gd_rpc_method *gd_rpc_method_find_n(const char *name, size_t len) {
    for (size_t i = 0; i < GD_RPC_N_METHODS; i++) {
        const char *m = gd_rpc_methods[i].name;
        if (strlen(m) == len && memcmp(m, name, len) == 0)
            return &gd_rpc_methods[i];
    }
    return NULL;
}

const gd_rpc_method *gd_rpc_method_find(const char *name) {
    if (name == NULL)
        return NULL;
    return gd_rpc_method_find_n(name, strlen(name));
}

static int gd_rpc_param_index_n(const gd_rpc_method *method, const char *name, size_t len) {
    if (method == NULL)
        return -1;
    for (int i = 0; i < method->n_params; i++) {
        const char *p = method->params[i].name;
        if (strlen(p) == len && memcmp(p, name, len) == 0)
            return i;
    }
    return -1;
}

int gd_rpc_param_index(const gd_rpc_method *method, const char *name) {
    if (name == NULL)
        return -1;
    return gd_rpc_param_index_n(method, name, strlen(name));
}

static void gd_call_clear_params(gd_incoming_call *call) {
    for (int i = 0; i < GD_RPC_MAX_PARAMS; i++) {
        free(call->params[i].str);
        free(call->params[i].bytes);
    }
    memset(call->params, 0, sizeof call->params);
}

void gd_rpc_request_free(gd_rpc_request *req) {
    if (req == NULL)
        return;
    for (size_t i = 0; i < req->n_calls && req->calls != NULL; i++) {
        json_decref(req->calls[i].id);
        gd_call_clear_params(&req->calls[i]);
    }
    free(req->calls);
    memset(req, 0, sizeof *req);
}

static const char *gd_rpc_error_message(int code) {
    switch (code) {
    case GD_RPC_ERR_PARSE:
        return "Parse error";
    case GD_RPC_ERR_INVALID_REQUEST:
        return "Invalid Request";
    case GD_RPC_ERR_METHOD_NOT_FOUND:
        return "Method not found";
    case GD_RPC_ERR_INVALID_PARAMS:
        return "Invalid params";
    default:
        return "Internal error";
    }
}

/* Marks the call failed. The reason is forced to printable ASCII because it
 * quotes client bytes and the server writes it into a JSON string, which
 * must be valid UTF-8 on one line. Parameters decoded so far are dropped so
 * a failed call never looks half-parsed; the method stays known only for
 * -32602, where it is the params that are wrong. */
static void gd_call_error(gd_incoming_call *call, int code, const char *fmt, ...) GD_PRINTF(3, 4);

static void gd_call_error(gd_incoming_call *call, int code, const char *fmt, ...) {
    call->error_code = code;
    if (code != GD_RPC_ERR_INVALID_PARAMS)
        call->method = NULL;
    snprintf(call->error_message, sizeof call->error_message, "%s", gd_rpc_error_message(code));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->error_data, sizeof call->error_data, fmt, ap);
    va_end(ap);
    for (char *p = call->error_data; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            *p = '?';
    gd_call_clear_params(call);
}

/* Quotes client text for an error message: printable ASCII kept, other
 * bytes as \xNN, long text cut with "...". Returns out. */
static const char *gd_quote(char out[72], const char *text, size_t len) {
    static const char digits[] = "0123456789abcdef";
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        size_t need = c == '\\' || c == '"' ? 2 : c >= 0x20 && c <= 0x7e ? 1 : 4;
        if (o + need > 72 - 5) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (need == 1) {
            out[o++] = (char)c;
        } else if (need == 2) {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = digits[c >> 4];
            out[o++] = digits[c & 15];
        }
    }
    out[o++] = '"';
    out[o] = '\0';
    return out;
}

/* A short rendering of a JSON value for error messages, without allocating. */
static const char *gd_json_describe(char out[72], const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_STRING:
        return gd_quote(out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(out, 72, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return out;
    case JSON_REAL:
        snprintf(out, 72, "%.17g", json_real_value(v));
        return out;
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
        return "null";
    case JSON_OBJECT:
        return "an object";
    default:
        return "an array";
    }
}

/* Internal convention of the param decoders below: GD_OK, GD_ERR_INVALID
 * once the call carries -32602 (the request goes on), or GD_ERR_NOMEM,
 * the one real failure. */
static gd_status gd_param_invalid(gd_incoming_call *call, const char *fmt, ...) GD_PRINTF(2, 3);

static gd_status gd_param_invalid(gd_incoming_call *call, const char *fmt, ...) {
    char data[sizeof call->error_data];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(data, sizeof data, fmt, ap);
    va_end(ap);
    gd_call_error(call, GD_RPC_ERR_INVALID_PARAMS, "%s", data);
    return GD_ERR_INVALID;
}

static gd_status gd_set_string(gd_rpc_param_value *pv, const char *text, size_t len) {
    char *s = malloc(len + 1);
    if (s == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory copying an RPC parameter (%zu bytes)", len);
    memcpy(s, text, len);
    s[len] = '\0';
    pv->str = s;
    pv->len = len;
    pv->present = true;
    return GD_OK;
}

static gd_status gd_set_bytes(gd_rpc_param_value *pv, const void *data, size_t len) {
    pv->present = true;
    pv->len = len;
    if (len == 0)
        return GD_OK;
    pv->bytes = malloc(len);
    if (pv->bytes == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory copying an RPC parameter (%zu bytes)", len);
    memcpy(pv->bytes, data, len);
    return GD_OK;
}

/* Decodes base64 or hex text into a fresh buffer owned by the param. */
static gd_status gd_set_decoded(gd_incoming_call *call, int idx, bool hex, const char *text,
                                size_t len) {
    const gd_rpc_param_spec *spec = &call->method->params[idx];
    gd_rpc_param_value *pv = &call->params[idx];
    size_t cap = hex ? len / 2 : gd_base64_decoded_max(len);
    uint8_t *buf = NULL;
    if (cap > 0 && (buf = malloc(cap)) == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory decoding an RPC parameter (%zu bytes)", cap);
    size_t n = 0;
    gd_status s = hex ? gd_hex_decode(buf, cap, &n, text, len)
                      : gd_base64_decode(buf, cap, &n, text, len);
    if (s != GD_OK) {
        free(buf);
        char q[72];
        return gd_param_invalid(call, "%s: invalid %s %s: %s", spec->name,
                                hex ? "hex" : "base64", gd_quote(q, text, len),
                                gd_error_detail());
    }
    pv->present = true;
    pv->len = n;
    if (n == 0)
        free(buf);
    else
        pv->bytes = buf;
    return GD_OK;
}

/* An int64 in a JSON string, as cmtjson reads it with strconv.ParseInt:
 * optional sign, decimal digits, within range. */
static bool gd_i64_text(int64_t *out, const char *text) {
    if (text[0] == '+' && text[1] >= '0' && text[1] <= '9')
        text++;
    return gd_parse_i64(out, text) == GD_OK;
}

/* One JSON-RPC param, as cmtjson decodes it into the Go argument type. */
static gd_status gd_param_from_json(gd_incoming_call *call, int idx, const json_t *v) {
    const gd_rpc_param_spec *spec = &call->method->params[idx];
    gd_rpc_param_value *pv = &call->params[idx];
    char q[72];
    if (json_is_null(v))
        return GD_OK; /* null is the Go zero value: absent */
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    size_t len = s ? json_string_length(v) : 0;
    /* jansson refuses \u0000 unless asked, but stay safe if that changes. */
    if (s != NULL && strlen(s) != len)
        return gd_param_invalid(call, "%s: string contains a NUL byte", spec->name);
    switch (spec->type) {
    case GD_RPC_PARAM_INT64:
        if (json_is_integer(v)) {
            pv->i64 = (int64_t)json_integer_value(v);
        } else if (s != NULL) {
            if (!gd_i64_text(&pv->i64, s))
                return gd_param_invalid(call, "%s: invalid 64-bit integer %s", spec->name,
                                        gd_quote(q, s, len));
        } else {
            return gd_param_invalid(call,
                                    "%s: invalid 64-bit integer encoding %s, expected string",
                                    spec->name, gd_json_describe(q, v));
        }
        pv->present = true;
        return GD_OK;
    case GD_RPC_PARAM_BOOL:
        if (!json_is_boolean(v))
            return gd_param_invalid(call, "%s: expected true or false, got %s", spec->name,
                                    gd_json_describe(q, v));
        pv->b = json_is_true(v);
        pv->present = true;
        return GD_OK;
    case GD_RPC_PARAM_STRING:
        if (s == NULL)
            return gd_param_invalid(call, "%s: expected a string, got %s", spec->name,
                                    gd_json_describe(q, v));
        return gd_set_string(pv, s, len);
    case GD_RPC_PARAM_BYTES:
    case GD_RPC_PARAM_HEX_BYTES:
        if (s == NULL)
            return gd_param_invalid(call, "%s: expected a %s string, got %s", spec->name,
                                    spec->type == GD_RPC_PARAM_BYTES ? "base64" : "hex",
                                    gd_json_describe(q, v));
        return gd_set_decoded(call, idx, spec->type == GD_RPC_PARAM_HEX_BYTES, s, len);
    }
    return gd_param_invalid(call, "%s: unsupported parameter type", spec->name);
}

/* "hash, prove" for messages about a method's parameters. */
static const char *gd_param_list(char out[128], const gd_rpc_method *m) {
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < m->n_params; i++) {
        int n = snprintf(out + o, 128 - o, "%s%s", i ? ", " : "", m->params[i].name);
        if (n < 0 || (size_t)n >= 128 - o)
            break;
        o += (size_t)n;
    }
    return m->n_params ? out : "none";
}

static gd_status gd_params_from_json(gd_incoming_call *call, const json_t *params) {
    const gd_rpc_method *m = call->method;
    char list[128];
    if (params == NULL || json_is_null(params))
        return GD_OK;
    if (json_is_array(params)) {
        size_t n = json_array_size(params);
        /* CometBFT wants exactly one per argument; fewer are taken as the
         * trailing ones left out, which no real client relies on anyway. */
        if (n > (size_t)m->n_params)
            return gd_param_invalid(call, "%s takes at most %d params (%s), got %zu", m->name,
                                    m->n_params, gd_param_list(list, m), n);
        for (size_t i = 0; i < n; i++)
            GD_TRY(gd_param_from_json(call, (int)i, json_array_get(params, i)));
        return GD_OK;
    }
    if (!json_is_object(params)) {
        char q[72];
        return gd_param_invalid(call, "params must be an object or an array, got %s",
                                gd_json_describe(q, params));
    }
    /* Unknown names are refused (CometBFT ignores them) so a misspelt
     * "heigth" fails loudly instead of silently meaning "latest". */
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)params, key, v) {
        if (gd_rpc_param_index(m, key) < 0) {
            char q[72];
            return gd_param_invalid(call, "unknown parameter %s for %s (takes %s)",
                                    gd_quote(q, key, strlen(key)), m->name,
                                    gd_param_list(list, m));
        }
    }
    for (int i = 0; i < m->n_params; i++) {
        v = json_object_get(params, m->params[i].name);
        if (v != NULL)
            GD_TRY(gd_param_from_json(call, i, v));
    }
    return GD_OK;
}

/* One request object of a body (or of a batch) into call, whose id is
 * already JSON null. */
static gd_status gd_call_from_json(gd_incoming_call *call, const json_t *req) {
    if (!json_is_object(req)) {
        gd_call_error(call, GD_RPC_ERR_INVALID_REQUEST, "a request must be a JSON object");
        return GD_OK;
    }
    json_t *id = json_object_get(req, "id");
    if (id != NULL && (json_is_string(id) || json_is_number(id))) {
        call->id = json_incref(id);
    } else if (id != NULL && !json_is_null(id)) {
        gd_call_error(call, GD_RPC_ERR_INVALID_REQUEST, "id must be a string, a number or null");
        return GD_OK;
    }
    const json_t *version = json_object_get(req, "jsonrpc");
    /* A missing "jsonrpc" is accepted: CometBFT never checks it. */
    if (version != NULL &&
        (!json_is_string(version) || json_string_length(version) != 3 ||
         memcmp(json_string_value(version), "2.0", 3) != 0)) {
        gd_call_error(call, GD_RPC_ERR_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
        return GD_OK;
    }
    const json_t *method = json_object_get(req, "method");
    if (!json_is_string(method)) {
        gd_call_error(call, GD_RPC_ERR_INVALID_REQUEST, "method must be a string");
        return GD_OK;
    }
    const char *name = json_string_value(method);
    size_t name_len = json_string_length(method);
    call->method = gd_rpc_method_find_n(name, name_len);
    if (call->method == NULL) {
        char q[72];
        gd_call_error(call, GD_RPC_ERR_METHOD_NOT_FOUND, "no method %s",
                      gd_quote(q, name, name_len));
        return GD_OK;
    }
    gd_status s = gd_params_from_json(call, json_object_get(req, "params"));
    return s == GD_ERR_INVALID ? GD_OK : s;
}

static gd_status gd_alloc_calls(gd_rpc_request *out, size_t n) {
    out->calls = calloc(n, sizeof *out->calls);
    if (out->calls == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu RPC calls", n);
    out->n_calls = n;
    for (size_t i = 0; i < n; i++)
        out->calls[i].id = json_null();
    return GD_OK;
}

static gd_status gd_parse_body(gd_rpc_request *out, const char *body, size_t len) {
    json_error_t jerr;
    /* JSON_DECODE_ANY so that a bare scalar is valid JSON but an invalid
     * request (-32600), as JSON-RPC 2.0 says, rather than a parse error. */
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (root == NULL) {
        /* jansson does not always name an allocation failure; a real parse
         * error always comes with text. */
        if (json_error_code(&jerr) == json_error_out_of_memory || jerr.text[0] == '\0')
            return gd_fail(GD_ERR_NOMEM, "out of memory parsing an RPC request");
        GD_TRY(gd_alloc_calls(out, 1));
        gd_call_error(&out->calls[0], GD_RPC_ERR_PARSE,
                      "error unmarshaling request: %s at line %d column %d", jerr.text,
                      jerr.line, jerr.column);
        return GD_OK;
    }
    gd_status s = GD_OK;
    if (!json_is_array(root)) {
        s = gd_alloc_calls(out, 1);
        if (s == GD_OK)
            s = gd_call_from_json(&out->calls[0], root);
    } else if (json_array_size(root) == 0 || json_array_size(root) > GD_RPC_MAX_BATCH) {
        /* A batch that fails as a whole is answered with one error object,
         * not an array (JSON-RPC 2.0, section 6), so batch stays false. */
        s = gd_alloc_calls(out, 1);
        if (s == GD_OK && json_array_size(root) == 0)
            gd_call_error(&out->calls[0], GD_RPC_ERR_INVALID_REQUEST, "empty batch");
        else if (s == GD_OK)
            gd_call_error(&out->calls[0], GD_RPC_ERR_INVALID_REQUEST,
                          "batch of %zu requests exceeds the limit of %d",
                          json_array_size(root), GD_RPC_MAX_BATCH);
    } else {
        out->batch = true;
        s = gd_alloc_calls(out, json_array_size(root));
        for (size_t i = 0; s == GD_OK && i < out->n_calls; i++)
            s = gd_call_from_json(&out->calls[i], json_array_get(root, i));
    }
    json_decref(root);
    return s;
}

gd_status gd_rpc_request_parse_body(gd_rpc_request *out, const char *body, size_t len) {
    memset(out, 0, sizeof *out);
    if (body == NULL) {
        body = "";
        len = 0;
    }
    gd_status s = gd_parse_body(out, body, len);
    if (s != GD_OK)
        gd_rpc_request_free(out);
    return s;
}

/* Percent-decodes a query component the way Go's url.QueryUnescape does:
 * %XX becomes the byte and '+' a space (CometBFT reads arguments through
 * r.URL.Query()). *out is NUL-terminated; the text may hold NULs, so
 * *out_len is the length. Sets *ok to false on a malformed escape. */
static gd_status gd_percent_decode(char **out, const char *text, size_t len, bool plus_is_space,
                                   size_t *out_len, bool *ok) {
    char *buf = malloc(len + 1);
    if (buf == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory decoding a URI (%zu bytes)", len);
    size_t o = 0;
    *ok = true;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '%') {
            int hi = i + 2 < len ? gd_hex_digit(text[i + 1]) : -1;
            int lo = i + 2 < len ? gd_hex_digit(text[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                *ok = false;
                break;
            }
            buf[o++] = (char)(hi << 4 | lo);
            i += 2;
            continue;
        }
        buf[o++] = text[i] == '+' && plus_is_space ? ' ' : text[i];
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    return GD_OK;
}

/* A quoted URI value is a JSON string literal (CometBFT decodes it with
 * cmtjson), so JSON escapes apply inside it. NULL when it is not one;
 * *nomem tells an allocation failure apart. */
static json_t *gd_uri_unquote(const char *val, size_t len, bool *nomem) {
    json_error_t jerr;
    json_t *v = json_loadb(val, len, JSON_DECODE_ANY, &jerr);
    *nomem = v == NULL &&
             (json_error_code(&jerr) == json_error_out_of_memory || jerr.text[0] == '\0');
    if (v != NULL &&
        (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

/* True for CometBFT's reInt, ^-?[0-9]+$. */
static bool gd_is_int_text(const char *val, size_t len) {
    size_t i = len > 0 && val[0] == '-' ? 1 : 0;
    if (i == len)
        return false;
    for (; i < len; i++)
        if (val[i] < '0' || val[i] > '9')
            return false;
    return true;
}

/* One URI argument (non-empty, percent-decoded, NUL-terminated at len),
 * following http_uri_handler.go's nonJSONStringToArg then jsonStringToArg:
 * bare integers, 0x-hex for strings and bytes, quoted strings, then JSON. */
static gd_status gd_param_from_uri(gd_incoming_call *call, int idx, const char *val, size_t len) {
    const gd_rpc_param_spec *spec = &call->method->params[idx];
    gd_rpc_param_value *pv = &call->params[idx];
    char q[72];
    bool quoted = len >= 1 && val[0] == '"' && val[len - 1] == '"';
    bool hex = len >= 2 && val[0] == '0' && (val[1] == 'x' || val[1] == 'X');
    /* cmtjson decodes a bare null to the zero value: the argument is absent. */
    if (len == 4 && memcmp(val, "null", 4) == 0)
        return GD_OK;
    if (hex && (spec->type == GD_RPC_PARAM_INT64 || spec->type == GD_RPC_PARAM_BOOL))
        return gd_param_invalid(call, "%s: got a hex string arg, but expected %s", spec->name,
                                spec->type == GD_RPC_PARAM_INT64 ? "an integer" : "a bool");
    if (hex) {
        const char *digits = val + 2;
        size_t n_digits = len - 2;
        if (spec->type != GD_RPC_PARAM_STRING)
            return gd_set_decoded(call, idx, true, digits, n_digits);
        uint8_t *buf = malloc(n_digits / 2 + 1);
        if (buf == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory decoding an RPC parameter");
        size_t n = 0;
        if (gd_hex_decode(buf, n_digits / 2 + 1, &n, digits, n_digits) != GD_OK) {
            free(buf);
            return gd_param_invalid(call, "%s: invalid hex %s: %s", spec->name,
                                    gd_quote(q, val, len), gd_error_detail());
        }
        if (memchr(buf, 0, n) != NULL) {
            free(buf);
            return gd_param_invalid(call, "%s: string contains a NUL byte", spec->name);
        }
        buf[n] = 0;
        pv->str = (char *)buf;
        pv->len = n;
        pv->present = true;
        return GD_OK;
    }
    if (spec->type == GD_RPC_PARAM_INT64 && gd_is_int_text(val, len)) {
        if (gd_parse_i64(&pv->i64, val) != GD_OK)
            return gd_param_invalid(call, "%s: 64-bit integer %s is out of range", spec->name,
                                    gd_quote(q, val, len));
        pv->present = true;
        return GD_OK;
    }
    if (spec->type == GD_RPC_PARAM_BOOL) {
        if (len == 4 && memcmp(val, "true", 4) == 0)
            pv->b = true;
        else if (!(len == 5 && memcmp(val, "false", 5) == 0))
            return gd_param_invalid(call, "%s: expected true or false, got %s", spec->name,
                                    gd_quote(q, val, len));
        pv->present = true;
        return GD_OK;
    }
    if (!quoted) {
        switch (spec->type) {
        case GD_RPC_PARAM_INT64:
            return gd_param_invalid(call, "%s: invalid 64-bit integer %s", spec->name,
                                    gd_quote(q, val, len));
        case GD_RPC_PARAM_STRING:
            return gd_param_invalid(call,
                                    "%s: a string must be quoted (\"...\") or 0x-hex, got %s",
                                    spec->name, gd_quote(q, val, len));
        default:
            return gd_param_invalid(call, "%s: expected 0x-hex or a quoted string, got %s",
                                    spec->name, gd_quote(q, val, len));
        }
    }
    bool nomem = false;
    json_t *str = gd_uri_unquote(val, len, &nomem);
    if (nomem)
        return gd_fail(GD_ERR_NOMEM, "out of memory decoding an RPC parameter");
    if (str == NULL)
        return gd_param_invalid(call, "%s: invalid quoted string %s", spec->name,
                                gd_quote(q, val, len));
    const char *s = json_string_value(str);
    size_t n = json_string_length(str);
    gd_status st;
    if (spec->type == GD_RPC_PARAM_INT64) {
        /* "5" is the JSON (cmtjson) encoding of an int64. */
        st = gd_i64_text(&pv->i64, s)
                 ? GD_OK
                 : gd_param_invalid(call, "%s: invalid 64-bit integer %s", spec->name,
                                    gd_quote(q, val, len));
        pv->present = st == GD_OK;
    } else if (spec->type == GD_RPC_PARAM_STRING) {
        st = gd_set_string(pv, s, n);
    } else {
        st = gd_set_bytes(pv, s, n); /* the string's raw bytes, not base64 */
    }
    json_decref(str);
    return st;
}

/* Query pairs in order; the first occurrence of a name wins, as with Go's
 * url.Values.Get, and an empty value leaves the argument absent. */
static gd_status gd_params_from_query(gd_incoming_call *call, const char *query) {
    bool seen[GD_RPC_MAX_PARAMS] = {false};
    const char *p = query;
    while (*p) {
        const char *end = strchr(p, '&');
        size_t pair_len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', pair_len);
        size_t key_len = eq ? (size_t)(eq - p) : pair_len;
        const char *raw_val = eq ? eq + 1 : p + pair_len;
        size_t raw_val_len = eq ? pair_len - key_len - 1 : 0;
        if (pair_len > 0) {
            char *key = NULL, *val = NULL;
            size_t klen = 0, vlen = 0;
            bool kok = true, vok = true;
            gd_status s = gd_percent_decode(&key, p, key_len, true, &klen, &kok);
            if (s == GD_OK)
                s = gd_percent_decode(&val, raw_val, raw_val_len, true, &vlen, &vok);
            if (s == GD_OK && (!kok || !vok)) {
                char q[72];
                s = gd_param_invalid(call, "invalid percent-encoding in query pair %s",
                                     gd_quote(q, p, pair_len));
            }
            int idx = s == GD_OK ? gd_rpc_param_index_n(call->method, key, klen) : -1;
            if (s == GD_OK && idx < 0) {
                char q[72], list[128];
                s = gd_param_invalid(call, "unknown parameter %s for %s (takes %s)",
                                     gd_quote(q, key, klen), call->method->name,
                                     gd_param_list(list, call->method));
            }
            if (s == GD_OK && !seen[idx]) {
                seen[idx] = true;
                if (vlen > 0)
                    s = gd_param_from_uri(call, idx, val, vlen);
            }
            free(key);
            free(val);
            GD_TRY(s);
        }
        if (end == NULL)
            break;
        p = end + 1;
    }
    return GD_OK;
}

static gd_status gd_parse_uri(gd_rpc_request *out, const char *path, const char *query) {
    GD_TRY(gd_alloc_calls(out, 1));
    gd_incoming_call *call = &out->calls[0];
    char q[72];
    if (path == NULL)
        path = "";
    char *name = NULL;
    size_t name_len = 0;
    bool ok = true;
    /* Go's mux matches the decoded path; '+' is literal in a path. */
    GD_TRY(gd_percent_decode(&name, path, strlen(path), false, &name_len, &ok));
    if (ok && name_len > 1 && name[0] == '/')
        call->method = gd_rpc_method_find_n(name + 1, name_len - 1);
    if (call->method == NULL)
        gd_call_error(call, GD_RPC_ERR_METHOD_NOT_FOUND, "no method at path %s",
                      gd_quote(q, path, strlen(path)));
    free(name);
    if (call->method == NULL || query == NULL)
        return GD_OK;
    gd_status s = gd_params_from_query(call, query);
    return s == GD_ERR_INVALID ? GD_OK : s;
}

gd_status gd_rpc_request_parse_uri(gd_rpc_request *out, const char *path, const char *query) {
    memset(out, 0, sizeof *out);
    gd_status s = gd_parse_uri(out, path, query);
    if (s != GD_OK)
        gd_rpc_request_free(out);
    return s;
}
