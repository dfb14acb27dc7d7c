/* The demo's run spec and node configs (see demo_setup.h). */
#include "plugin/demo/demo_setup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain/keys/keyfile.h"
#include "chain/wire/diloco_spec.h"
#include "chain/wire/gas_price.h"
#include "common/file.h"
#include "plugin/cli/cli.h"
#include "plugin/cli/cli_sim_spec.h"
#include "plugin/member/member_settings.h"

/* sim's flags for the run: the tiny model, rounds of 8 inner steps in
 * segments of 2 (a validator re-executes a few segments per round in a
 * second), small payload chunks so that availability reports prove
 * several of them. */
static const char *const k_sim_flags[][2] = {
    {"model", "tiny"},      {"data", GD_DEMO_DATA},  {"inner-steps", "8"},
    {"segment-steps", "2"}, {"batch", "8"},          {"seq", "64"},
    {"chunk-elems", "4096"},
};
#define GD_DEMO_N_SIM_FLAGS (sizeof k_sim_flags / sizeof k_sim_flags[0])

/* Windows in blocks of 200 ms, sized for a small machine: 5 to 10 blocks
 * for a duty, and 36 for verify, where the one validator re-executes up to
 * checks_per_commit segments of each of three workers one after another
 * (about 0.7 s each in a sanitizer build, where 22 blocks once left the
 * last check late). 102 blocks a round. */
static const char k_windows[] =
    "{\"train\": 10, \"commit\": 10, \"reveal\": 5, \"verify\": 36, \"open\": 8, "
    "\"dispute\": 10, \"dispute_open\": 8, \"attest\": 10, \"attest_open\": 5}";

/* Incentive knobs a run of a few members meets: one validator per check
 * and one re-checker, a class as small as three members, an epoch reward
 * small next to the pool, and slashes within the collateral (a withheld
 * secret half an epoch's reward, as sim --print-spec has it). Four checks
 * per commitment, as the Byzantine e2e test draws: a worker faking half
 * its segments is caught in a round with probability 1 - (1/2)^4. */
static const char k_incentives[] =
    "{\"reward_per_epoch\": \"90000ngonka\", \"min_collateral\": \"100000ngonka\", "
    "\"fail_bond\": \"1000ngonka\", \"checks_per_commit\": 4, \"double_check_ppm\": 0, "
    "\"recheck_validators\": 1, \"validator_share_ppm\": 200000, \"attest_share_ppm\": 50000, "
    "\"min_class_members\": 3, \"avail_chunks\": 2, \"cheat_slash\": \"90000ngonka\", "
    "\"skip_slash\": \"1000ngonka\", \"withhold_slash\": \"45000ngonka\", "
    "\"suspend_rounds\": 2, \"max_members\": 16}";

/* sim's command line for those flags: gd_sim_spec_from_flags reads its
 * options through gd_arg, so they are set in the slots of sim's table. */
static int gd_demo_sim_args(gd_cli *cli, gd_args *args, char values[][32]) {
    memset(args, 0, sizeof *args);
    args->command = &gd_cmd_sim;
    for (size_t f = 0; f < GD_DEMO_N_SIM_FLAGS; f++) {
        int slot = -1;
        for (int i = 0; gd_cmd_sim.opts[i].name != NULL; i++)
            if (strcmp(gd_cmd_sim.opts[i].name, k_sim_flags[f][0]) == 0)
                slot = i;
        if (slot < 0 || slot >= GD_CLI_MAX_OPTS) {
            fprintf(cli->err, "error: sim has no option --%s\n", k_sim_flags[f][0]);
            return GD_EXIT_FAIL;
        }
        snprintf(values[f], 32, "%s", k_sim_flags[f][1]);
        args->set[slot] = true;
        args->values[slot] = values[f];
    }
    return GD_CLI_CONTINUE;
}

static int64_t gd_demo_span(const json_t *windows) {
    int64_t span = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)windows, key, v)
        span += json_integer_value(v);
    return span;
}

