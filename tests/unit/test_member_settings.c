/* node.yaml (plugin/member/member_settings.c): a full file parses into its values,
 * optional keys take their defaults, what node init writes parses back to
 * the same settings, and every wrong file is refused with the key named:
 * unknown and missing keys, bad values of each key, YAML that is not YAML,
 * anchors and aliases, values that would break out of their quotes; and
 * the automatic hardware class (stable, printable, a digest of the CPU
 * identity it shows). */
#include <stdio.h>
#include <string.h>

#include "kernels/backend_registry.h"
#include "plugin/member/hardware_class.h"
#include "plugin/member/member_settings.h"
#include "plugin/member/round_driver.h"
#include "tests/support/testkit.h"

static const char *k_good =
    "chain:\n"
    "  rpc: http://10.0.0.2:26657\n"
    "  chain_id: gonka-mainnet\n"
    "  key: /etc/gonka/node.key\n"
    "  gas_price: 0.01ngonka\n"
    "run: 7\n"
    "roles: [worker, validator]\n"
    "collateral: 250000000ngonka\n"
    "hardware_class: h100-cuda13\n"
    "listen: 0.0.0.0:9100\n"
    "public_url: https://node.example:9100\n"
    "state_dir: /var/lib/gonka-diloco\n"
    "data: [/data/shard-0.bin, /data/shard-1.bin]\n"
    "threads: 16\n"
    "backend: cuda\n"
    "gpus: 4\n"
    "shard: full\n"
    "recompute: full\n"
    "offload: optimizer\n"
    "memory_budget: 48G\n"
    "retention: {hot_rounds: 4, archive_every: 10, archive_dir: /mnt/archive}\n"
    "log_level: debug\n";

static void test_good(void) {
    gd_member_settings s;
    CHECK_OK(gd_member_settings_parse(&s, k_good, strlen(k_good), "node.yaml"));
    CHECK_STR_EQ(s.rpc, "http://10.0.0.2:26657");
    CHECK_STR_EQ(s.chain_id, "gonka-mainnet");
    CHECK_STR_EQ(s.key, "/etc/gonka/node.key");
    CHECK_STR_EQ(s.gas_price, "0.01ngonka");
    CHECK(s.run == 7 && s.roles == (GD_ROLE_WORKER | GD_ROLE_VALIDATOR));
    CHECK_STR_EQ(s.collateral, "250000000ngonka");
    CHECK_STR_EQ(s.hardware_class, "h100-cuda13");
    CHECK_STR_EQ(s.listen_host, "0.0.0.0");
    CHECK(s.listen_port == 9100 && s.threads == 16 && s.n_data == 2);
    CHECK_STR_EQ(s.data[1], "/data/shard-1.bin");
    CHECK_STR_EQ(s.log_level, "debug");
    CHECK_STR_EQ(s.backend, "cuda");
    CHECK(s.gpus == 4 && s.memory.shard == GD_SHARD_FULL &&
          s.memory.recompute == GD_RECOMPUTE_FULL && s.memory.offload == GD_OFFLOAD_OPTIMIZER);
    CHECK(s.memory_budget == (uint64_t)48 << 30);
    CHECK(s.hot_rounds == 4 && s.archive_every == 10);
    CHECK_STR_EQ(s.archive_dir, "/mnt/archive");
    /* The optional keys' defaults. */
    const char *minimal = "chain: {rpc: 'http://h:1', chain_id: c, key: k}\n"
                          "run: 1\nroles: [validator]\ncollateral: 1ngonka\n"
                          "listen: '[::1]:8080'\npublic_url: http://h:8080\nstate_dir: s\n";
    CHECK_OK(gd_member_settings_parse(&s, minimal, strlen(minimal), "node.yaml"));
    CHECK_STR_EQ(s.gas_price, "0.0025ngonka");
    CHECK_STR_EQ(s.hardware_class, "auto");
    CHECK_STR_EQ(s.log_level, "info");
    CHECK_STR_EQ(s.log_format, "text");
    CHECK_STR_EQ(s.backend, "auto");
    CHECK(s.gpus == 1 && s.memory.shard == GD_SHARD_OPTIMIZER &&
          s.memory.recompute == GD_RECOMPUTE_NONE && s.memory.offload == GD_OFFLOAD_NONE);
    CHECK_STR_EQ(s.listen_host, "[::1]");
    CHECK(s.roles == GD_ROLE_VALIDATOR && s.n_data == 0 && s.threads == 0);
    CHECK(s.memory_budget == 0);
    CHECK(s.hot_rounds == 2 && s.archive_every == 0 && s.archive_dir[0] == '\0');
}

static void test_format_round_trip(void) {
    gd_member_settings s, back;
    CHECK_OK(gd_member_settings_parse(&s, k_good, strlen(k_good), "node.yaml"));
    char text[16384];
    CHECK_OK(gd_member_settings_format(&s, text, sizeof text));
    CHECK(strstr(text, "docs/node.md") != NULL);
    CHECK(strstr(text, "memory_budget: \"48G\"") != NULL);
    CHECK(strstr(text, "retention:\n  hot_rounds: 4") != NULL);
    CHECK_OK(gd_member_settings_parse(&back, text, strlen(text), "formatted"));
    CHECK(memcmp(&s, &back, sizeof s) == 0);
    char small[64];
    CHECK(gd_member_settings_format(&s, small, sizeof small) == GD_ERR_LIMIT);
}

