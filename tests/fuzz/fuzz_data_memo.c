/* A node's data memo file (plugin/member/data_memo.h), which a node reads from its
 * state_dir at each start: any bytes are refused or read, and what is read
 * is one well-formed entry per line, sorted by path with no path twice. */
#include <string.h>

#include "plugin/member/data_memo.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* An exact-size copy, so ASan sees any overread. */
    uint8_t *bytes = malloc(size ? size : 1);
    if (bytes == NULL)
        abort();
    memcpy(bytes, data, size);
    gd_data_memo_entry *es = NULL;
    size_t n = 0;
    if (gd_data_memo_parse(&es, bytes, size, &n) == GD_OK) {
        size_t lines = 0;
        for (size_t i = 0; i < size; i++)
            lines += bytes[i] == '\n';
        FUZZ_ASSERT(n == lines);
        for (size_t i = 0; i < n; i++) {
            FUZZ_ASSERT(es[i].path[0] != '\0' && strchr(es[i].path, '\n') == NULL);
            FUZZ_ASSERT(es[i].id.mtime_nsec >= 0 && es[i].id.mtime_nsec <= 999999999);
            FUZZ_ASSERT(es[i].id.ctime_nsec >= 0 && es[i].id.ctime_nsec <= 999999999);
            FUZZ_ASSERT(i == 0 || strcmp(es[i - 1].path, es[i].path) < 0);
        }
    }
    gd_data_memo_entries_free(es, n);
    free(bytes);
    return 0;
}
