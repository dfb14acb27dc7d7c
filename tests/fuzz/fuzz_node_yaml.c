/* node.yaml (plugin/member/member_settings.h), which the daemon and `node
 * leave` read at each start: any bytes are refused or read, and what is
 * read formats (as `node init` writes it) to text that reads back to the
 * same settings. */
#include <string.h>

#include "plugin/member/member_settings.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* An exact-size copy, so ASan sees any overread (the parser takes a
     * length, not a terminator). */
    char *text = malloc(size ? size : 1);
    if (text == NULL)
        abort();
    memcpy(text, data, size);
    static gd_member_settings s, back;
    if (gd_member_settings_parse(&s, text, size, "node.yaml") == GD_OK) {
        static char formatted[65536];
        FUZZ_ASSERT(gd_member_settings_format(&s, formatted, sizeof formatted) == GD_OK);
        FUZZ_ASSERT(gd_member_settings_parse(&back, formatted, strlen(formatted), "formatted") ==
                    GD_OK);
        FUZZ_ASSERT(memcmp(&s, &back, sizeof s) == 0);
    }
    free(text);
    return 0;
}