int gd_demo_write_spec(gd_cli *cli, const char *path, uint64_t rounds, const char *hw_class,
                       int64_t *span) {
    gd_args args;
    char values[GD_DEMO_N_SIM_FLAGS][32];
    int rc = gd_demo_sim_args(cli, &args, values);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    gd_run_config config;
    /* The inner schedule spans the demo's rounds, G_0 from seed 1. */
    if ((rc = gd_sim_spec_from_flags(cli, &args, 0, rounds, 1, 1, &spec, &config)) != GD_CLI_CONTINUE)
        return rc;
    json_t *j = gd_diloco_spec_to_json(spec);
    gd_diloco_spec_free(spec);
    json_t *incentives = json_loads(k_incentives, 0, NULL);
    json_t *windows = json_loads(k_windows, 0, NULL);
    gd_status s = GD_OK;
    if (j == NULL || incentives == NULL || windows == NULL ||
        json_object_update(j, incentives) != 0 ||
        json_object_set_new(j, "hw_classes", json_pack("[s]", hw_class)) != 0 ||
        json_object_set(j, "windows", windows) != 0)
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    *span = windows ? gd_demo_span(windows) : 0;
    json_decref(incentives);
    json_decref(windows);
    /* What localnet init will refuse, refused here with the reason. */
    if (s == GD_OK)
        s = gd_diloco_spec_from_json(&spec, j);
    if (s == GD_OK)
        gd_diloco_spec_free(spec);
    else
        s = gd_fail_context(s, "the demo's run spec");
    if (s == GD_OK && json_dump_file(j, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
        s = gd_fail(GD_ERR_IO, "cannot write %s", path);
    json_decref(j);
    if (s != GD_OK) {
        fprintf(cli->err, "error: %s\n", gd_error_detail());
        return GD_EXIT_FAIL;
    }
    return GD_CLI_CONTINUE;
}

gd_status gd_demo_write_node(const gd_demo_node *n) {
    if (mkdir(n->home, 0700) != 0 && errno != EEXIST)
        return gd_fail(GD_ERR_IO, "cannot create %s: %s", n->home, strerror(errno));
    gd_member_settings st;
    memset(&st, 0, sizeof st);
    snprintf(st.rpc, sizeof st.rpc, "%s", n->rpc_url);
    snprintf(st.chain_id, sizeof st.chain_id, "%s", n->chain_id);
    snprintf(st.key, sizeof st.key, "%s", n->key);
    snprintf(st.gas_price, sizeof st.gas_price, "%s", GD_GAS_PRICE_DEFAULT);
    st.run = 1;
    st.roles = n->roles;
    snprintf(st.collateral, sizeof st.collateral, "%s", GD_DEMO_COLLATERAL);
    snprintf(st.hardware_class, sizeof st.hardware_class, "auto");
    snprintf(st.listen_host, sizeof st.listen_host, "127.0.0.1");
    st.listen_port = n->port;
    snprintf(st.public_url, sizeof st.public_url, "http://127.0.0.1:%u", (unsigned)n->port);
    snprintf(st.state_dir, sizeof st.state_dir, "%s/state", n->home);
    st.threads = 1;
    /* The demo's classes come from this machine's CPU identity: its daemons
     * train on the CPU wherever it runs. */
    snprintf(st.backend, sizeof st.backend, "cpu");
    st.gpus = 1;
    snprintf(st.log_level, sizeof st.log_level, "info");
    char text[16384], path[GD_SETTINGS_TEXT_MAX + 16];
    snprintf(path, sizeof path, "%s/node.yaml", n->home);
    GD_TRY(gd_member_settings_format(&st, text, sizeof text));
    gd_member_settings check;
    GD_TRY(gd_member_settings_parse(&check, text, strlen(text), path));
    return gd_file_create_private(path, text, strlen(text));
}

gd_status gd_demo_key_address(char out[GD_ADDRESS_STR_MAX], const char *path) {
    gd_key key;
    GD_TRY(gd_keyfile_read(&key, path));
    gd_status s = gd_address_from_pubkey(out, GD_ADDRESS_STR_MAX, "gonka", key.pubkey);
    gd_key_wipe(&key);
    return s;
}

gd_status gd_demo_free_port(uint16_t *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return gd_fail(GD_ERR_IO, "socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    if (rc == 0)
        rc = getsockname(fd, (struct sockaddr *)&a, &len);
    int err = errno;
    close(fd);
    if (rc != 0)
        return gd_fail(GD_ERR_IO, "no free loopback port: %s", strerror(err));
    *port = ntohs(a.sin_port);
    return GD_OK;
}