/* k_good with one line replaced (or, when `with` is NULL, removed). */
static void variant(char *out, size_t cap, const char *line, const char *with) {
    const char *at = strstr(k_good, line);
    CHECK(at != NULL);
    const char *end = strchr(at, '\n') + 1;
    snprintf(out, cap, "%.*s%s%s", (int)(at - k_good), k_good, with ? with : "", end);
}

static void test_refused(void) {
    static const struct {
        const char *line, *with, *says;
        gd_status status;
    } cases[] = {
        {"threads:", "threads: 16\ntypo_key: 1\n", "typo_key", GD_ERR_PARSE},
        {"run:", NULL, "run", GD_ERR_PARSE},
        {"  key:", NULL, "key", GD_ERR_PARSE},
        {"run:", "run: 0\n", "run must be a run id", GD_ERR_INVALID},
        {"run:", "run: -3\n", "run must be a run id", GD_ERR_INVALID},
        {"run:", "run: 18446744073709551616\n", "run must be a run id", GD_ERR_INVALID},
        {"roles:", "roles: [miner]\n", "roles: 'miner'", GD_ERR_INVALID},
        {"roles:", "roles: [worker, worker]\n", "listed twice", GD_ERR_INVALID},
        {"roles:", "roles: []\n", "key 'roles'", GD_ERR_PARSE},
        {"collateral:", "collateral: lots\n", "collateral", GD_ERR_INVALID},
        {"listen:", "listen: 0.0.0.0\n", "listen must be host:port", GD_ERR_INVALID},
        {"listen:", "listen: 0.0.0.0:70000\n", "listen must be host:port", GD_ERR_INVALID},
        {"listen:", "listen: ':80'\n", "listen must be host:port", GD_ERR_INVALID},
        {"public_url:", "public_url: ftp://x\n", "public_url must be an http", GD_ERR_INVALID},
        {"  rpc:", "  rpc: localhost:26657\n", "chain.rpc must be an http", GD_ERR_INVALID},
        {"  gas_price:", "  gas_price: free\n", "chain.gas_price", GD_ERR_INVALID},
        {"  chain_id:", "  chain_id: 'a b'\n", "chain.chain_id must be printable",
         GD_ERR_INVALID},
        {"log_level:", "log_level: loud\n", "unknown log level 'loud'", GD_ERR_INVALID},
        {"log_level:", "log_level: \"info,http\"\n", "is not SUBSYSTEM=LEVEL", GD_ERR_INVALID},
        {"log_level:", "log_level: \"info,http=loud\"\n", "unknown log level 'loud'",
         GD_ERR_INVALID},
        {"log_level:", "log_level: debug\nlog_format: xml\n", "unknown log format 'xml'",
         GD_ERR_INVALID},
        {"backend:", "backend: rocm\n", "backend must be auto, cpu or cuda", GD_ERR_INVALID},
        {"threads:", "threads: 5000\n", "threads must be 0", GD_ERR_INVALID},
        {"gpus:", "gpus: 0\n", "gpus must be 1 to 16", GD_ERR_INVALID},
        {"gpus:", "gpus: 17\n", "gpus must be 1 to 16", GD_ERR_INVALID},
        {"gpus:", "gpus: two\n", "gpus must be 1 to 16", GD_ERR_INVALID},
        {"shard:", "shard: tensor\n", "shard must be optimizer or full", GD_ERR_INVALID},
        {"recompute:", "recompute: some\n", "recompute must be none or full", GD_ERR_INVALID},
        {"offload:", "offload: disk\n", "offload must be none or optimizer", GD_ERR_INVALID},
        {"memory_budget:", "memory_budget: lots\n", "memory_budget must be 0 (no limit) or a size",
         GD_ERR_INVALID},
        {"memory_budget:", "memory_budget: 12Q\n", "memory_budget must be 0", GD_ERR_INVALID},
        {"memory_budget:", "memory_budget: -1G\n", "memory_budget must be 0", GD_ERR_INVALID},
        {"retention:", "retention: {hot_rounds: 1}\n", "retention.hot_rounds must be 2 to 1000",
         GD_ERR_INVALID},
        {"retention:", "retention: {archive_every: 5}\n",
         "retention.archive_every needs retention.archive_dir", GD_ERR_INVALID},
        {"retention:", "retention: {archive_every: x, archive_dir: /a}\n",
         "retention.archive_every must be 0", GD_ERR_INVALID},
        {"retention:", "retention: {archive_dir: /var/lib/gonka-diloco}\n",
         "retention.archive_dir must not be state_dir", GD_ERR_INVALID},
        {"retention:", "retention: {keep: 2}\n", "keep", GD_ERR_PARSE},
        {"threads:", "threads: -1\n", "threads must be 0", GD_ERR_INVALID},
        {"hardware_class:", "hardware_class: 'two words'\n", "hardware_class must be printable",
         GD_ERR_INVALID},
        {"state_dir:", "state_dir: 'a\"b'\n", "state_dir must not hold quotes", GD_ERR_INVALID},
        {"data:", "data: ['']\n", "data: entry 1 is empty", GD_ERR_INVALID},
        {"data:", "data: /not/a/list\n", "key 'data'", GD_ERR_PARSE},
        {"run:", "run: [1\n", "node.yaml", GD_ERR_PARSE},
        {"run:", "run: &r 1\nthreads2: *r\n", "node.yaml", GD_ERR_PARSE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[4096];
        variant(text, sizeof text, cases[i].line, cases[i].with);
        gd_member_settings s;
        gd_status st = gd_member_settings_parse(&s, text, strlen(text), "node.yaml");
        if (st != cases[i].status || strstr(gd_error_detail(), cases[i].says) == NULL ||
            strstr(gd_error_detail(), "node.yaml") == NULL) {
            fprintf(stderr, "case %zu (%s): status %d, '%s'\n", i, cases[i].says, (int)st,
                    gd_error_detail());
            gd_test_failures++;
        }
        /* A wrong line is named by its number (a missing key has none). */
        if (cases[i].with != NULL && strstr(gd_error_detail(), "node.yaml:") == NULL) {
            fprintf(stderr, "case %zu (%s): no line number: '%s'\n", i, cases[i].says,
                    gd_error_detail());
            gd_test_failures++;
        }
    }
    /* The line is the one at fault, and libyaml's syntax errors carry their
     * column too. */
    static const struct {
        const char *line, *with, *says;
    } at[] = {
        {"threads:", "threads: 5000\n", "node.yaml:14: threads must be"},
        {"  rpc:", "  rpc: localhost:26657\n", "node.yaml:2: chain.rpc must be"},
        {"threads:", "threads: 16\ntypo_key: 1\n", "node.yaml:15: Unexpected key: typo_key"},
        {"roles:", "roles: []\n", "node.yaml:7: key 'roles'"},
        {"  key:", "  key: a\n   b: c\n", "node.yaml:5:5: mapping values are not allowed"},
    };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        char text[4096];
        variant(text, sizeof text, at[i].line, at[i].with);
        gd_member_settings s;
        CHECK(gd_member_settings_parse(&s, text, strlen(text), "node.yaml") != GD_OK);
        if (strstr(gd_error_detail(), at[i].says) == NULL) {
            fprintf(stderr, "want '%s', got '%s'\n", at[i].says, gd_error_detail());
            gd_test_failures++;
        }
    }
    gd_member_settings s;
    CHECK(gd_member_settings_load(&s, "/nonexistent/node.yaml") == GD_ERR_NOT_FOUND);
    /* An empty or comment-only file loads as no document at all: refused,
     * never read through (it crashed `run` and `node leave`). */
    static const char *const empty[] = {"", "\n", "# only a comment\n", "# two\n\n# comments\n"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        CHECK(gd_member_settings_parse(&s, empty[i], strlen(empty[i]), "node.yaml") ==
              GD_ERR_PARSE);
        CHECK(strstr(gd_error_detail(), "empty") != NULL);
    }
}

