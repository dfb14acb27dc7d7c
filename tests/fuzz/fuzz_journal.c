/* The member's journal (plugin/member/artifact_store.h), journal.json in
 * its state_dir, which it reads at each start to know what it has durably
 * done: any bytes are refused or read, a refusal leaves the journal empty,
 * and what is read saves to a file that loads back the same. */
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugin/member/artifact_store.h"
#include "tests/fuzz/fuzz.h"

static char fuzz_dir[] = "/tmp/gd-fuzz-journal-XXXXXX";

static int fuzz_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void fuzz_cleanup(void) { nftw(fuzz_dir, fuzz_remove, 8, FTW_DEPTH | FTW_PHYS); }

/* One store for the whole run, in a fresh temporary directory removed at exit. */
static gd_artifact_store *fuzz_store(void) {
    static gd_artifact_store store;
    static bool open;
    if (!open) {
        if (mkdtemp(fuzz_dir) == NULL)
            abort();
        atexit(fuzz_cleanup);
        if (gd_artifact_store_open(&store, fuzz_dir) != GD_OK)
            abort();
        open = true;
    }
    return &store;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *bytes = malloc(size ? size : 1);
    if (bytes == NULL)
        abort();
    memcpy(bytes, data, size);
    gd_member_journal j, back;
    static const gd_member_journal empty;
    if (gd_journal_parse(&j, bytes, size, "journal.json") == GD_OK) {
        gd_artifact_store *s = fuzz_store();
        FUZZ_ASSERT(gd_journal_save(s, &j) == GD_OK);
        FUZZ_ASSERT(gd_journal_load(s, &back) == GD_OK);
        FUZZ_ASSERT(memcmp(&j, &back, sizeof j) == 0);
    } else {
        FUZZ_ASSERT(memcmp(&j, &empty, sizeof j) == 0);
    }
    free(bytes);
    return 0;
}
