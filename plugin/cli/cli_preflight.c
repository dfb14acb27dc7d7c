/* The host checks of `node check` and of `run` before its first
 * transaction (plugin/cli/cli_preflight.h). Local checks first (the key,
 * state_dir, the listen address, the backend), then what the chain says
 * (its id and clock, the run, its classes, the collateral, the balance),
 * then whether peers can reach public_url. */
#include "plugin/cli/cli_preflight.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "chain/client/diloco_query.h"
#include "chain/client/query.h"
#include "chain/client/rpc.h"
#include "chain/keys/address.h"
#include "chain/keys/keyfile.h"
#include "chain/wire/gas_price.h"
#include "common/file.h"
#include "common/listen.h"
#include "common/rfc3339.h"
#include "kernels/backend_registry.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/hardware_class.h"
#include "plugin/member/run_config.h"
#include "plugin/ports/peer_http.h"
#include "trainer/plan.h"
#include "trainer/layout.h"

/* The gas a member's transaction is given (plugin/ports/chain_port_rpc.c). */
#define GD_PREFLIGHT_GAS 400000
/* A host clock further than this from the chain's last block is said. */
#define GD_PREFLIGHT_CLOCK_S 60

static gd_preflight_check *gd_check_add(gd_preflight *p, const char *name, gd_check_level level,
                                        bool heals, const char *fix, const char *fmt, ...)
    GD_PRINTF(6, 7);

