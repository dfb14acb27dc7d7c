/* llm.c token shard headers: arbitrary first bytes of a shard, judged against
 * the input's own size, a smaller file size, and the size the header itself
 * claims (so consistent headers are accepted and checked too). Any accepted
 * header has a known width and a token count that exactly tiles the file. */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "trainer/data.h"

static uint32_t fuzz_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Parses the first min(file_size, header) bytes of data as a file of
 * file_size bytes, from an exact-size copy so ASan sees overreads. */
static void fuzz_parse(const uint8_t *data, size_t file_size) {
    size_t head = file_size < GD_SHARD_HEADER_BYTES ? file_size : GD_SHARD_HEADER_BYTES;
    uint8_t *bytes = malloc(head ? head : 1);
    if (bytes == NULL)
        abort();
    memcpy(bytes, data, head);
    gd_shard_header h;
    if (gd_shard_header_parse(&h, bytes, file_size, "fuzz.bin") == GD_OK) {
        uint32_t magic = fuzz_le32(bytes);
        FUZZ_ASSERT(h.token_bytes == 2 || h.token_bytes == 4);
        FUZZ_ASSERT((h.token_bytes == 2) == (magic == GD_SHARD_MAGIC_U16));
        FUZZ_ASSERT(h.token_count >= 1 && h.token_count <= INT32_MAX);
        FUZZ_ASSERT(h.token_count == fuzz_le32(bytes + 8));
        FUZZ_ASSERT(GD_SHARD_HEADER_BYTES + h.token_count * h.token_bytes == (uint64_t)file_size);
    }
    free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_parse(data, size);
    if (size > 0)
        fuzz_parse(data, size - 1);
    /* The header padded with zeros, in a file of the size it claims for
     * either width. */
    uint8_t header[GD_SHARD_HEADER_BYTES] = {0};
    memcpy(header, data, size < sizeof header ? size : sizeof header);
    uint64_t count = fuzz_le32(header + 8);
    for (uint64_t width = 2; width <= 4; width += 2) {
        uint64_t claimed = GD_SHARD_HEADER_BYTES + count * width;
        if (claimed <= SIZE_MAX)
            fuzz_parse(header, (size_t)claimed);
    }
    return 0;
}
