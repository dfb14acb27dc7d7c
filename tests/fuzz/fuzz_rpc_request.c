/* Requests to the localnet RPC: the input as a JSON-RPC body, and split at
 * its first '?' as a URI GET (path before, query after). Checks that every
 * call is either an error or a method with consistent typed params. */
#include <string.h>

#include "localnet/rpc_request.h"
#include "tests/fuzz/fuzz.h"

/* Reasons and messages are written into JSON answers: one printable line. */
static void check_text(const char *text, size_t cap) {
    FUZZ_ASSERT(memchr(text, 0, cap) != NULL);
    for (const char *p = text; *p; p++)
        FUZZ_ASSERT(*p >= 0x20 && *p <= 0x7e);
}

static void check_call(const gd_incoming_call *c, bool from_uri) {
    FUZZ_ASSERT(c->id != NULL);
    FUZZ_ASSERT(json_is_null(c->id) || json_is_string(c->id) || json_is_number(c->id));
    if (from_uri)
        FUZZ_ASSERT(json_is_null(c->id));
    check_text(c->error_message, sizeof c->error_message);
    check_text(c->error_data, sizeof c->error_data);
    switch (c->error_code) {
    case 0:
        FUZZ_ASSERT(c->method != NULL);
        FUZZ_ASSERT(c->error_message[0] == '\0');
        break;
    case GD_RPC_ERR_INVALID_PARAMS:
        FUZZ_ASSERT(c->method != NULL);
        FUZZ_ASSERT(c->error_message[0] != '\0' && c->error_data[0] != '\0');
        break;
    case GD_RPC_ERR_PARSE:
    case GD_RPC_ERR_INVALID_REQUEST:
    case GD_RPC_ERR_METHOD_NOT_FOUND:
        FUZZ_ASSERT(c->method == NULL);
        FUZZ_ASSERT(c->error_message[0] != '\0');
        break;
    default:
        FUZZ_ASSERT(!"unexpected error code");
    }
    if (from_uri)
        FUZZ_ASSERT(c->error_code != GD_RPC_ERR_PARSE &&
                    c->error_code != GD_RPC_ERR_INVALID_REQUEST);
    int n_params = c->method ? c->method->n_params : 0;
    if (c->method != NULL) {
        FUZZ_ASSERT(gd_rpc_method_find(c->method->name) == c->method);
        FUZZ_ASSERT(n_params >= 0 && n_params <= GD_RPC_MAX_PARAMS);
    }
    unsigned sum = 0;
    for (int i = 0; i < GD_RPC_MAX_PARAMS; i++) {
        const gd_rpc_param_value *p = &c->params[i];
        if (!p->present || c->error_code != 0 || i >= n_params) {
            /* A failed call keeps nothing; unused slots stay zero. */
            FUZZ_ASSERT(!p->present && p->str == NULL && p->bytes == NULL && p->len == 0);
            continue;
        }
        FUZZ_ASSERT(gd_rpc_param_index(c->method, c->method->params[i].name) == i);
        switch (c->method->params[i].type) {
        case GD_RPC_PARAM_INT64:
        case GD_RPC_PARAM_BOOL:
            FUZZ_ASSERT(p->str == NULL && p->bytes == NULL && p->len == 0);
            break;
        case GD_RPC_PARAM_STRING:
            FUZZ_ASSERT(p->str != NULL && p->bytes == NULL);
            FUZZ_ASSERT(strlen(p->str) == p->len);
            break;
        case GD_RPC_PARAM_BYTES:
        case GD_RPC_PARAM_HEX_BYTES:
            FUZZ_ASSERT(p->str == NULL);
            FUZZ_ASSERT(p->len == 0 || p->bytes != NULL);
            for (size_t k = 0; k < p->len; k++) /* every byte readable under ASan */
                sum += p->bytes[k];
            break;
        }
    }
    (void)sum;
}

static void check_request(const gd_rpc_request *r, bool from_uri) {
    FUZZ_ASSERT(r->n_calls >= 1 && r->calls != NULL);
    FUZZ_ASSERT(r->n_calls <= GD_RPC_MAX_BATCH);
    if (!r->batch || from_uri)
        FUZZ_ASSERT(r->n_calls == 1 && !r->batch);
    for (size_t i = 0; i < r->n_calls; i++)
        check_call(&r->calls[i], from_uri);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Inputs are small, so GD_ERR_NOMEM would mean a parse error taken for
     * an allocation failure: any status but GD_OK is a finding. */
    gd_rpc_request req;
    gd_status s = gd_rpc_request_parse_body(&req, (const char *)data, size);
    FUZZ_ASSERT(s == GD_OK);
    check_request(&req, false);
    gd_rpc_request_free(&req);
    FUZZ_ASSERT(req.calls == NULL && req.n_calls == 0);
    gd_rpc_request_free(&req); /* safe twice */

    char *text = fuzz_cstr(data, size);
    char *q = strchr(text, '?');
    if (q != NULL)
        *q++ = '\0';
    s = gd_rpc_request_parse_uri(&req, text, q);
    FUZZ_ASSERT(s == GD_OK);
    check_request(&req, true);
    gd_rpc_request_free(&req);
    free(text);
    return 0;
}
