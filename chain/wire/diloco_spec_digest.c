/* The digest of a RunSpec (chain/wire/diloco_spec.h). */
#include <stdlib.h>
#include <string.h>

#include "chain/wire/diloco_spec.h"
#include "chain/wire/pb_strict.h"
#include "common/hash.h"

/* v3 with the incentive fields (40 to 47, fixed slashes): bytes that meant
 * a v2 spec never name a v3 one, even where they would decode alike. */
#define GD_SPEC_DIGEST_TAG "gd-run-spec-v3"

gd_status gd_diloco_spec_digest(uint8_t out[32], const Gonka__Diloco__V1__RunSpec *spec) {
    if (spec == NULL)
        return gd_fail(GD_ERR_INVALID, "run spec digest: no spec");
    /* protobuf-c keeps unknown fields and packs them again after the known
     * ones, so such a spec would not have one encoding. */
    if (gd_pb_reject_unknown(&spec->base, false) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "run spec digest");
    size_t tag = strlen(GD_SPEC_DIGEST_TAG);
    size_t len = gonka__diloco__v1__run_spec__get_packed_size(spec);
    uint8_t *buf = malloc(tag + len);
    if (buf == NULL)
        return gd_fail(GD_ERR_NOMEM, "run spec digest: out of memory");
    memcpy(buf, GD_SPEC_DIGEST_TAG, tag);
    gonka__diloco__v1__run_spec__pack(spec, buf + tag);
    gd_sha256(out, buf, tag + len);
    free(buf);
    return GD_OK;
}