static void test_hardware_class(void) {
    char a[GD_HARDWARE_CLASS_MAX + 1], b[GD_HARDWARE_CLASS_MAX + 1], id[1024];
    CHECK_OK(gd_hardware_class_auto(a, "cpu", id, sizeof id));
    CHECK_OK(gd_hardware_class_auto(b, "cpu", NULL, 0));
    CHECK_STR_EQ(a, b); /* the same host, the same class */
    CHECK(strncmp(a, "cpu-", 4) == 0 && strlen(a) <= GD_HARDWARE_CLASS_MAX);
    for (const char *c = a; *c; c++)
        CHECK(*c > 0x20 && *c < 0x7f);
    CHECK(strstr(id, "arch=") != NULL && strstr(id, "blas=") != NULL && strstr(id, "cc=") != NULL);
    char small[8];
    CHECK(gd_hardware_class_auto(a, "cpu", small, sizeof small) == GD_ERR_LIMIT);
    /* A backend that is not known, or cannot run here, is said so. */
    CHECK(gd_hardware_class_auto(a, "rocm", NULL, 0) == GD_ERR_INVALID);
    char why[256];
    if (!gd_backend_usable("cuda", why, sizeof why))
        CHECK(gd_hardware_class_auto(a, "cuda", NULL, 0) != GD_OK);
    /* auto is the CPU's class where no GPU is usable. */
    if (!gd_backend_usable("cuda", why, sizeof why)) {
        CHECK_OK(gd_hardware_class_auto(b, "auto", NULL, 0));
        CHECK_STR_EQ(a, b);
    }
}

int main(void) {
    RUN_TEST(test_good);
    RUN_TEST(test_format_round_trip);
    RUN_TEST(test_refused);
    RUN_TEST(test_hardware_class);
    return gd_test_finish();
}
