/* gd-adversary: the daemon with one misbehaviour switched on, for the
 * Byzantine end-to-end tests and the demo's cheater. Test-only: built with
 * the tests, never installed, never linked into the product.
 *
 *   gd-adversary MISBEHAVIOUR run --config FILE [--poll-ms N]
 *
 * runs `gonka-diloco run` with one misbehaviour (tests/adversary):
 *   --lazy FRACTION   FRACTION of each round's segments not trained (lazy.c)
 *   --scaled FACTOR   the payload codes FACTOR x its Δ (payload.c)
 *   --garbage         the payload codes nonsense values (payload.c)
 *   --malformed       the payload's chunk 0 does not decode, under its root
 *   --poison          a vector planted in its residual each round (poison.c)
 *   --withhold-states its segment-start states never served (withhold.c)
 *   --withhold-payload  payload chunks served, never the whole payload
 *   --late-server       its states served only from the dispute window on
 *   --dripper           its whole payload sent a burst every 3 s
 *   --lazy-validator  every check answered PASS without re-executing
 *   --lazy-single     the same, named for runs whose checks are all single
 *   --pass-early      PASS with the end leaf and no step re-executed
 *   --framer          every check and re-check answered FAIL (validator.c)
 *   --skipper         every assigned check left unanswered (duty.c)
 *   --grinder         its sealed secret never revealed (grinder.c)
 *   --unavailable-spam  every check answered UNAVAILABLE (both validator.c)
 *   --replay          its first round's training again in every later round
 *   --copy-payload DIR  a near-copy of the payload in DIR's store (copy.c)
 *   --sybil-of ADDRESS:RANK  that member's training under its own address
 *   --no-reports      never reports availability (duty.c, as the rest)
 *   --wrong-attest    attests a state hash that is not its aggregate
 *   --copy-attest     reveals another attester's hash instead of its own
 *   --copy-verdicts   reveals its double-check partner's verdict
 *   --shifted-start   an overlap run's rounds trained from a moved start (overlap.c)
 *   --withhold-payload-chunks  payloads served whole, never a single chunk */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "plugin/abi/gonka_diloco_host.h"
#include "tests/adversary/adversary.h"

static volatile int g_stop;

static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static int usage(const char *why) {
    fprintf(stderr, "error: %s\nusage: gd-adversary (--lazy FRACTION | --scaled FACTOR | "
                    "--garbage | --malformed | --poison | --withhold-states | --withhold-payload | --late-server | "
                    "--dripper | "
                    "--lazy-validator | "
                    "--lazy-single | --pass-early | --framer | --skipper | --grinder | --unavailable-spam | --replay | --copy-payload DIR | "
                    "--sybil-of ADDRESS:RANK | --no-reports | --wrong-attest | --copy-attest | "
                    "--copy-verdicts | --shifted-start | --withhold-payload-chunks) run --config FILE "
                    "[--poll-ms N]\n",
            why);
    return 2;
}