static gd_preflight_check *gd_check_add(gd_preflight *p, const char *name, gd_check_level level,
                                        bool heals, const char *fix, const char *fmt, ...) {
    if (p->n == GD_PREFLIGHT_MAX)
        return NULL;
    gd_preflight_check *c = &p->checks[p->n++];
    c->name = name;
    c->level = level;
    c->heals = heals;
    snprintf(c->fix, sizeof c->fix, "%s", fix ? fix : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
    return c;
}

/* The key: readable, private; its address for the balance. */
static bool gd_check_key(gd_preflight *p, const gd_member_settings *s, char *address,
                         size_t cap) {
    struct stat st;
    gd_key key;
    if (stat(s->key, &st) != 0) {
        gd_check_add(p, "key", GD_CHECK_FAIL, false, "point chain.key at the account's key file",
                     "%s: %s", s->key, strerror(errno));
        return false;
    }
    if (gd_keyfile_read(&key, s->key) != GD_OK) {
        gd_check_add(p, "key", GD_CHECK_FAIL, false,
                     (st.st_mode & 077) ? "chmod 600 the key file" : "use a key file keys new wrote",
                     "%s", gd_error_detail());
        return false;
    }
    gd_status a = gd_address_from_pubkey(address, cap, GD_ADDRESS_PREFIX, key.pubkey);
    gd_key_wipe(&key);
    gd_check_add(p, "key", a == GD_OK ? GD_CHECK_OK : GD_CHECK_FAIL, false, NULL,
                 "%s (mode %03o): %s", s->key, (unsigned)(st.st_mode & 0777),
                 a == GD_OK ? address : gd_error_detail());
    return a == GD_OK;
}

/* state_dir: created, written and locked as the daemon will; its free
 * space is judged once the run's model size is known. */
static bool gd_check_state_dir(gd_preflight *p, const gd_member_settings *s, bool for_run) {
    gd_artifact_store store;
    int fd = -1;
    gd_status st = gd_artifact_store_open(&store, s->state_dir);
    if (st == GD_OK)
        st = gd_artifact_store_lock(&store, &fd);
    if (st == GD_ERR_EXISTS && !for_run) {
        gd_check_add(p, "state_dir", GD_CHECK_OK, false, NULL, "%s: a daemon runs on it (%s)",
                     s->state_dir, gd_error_detail());
        return true;
    }
    gd_artifact_store_unlock(fd);
    if (st != GD_OK)
        gd_check_add(p, "state_dir", GD_CHECK_FAIL, false,
                     st == GD_ERR_EXISTS ? "stop the other daemon, or give this one its own "
                                           "state_dir"
                                         : "give state_dir a directory this user can write",
                     "%s", gd_error_detail());
    else
        gd_check_add(p, "state_dir", GD_CHECK_OK, false, NULL, "%s: writable and free to lock",
                     s->state_dir);
    return st == GD_ERR_EXISTS;
}

/* retention.archive_dir, when set: created as the daemon would and
 * written to, so an archive that cannot take G fails here and not when a
 * round leaves the hot tier; its free space beside. */
static void gd_check_archive(gd_preflight *p, const gd_member_settings *s) {
    if (s->archive_dir[0] == '\0')
        return;
    char probe[GD_SETTINGS_TEXT_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.gd-write-probe", s->archive_dir);
    gd_status st = gd_dir_create(s->archive_dir, 0700);
    if (st == GD_OK)
        st = gd_file_write_atomic(probe, &(gd_bytes_part){"", 0}, 1, 0600);
    if (st == GD_OK)
        unlink(probe);
    struct statvfs vfs;
    double free_bytes = st == GD_OK && statvfs(s->archive_dir, &vfs) == 0
                            ? (double)vfs.f_bavail * (double)vfs.f_frsize
                            : -1;
    if (st != GD_OK)
        gd_check_add(p, "archive", GD_CHECK_FAIL, false,
                     "give retention.archive_dir a directory this user can write",
                     "%s", gd_error_detail());
    else
        gd_check_add(p, "archive", GD_CHECK_OK, false, NULL,
                     "%s: writable, %.2f GB free; every %u-th round's G goes there",
                     s->archive_dir, free_bytes / 1e9, s->archive_every);
}

static void gd_check_listen(gd_preflight *p, const gd_member_settings *s, bool daemon_runs) {
    char listen[300], bound[300];
    snprintf(listen, sizeof listen, "%s:%u", s->listen_host, (unsigned)s->listen_port);
    int fd = -1;
    bool loopback = false;
    gd_status st = gd_listen_open(listen, &fd, bound, sizeof bound, &loopback);
    if (fd >= 0)
        close(fd);
    if (st == GD_OK)
        gd_check_add(p, "listen", GD_CHECK_OK, false, NULL, "%s is free%s", listen,
                     loopback ? " (loopback only: peers on other hosts cannot reach it)" : "");
    else if (daemon_runs)
        gd_check_add(p, "listen", GD_CHECK_OK, false, NULL, "%s: taken by the running daemon",
                     listen);
    else
        gd_check_add(p, "listen", GD_CHECK_FAIL, false,
                     "set listen to a free address, or stop what holds it", "%s",
                     gd_error_detail());
}

static void gd_check_backend(gd_preflight *p, const gd_member_settings *s) {
    char why[256] = "";
    const char *name = gd_backend_resolve(s->backend);
    bool usable = gd_backend_usable(name, why, sizeof why);
    gd_check_add(p, "backend", usable ? GD_CHECK_OK : GD_CHECK_FAIL, false,
                 usable ? NULL : "set backend to one this host has (cpu always works)",
                 "%s%s%s", name, usable ? " is usable" : ": ", usable ? "" : why);
}

/* The chain's id and the host clock against its last block. */
static bool gd_check_chain(gd_preflight *p, const gd_member_settings *s, gd_rpc *rpc) {
    gd_node_status st;
    if (gd_rpc_status(rpc, &st) != GD_OK) {
        gd_check_add(p, "chain", GD_CHECK_FAIL, true,
                     "start the node, or point chain.rpc at one (run waits out an outage)",
                     "%s: %s", s->rpc, gd_error_detail());
        return false;
    }
    bool same = strcmp(st.network, s->chain_id) == 0;
    gd_check_add(p, "chain", same ? GD_CHECK_OK : GD_CHECK_FAIL, false,
                 same ? NULL : "set chain.chain_id to the node's, or chain.rpc to the right node",
                 "%s: chain %s at height %" PRId64 "%s%s", s->rpc, st.network,
                 st.latest_block_height, same ? "" : ", not node.yaml's ",
                 same ? "" : s->chain_id);
    gd_time block;
    if (gd_rfc3339_parse(&block, st.latest_block_time) == GD_OK) {
        double behind = difftime(time(NULL), (time_t)block.unix_s);
        bool near = behind > -GD_PREFLIGHT_CLOCK_S && behind < GD_PREFLIGHT_CLOCK_S;
        gd_check_add(p, "clock", near ? GD_CHECK_OK : GD_CHECK_WARN, false,
                     near ? NULL
                          : "sync the host clock (NTP); or the node has stopped making blocks",
                     "the last block is %.0f s %s this host's clock", behind < 0 ? -behind : behind,
                     behind < 0 ? "ahead of" : "behind");
    }
    return same;
}

static void gd_check_space(gd_preflight *p, const gd_member_settings *s,
                           const Gonka__Diloco__V1__RunSpec *spec) {
    double need = gd_run_spec_round_bytes(spec, s->run);
    struct statvfs vfs;
    if (need <= 0 || statvfs(s->state_dir, &vfs) != 0)
        return;
    double free_bytes = (double)vfs.f_bavail * (double)vfs.f_frsize;
    /* Two rounds live at once (the previous one is pruned when the next opens). */
    bool room = free_bytes >= 2 * need;
    gd_check_add(p, "disk", room ? GD_CHECK_OK : GD_CHECK_FAIL, true,
                 room ? NULL : "free space under state_dir, or move it to a larger disk",
                 "%.2f GB free under %s; a round of this model leaves about %.2f GB (two live "
                 "at once)",
                 free_bytes / 1e9, s->state_dir, need / 1e9);
}

/* The run's model on this host: what a rank of today's trainer holds for
 * it (gonka-diloco plan's first rung, which equals the trainer's measured
 * high-water mark) against what a rank has: a GPU's memory, or the
 * machine's on the CPU, where the workspace of a GPU is not counted. */
static void gd_check_memory(gd_preflight *p, const gd_member_settings *s,
                            const Gonka__Diloco__V1__RunSpec *spec) {
    gd_run_config rc;
    const char *backend = gd_backend_resolve(s->backend);
    uint64_t have = 0;
    if (gd_run_config_from_spec(&rc, spec, s->run, NULL) != GD_OK ||
        gd_backend_memory(&have, backend) != GD_OK)
        return;
    const gd_train_options *o = &rc.diloco.inner;
    uint32_t segments = spec->segment_steps ? spec->h_max / spec->segment_steps : 1;
    gd_plan_input in = {.model = rc.model, .gpus = s->gpus ? s->gpus : 1, .gpu_mem = have,
                        .seq = (uint32_t)o->seq_len, .micro_batch = (uint32_t)o->micro_batch,
                        .segments = segments ? segments : 1};
    gd_plan_settings settings = gd_plan_ladder[0];
    settings.shard = s->memory.shard;
    settings.recompute = s->memory.recompute;
    settings.offload = s->memory.offload;
    settings.attention = o->attention; /* the run's */
    settings.precision = o->precision;
    settings.moments = o->moments;
    gd_plan plan;
    if (gd_plan_compute(&plan, &in, &settings) != GD_OK)
        return;
    bool cpu = strcmp(backend, "cpu") == 0;
    uint64_t need = cpu ? plan.per_gpu - plan.workspace : plan.per_gpu;
    bool fits = need <= have;
    gd_check_add(p, "memory", fits ? GD_CHECK_OK : GD_CHECK_FAIL, false,
                 fits ? NULL : "a host with more memory a rank, more of its GPUs (gpus in "
                               "node.yaml) with shard: full, or a run of a smaller model",
                 "%s: a rank trains this run's model in %.2f GiB (gonka-diloco plan), of %.1f "
                 "GiB it has",
                 backend, (double)need / 1073741824.0, (double)have / 1073741824.0);
}

/* The run: it exists, takes this class and collateral, has room; and the
 * account can pay the bond and the fees. */
static void gd_check_run(gd_preflight *p, const gd_member_settings *s, gd_rpc *rpc,
                         const char *address) {
    Gonka__Diloco__V1__QueryRunResponse *q = NULL;
    gd_status st = gd_diloco_query_run(rpc, &q, s->run, NULL);
    if (st != GD_OK || q->run == NULL || q->run->spec == NULL) {
        gd_check_add(p, "run", GD_CHECK_FAIL, st == GD_ERR_NOT_FOUND,
                     "set run to one the chain has (gonka-diloco query runs)", "run %" PRIu64
                     ": %s", s->run, st == GD_OK ? "no spec" : gd_error_detail());
        if (q)
            protobuf_c_message_free_unpacked(&q->base, NULL);
        return;
    }
    const Gonka__Diloco__V1__RunSpec *spec = q->run->spec;
    bool member = false;
    for (size_t i = 0; i < q->n_members; i++)
        member |= strcmp(q->members[i]->address, address) == 0;
    bool full = !member && q->n_members >= spec->max_members;
    gd_check_add(p, "run", full ? GD_CHECK_FAIL : GD_CHECK_OK, true,
                 full ? "wait for a member to leave, or take part in another run" : NULL,
                 "run %" PRIu64 ": %zu of %u members%s", s->run, q->n_members, spec->max_members,
                 member ? ", this account among them" : "");
    char cls[GD_HARDWARE_CLASS_MAX + 1];
    if (strcmp(s->hardware_class, "auto") != 0)
        snprintf(cls, sizeof cls, "%s", s->hardware_class);
    else if (gd_hardware_class_auto(cls, s->backend, NULL, 0) != GD_OK)
        snprintf(cls, sizeof cls, "(unknown: %s)", gd_error_detail());
    bool listed = gd_run_spec_lists_class(spec, cls);
    size_t peers = 0;
    for (size_t i = 0; i < q->n_members; i++)
        peers += strcmp(q->members[i]->hw_class, cls) == 0;
    if (!listed)
        gd_check_add(p, "class", GD_CHECK_FAIL, false,
                     "set hardware_class to one of the run's, on a host that has it",
                     "%s is not one of run %" PRIu64 "'s %zu classes (%s%s)", cls, s->run,
                     spec->n_hw_classes, spec->n_hw_classes ? spec->hw_classes[0] : "",
                     spec->n_hw_classes > 1 ? ", ..." : "");
    else
        gd_check_add(p, "class", peers >= spec->min_class_members ? GD_CHECK_OK : GD_CHECK_WARN,
                     false,
                     peers >= spec->min_class_members
                         ? NULL
                         : "checks of this class wait until enough members join it",
                     "%s: %zu member%s of it, the run checks within a class of %u or more",
                     cls, peers, peers == 1 ? "" : "s", spec->min_class_members);
    gd_coin want;
    const Cosmos__Base__V1beta1__Coin *min = spec->min_collateral;
    if (gd_coin_parse(&want, s->collateral) == GD_OK && min != NULL) {
        bool enough = gd_run_spec_takes_collateral(spec, &want);
        gd_check_add(p, "collateral", enough ? GD_CHECK_OK : GD_CHECK_FAIL, false,
                     enough ? NULL : "raise collateral in node.yaml to the run's min_collateral",
                     "%s%s against the run's min_collateral %s%s", want.amount, want.denom,
                     min->amount, min->denom);
        gd_gas_price price;
        gd_coin have;
        char fee[GD_AMOUNT_DIGITS_MAX + 1] = "0";
        if (gd_gas_price_parse(&price, s->gas_price[0] ? s->gas_price : GD_GAS_PRICE_DEFAULT) ==
            GD_OK)
            gd_gas_price_fee(&price, GD_PREFLIGHT_GAS, fee);
        if (gd_query_balance(rpc, &have, address, want.denom, NULL) == GD_OK) {
            /* Joining bonds the collateral; every duty after pays a fee. */
            uint64_t bal = strtoull(have.amount, NULL, 10), bond = strtoull(want.amount, NULL, 10);
            uint64_t f = strtoull(fee, NULL, 10), need = (member ? 0 : bond) + 20 * f;
            bool ok = bal >= need;
            gd_check_add(p, "balance", ok ? GD_CHECK_OK : GD_CHECK_FAIL, true,
                         ok ? NULL : "send the account funds",
                         "%s%s; %s %" PRIu64 "%s (%s20 transactions' fees of %s%s each)",
                         have.amount, have.denom, ok ? "covers" : "below", need, want.denom,
                         member ? "" : "the collateral and ", fee, want.denom);
        }
    }
    gd_check_space(p, s, spec);
    gd_check_memory(p, s, spec);
    protobuf_c_message_free_unpacked(&q->base, NULL);
}

/* Whether peers reach this daemon where node.yaml says they will. */
static void gd_check_public_url(gd_preflight *p, const gd_member_settings *s, bool daemon_runs) {
    if (!daemon_runs) {
        gd_check_add(p, "public_url", GD_CHECK_OK, false, NULL,
                     "%s (checked once the daemon runs: gonka-diloco node check beside it)",
                     s->public_url);
        return;
    }
    gd_peer_http *peer = NULL;
    gd_status st = gd_peer_http_open(&peer);
    if (st == GD_OK) {
        gd_peer_port port = gd_peer_http_port(peer);
        gd_artifact_req req = {.kind = GD_REQ_STATUS};
        gd_artifact_answer a;
        memset(&a, 0, sizeof a);
        st = port.iface->fetch(port.ctx, &a, s->public_url, &req, 1 << 20);
        gd_artifact_answer_free(&a);
        gd_peer_http_close(peer);
    }
    char url[GD_SETTINGS_TEXT_MAX + 16];
    snprintf(url, sizeof url, "%s/v1/status", s->public_url);
    gd_check_add(p, "public_url", st == GD_OK ? GD_CHECK_OK : GD_CHECK_WARN, false,
                 st == GD_OK ? NULL
                             : "make public_url reach listen from other hosts (firewall, NAT, "
                               "a reverse proxy)",
                 "%s %s", url, st == GD_OK ? "answers" : gd_error_detail());
}

void gd_preflight_host(gd_preflight *out, const gd_member_settings *s, bool for_run) {
    memset(out, 0, sizeof *out);
    char address[GD_ADDRESS_STR_MAX] = "";
    bool have_key = gd_check_key(out, s, address, sizeof address);
    bool daemon_runs = gd_check_state_dir(out, s, for_run);
    gd_check_archive(out, s);
    gd_check_listen(out, s, daemon_runs);
    gd_check_backend(out, s);
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    /* run does not wait long on a chain that is down: it waits that out
     * with backoff anyway. */
    opt.deadline_ms = for_run ? 3000 : 10000;
    gd_rpc *rpc = NULL;
    if (gd_rpc_open(&rpc, s->rpc, &opt) != GD_OK) {
        gd_check_add(out, "chain", GD_CHECK_FAIL, false, "fix chain.rpc", "%s: %s", s->rpc,
                     gd_error_detail());
        return;
    }
    if (gd_check_chain(out, s, rpc) && have_key)
        gd_check_run(out, s, rpc, address);
    gd_rpc_close(rpc);
    if (!for_run)
        gd_check_public_url(out, s, daemon_runs);
}

bool gd_preflight_blocks(const gd_preflight *p) {
    for (size_t i = 0; i < p->n; i++)
        if (p->checks[i].level == GD_CHECK_FAIL && !p->checks[i].heals)
            return true;
    return false;
}