int main(int argc, char **argv) {
    gonka_diloco_seams seams = {NULL, NULL, NULL, NULL};
    /* The misbehaviours without a value: each fills one seam. */
    static const struct {
        const char *name;
        gonka_diloco_seams seams;
    } flags[] = {{"--replay", {.train = gd_adv_replay_train}},
                 {"--garbage", {.train = gd_adv_garbage_train}},
                 {"--malformed", {.train = gd_adv_malformed_train}},
                 {"--poison", {.train = gd_adv_poison_train}},
                 {"--withhold-states", {.withhold = gd_adv_withhold_states}},
                 {"--withhold-payload", {.withhold = gd_adv_withhold_payload}},
                 {"--late-server", {.withhold = gd_adv_late_server}},
                 {"--dripper", {.drip = gd_adv_drip}},
                 {"--lazy-validator", {.check = gd_adv_lazy_check}},
                 {"--lazy-single", {.check = gd_adv_lazy_check}},
                 {"--pass-early", {.check = gd_adv_pass_early_check}},
                 {"--framer", {.check = gd_adv_framer_check}},
                 {"--skipper", {.duty = gd_adv_skipper}},
                 {"--grinder", {.duty = gd_adv_grinder}},
                 {"--unavailable-spam", {.check = gd_adv_unavailable_check}},
                 {"--no-reports", {.duty = gd_adv_no_reports}},
                 {"--wrong-attest", {.duty = gd_adv_wrong_attest}},
                 {"--copy-attest", {.duty = gd_adv_copy_attest}},
                 {"--copy-verdicts", {.duty = gd_adv_copy_verdicts}},
                 {"--shifted-start", {.train = gd_adv_shifted_start_train}},
                 {"--withhold-payload-chunks", {.withhold = gd_adv_withhold_payload_chunks}}};
    const char *config = NULL;
    unsigned long long poll = 250;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "run") != 0; i++) {
        if (seams.train != NULL || seams.check != NULL || seams.withhold != NULL ||
            seams.drip != NULL || seams.duty != NULL)
            return usage("one misbehaviour at a time");
        bool flag = false;
        for (size_t f = 0; !flag && f < sizeof flags / sizeof flags[0]; f++)
            if (strcmp(argv[i], flags[f].name) == 0) {
                seams = flags[f].seams;
                flag = true;
            }
        if (flag)
            continue;
        if (i + 1 >= argc)
            return usage("an adversary option needs a value");
        if (strcmp(argv[i], "--copy-payload") == 0) {
            g_adv_copy_dir = argv[++i];
            seams.train = gd_adv_copy_train;
            continue;
        }
        if (strcmp(argv[i], "--sybil-of") == 0) {
            const char *arg = argv[++i], *colon = strrchr(arg, ':');
            uint64_t rank = 0;
            size_t len = colon ? (size_t)(colon - arg) : 0;
            if (colon == NULL || len == 0 || len >= sizeof g_adv_sybil_address ||
                gd_parse_u64(&rank, colon + 1) != GD_OK || rank > UINT32_MAX)
                return usage("--sybil-of takes ADDRESS:RANK");
            memcpy(g_adv_sybil_address, arg, len);
            g_adv_sybil_address[len] = '\0';
            g_adv_sybil_rank = (uint32_t)rank;
            seams.train = gd_adv_sybil_train;
            continue;
        }
        char *end = NULL;
        double v = strtod(argv[i + 1], &end);
        bool number = end != argv[i + 1] && *end == '\0';
        if (strcmp(argv[i], "--lazy") == 0) {
            if (!number || !(v > 0 && v < 1))
                return usage("--lazy takes a fraction in (0, 1)");
            g_adv_lazy_fraction = v;
            seams.train = gd_adv_lazy_train;
        } else if (strcmp(argv[i], "--scaled") == 0) {
            if (!number || !(v > 1 && v <= 1e6))
                return usage("--scaled takes a factor in (1, 1e6]");
            g_adv_scale = v;
            seams.train = gd_adv_scaled_train;
        } else {
            return usage("unknown adversary option");
        }
        i++;
    }
    if (seams.train == NULL && seams.check == NULL && seams.withhold == NULL && seams.drip == NULL &&
        seams.duty == NULL)
        return usage("name a misbehaviour");
    if (i >= argc)
        return usage("the run command is missing");
    for (i++; i < argc; i += 2) {
        if (i + 1 >= argc)
            return usage("a run option needs a value");
        if (strcmp(argv[i], "--config") == 0)
            config = argv[i + 1];
        else if (strcmp(argv[i], "--poll-ms") == 0) {
            uint64_t v = 0;
            if (gd_parse_u64(&v, argv[i + 1]) != GD_OK || v > 60000)
                return usage("--poll-ms takes 0 to 60000");
            poll = v;
        } else
            return usage("unknown run option");
    }
    if (config == NULL)
        return usage("--config FILE is required");
    char why[1024] = "";
    gonka_diloco *h = NULL;
    int rc = gonka_diloco_open_with(config, &seams, &h, why, sizeof why);
    if (rc != GONKA_DILOCO_OK) {
        fprintf(stderr, "error: %s\n", why);
        return 1;
    }
    printf("listening on %s (adversary: %s)\n", gonka_diloco_listen_address(h), argv[1]);
    fflush(stdout);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = gonka_diloco_run(h, &g_stop, (unsigned)poll, why, sizeof why);
    gonka_diloco_close(h);
    if (rc != GONKA_DILOCO_OK) {
        fprintf(stderr, "error: %s\n", why);
        return 1;
    }
    return 0;
}
