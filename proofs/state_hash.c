/* State hashes (see state_hash.h). Why it is built this way:
 * - Each chunk's leaf is hashed with streaming SHA-256 straight from the
 *   caller's parts, so a chunk that spans parts needs no copy and a
 *   multi-gigabyte state is never duplicated.
 * - Chunks are hashed in tasks of a fixed number of chunks (a function of
 *   chunk_bytes only) and appended to the peaks in chunk order, so the root
 *   does not depend on the pool's thread count or scheduling.
 * - Work proceeds in rounds of a bounded number of chunks, so the leaf
 *   hashes in flight stay a few MiB whatever the state size; the peaks are
 *   O(log n). */
#include "proofs/state_hash.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

/* About this many bytes per task, so tiny chunks do not become tiny tasks. */
#define GD_STATE_TASK_BYTES ((size_t)1 << 20)
#define GD_STATE_TASK_CHUNKS_MAX 64
#define GD_STATE_ROUND_TASKS 256

typedef struct gd_state_job {
    const gd_bytes_part *parts;
    const size_t *starts; /* starts[i]: offset of part i; starts[n_parts] = total */
    size_t n_parts;
    size_t total;
    size_t chunk_bytes;
    uint64_t index_base; /* the first chunk's leaf index (chunks already appended) */
    size_t per_task;    /* chunks per task */
    uint64_t first;     /* first chunk of this round */
    size_t round_count; /* chunks in this round */
    uint8_t (*leaves)[GD_MMR_HASH_LEN];
    gd_status status[GD_STATE_ROUND_TASKS];
} gd_state_job;

/* The part holding byte `off` (< total): the last part starting at or
 * before it, which is never an empty one. */
static size_t gd_state_find_part(const gd_state_job *job, size_t off) {
    size_t lo = 0, hi = job->n_parts; /* starts[lo] <= off < starts[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (job->starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void gd_state_task(void *ctx, size_t task) {
    gd_state_job *job = ctx;
    size_t begin = task * job->per_task;
    size_t end = begin + job->per_task;
    if (end > job->round_count)
        end = job->round_count;
    job->status[task] = GD_OK;
    /* Chunks are contiguous, so locate the first one and walk from there. */
    size_t off = (size_t)(job->first + begin) * job->chunk_bytes;
    size_t part = off < job->total ? gd_state_find_part(job, off) : job->n_parts;
    size_t in_part = part < job->n_parts ? off - job->starts[part] : 0;
    for (size_t i = begin; i < end; i++) {
        uint64_t chunk = job->first + i;
        uint64_t index = job->index_base + chunk;
        size_t left = job->total - off;
        if (left > job->chunk_bytes)
            left = job->chunk_bytes;
        off += left;
        gd_sha256_ctx *sha = NULL;
        if (gd_sha256_begin(&sha) != GD_OK) {
            job->status[task] = GD_ERR_NOMEM;
            return;
        }
        /* The leaf prefix of gd_mmr_hash_leaf: 0x00 || LE32(index). */
        uint8_t prefix[5] = {0x00, (uint8_t)index, (uint8_t)(index >> 8),
                             (uint8_t)(index >> 16), (uint8_t)(index >> 24)};
        gd_sha256_update(sha, prefix, sizeof prefix);
        while (left > 0) {
            size_t avail = job->parts[part].len - in_part;
            size_t take = avail < left ? avail : left;
            if (take > 0)
                gd_sha256_update(sha, (const uint8_t *)job->parts[part].data + in_part, take);
            left -= take;
            in_part += take;
            if (in_part == job->parts[part].len) {
                part++;
                in_part = 0;
            }
        }
        gd_sha256_finish(sha, job->leaves[i]);
    }
}

/* Where the leaves of each round of chunks go: the streaming peaks (a root
 * only) or a full MMR (to prove a chunk). */
typedef struct gd_state_sink {
    gd_mmr_peaks *peaks;
    gd_mmr *mmr;
    uint8_t *kept; /* with peaks: leaf i also copied to kept + 32 i, or NULL */
} gd_state_sink;

static gd_status gd_state_sink_append(gd_state_sink *sink, const uint8_t leaf[GD_MMR_HASH_LEN]) {
    if (sink->mmr)
        return gd_mmr_append(sink->mmr, leaf);
    if (sink->kept != NULL)
        memcpy(sink->kept + (size_t)sink->peaks->n_leaves * GD_MMR_HASH_LEN, leaf,
               GD_MMR_HASH_LEN);
    return gd_mmr_peaks_append(sink->peaks, leaf);
}

/* Checks the parts, counts the chunks and hashes every chunk leaf into the
 * sink, in chunk order; the sink's leaves so far come first (their count is
 * the first chunk's leaf index). */
static gd_status gd_state_leaves(gd_pool *pool, const gd_bytes_part *parts, size_t n_parts,
                                 size_t chunk_bytes, gd_state_sink *sink, uint32_t *leaf_count) {
    if (chunk_bytes == 0)
        return gd_fail(GD_ERR_INVALID, "state hash chunk size is 0");
    if (n_parts > 0 && parts == NULL)
        return gd_fail(GD_ERR_INVALID, "state hash given %zu parts and no array", n_parts);
    size_t total = 0;
    for (size_t i = 0; i < n_parts; i++) {
        if (parts[i].len > 0 && parts[i].data == NULL)
            return gd_fail(GD_ERR_INVALID, "state part %zu has no data", i);
        if (parts[i].len > SIZE_MAX - total)
            return gd_fail(GD_ERR_LIMIT, "state parts exceed the address space");
        total += parts[i].len;
    }
    /* An empty state is one empty chunk, so it still has a root. */
    uint64_t n_chunks = (uint64_t)(total / chunk_bytes) + (total % chunk_bytes != 0);
    if (n_chunks == 0)
        n_chunks = 1;
    uint64_t base = sink->mmr ? sink->mmr->n_leaves : sink->peaks->n_leaves;
    if (n_chunks > GD_MMR_MAX_LEAVES - base)
        return gd_fail(GD_ERR_LIMIT, "state of %zu bytes is %llu chunks of %zu (at most %u)",
                       total, (unsigned long long)n_chunks, chunk_bytes,
                       (unsigned)GD_MMR_MAX_LEAVES);

    size_t per_task = GD_STATE_TASK_BYTES / chunk_bytes;
    if (per_task < 1)
        per_task = 1;
    if (per_task > GD_STATE_TASK_CHUNKS_MAX)
        per_task = GD_STATE_TASK_CHUNKS_MAX;
    size_t round_max = per_task * GD_STATE_ROUND_TASKS;
    size_t buf_chunks = n_chunks < round_max ? (size_t)n_chunks : round_max;

    gd_status s = GD_OK;
    gd_state_job *job = calloc(1, sizeof *job);
    size_t *starts = n_parts < SIZE_MAX / sizeof *starts - 1
                         ? malloc((n_parts + 1) * sizeof *starts)
                         : NULL;
    uint8_t(*leaves)[GD_MMR_HASH_LEN] = malloc(buf_chunks * GD_MMR_HASH_LEN);
    if (job == NULL || starts == NULL || leaves == NULL) {
        s = gd_fail(GD_ERR_NOMEM, "out of memory hashing a state");
        goto done;
    }
    starts[0] = 0;
    for (size_t i = 0; i < n_parts; i++)
        starts[i + 1] = starts[i] + parts[i].len;
    job->parts = parts;
    job->starts = starts;
    job->n_parts = n_parts;
    job->total = total;
    job->chunk_bytes = chunk_bytes;
    job->index_base = base;
    job->per_task = per_task;
    job->leaves = leaves;

    for (uint64_t first = 0; first < n_chunks; first += job->round_count) {
        job->first = first;
        job->round_count = n_chunks - first < round_max ? (size_t)(n_chunks - first) : round_max;
        size_t n_tasks = (job->round_count + per_task - 1) / per_task;
        gd_pool_run(pool, n_tasks, gd_state_task, job);
        for (size_t t = 0; t < n_tasks; t++)
            if (job->status[t] != GD_OK) {
                /* The worker's detail is thread-local; record it here. */
                s = gd_fail(job->status[t], "cannot start SHA-256 for a state chunk");
                goto done;
            }
        for (size_t i = 0; i < job->round_count; i++) {
            s = gd_state_sink_append(sink, leaves[i]);
            if (s != GD_OK)
                goto done;
        }
    }
    if (leaf_count != NULL)
        *leaf_count = (uint32_t)n_chunks;
done:
    free(leaves);
    free(starts);
    free(job);
    return s;
}

gd_status gd_state_hash(gd_pool *pool, const gd_bytes_part *parts, size_t n_parts,
                        size_t chunk_bytes, uint8_t root[GD_MMR_HASH_LEN],
                        uint32_t *leaf_count) {
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    gd_state_sink sink = {.peaks = &peaks};
    uint32_t count = 0;
    GD_TRY(gd_state_leaves(pool, parts, n_parts, chunk_bytes, &sink, &count));
    GD_TRY(gd_mmr_peaks_root(&peaks, root));
    if (leaf_count != NULL)
        *leaf_count = count;
    return GD_OK;
}

gd_status gd_state_peaks_append(gd_pool *pool, gd_mmr_peaks *peaks, const void *data, size_t len,
                                size_t chunk_bytes, uint8_t *kept) {
    if (len == 0)
        return gd_fail(GD_ERR_INVALID, "no state bytes to append");
    gd_bytes_part part = {data, len};
    gd_state_sink sink = {.peaks = peaks, .kept = kept};
    return gd_state_leaves(pool, &part, 1, chunk_bytes, &sink, NULL);
}

gd_status gd_state_mmr(gd_pool *pool, const gd_bytes_part *parts, size_t n_parts,
                       size_t chunk_bytes, gd_mmr *mmr) {
    gd_mmr_init(mmr);
    gd_state_sink sink = {.mmr = mmr};
    gd_status s = gd_state_leaves(pool, parts, n_parts, chunk_bytes, &sink, NULL);
    if (s != GD_OK)
        gd_mmr_free(mmr);
    return s;
}

gd_status gd_state_prove(gd_pool *pool, const gd_bytes_part *parts, size_t n_parts,
                         size_t chunk_bytes, uint32_t chunk, gd_mmr_proof *proof) {
    gd_mmr mmr;
    GD_TRY(gd_state_mmr(pool, parts, n_parts, chunk_bytes, &mmr));
    gd_status s = GD_OK;
    if (chunk >= mmr.n_leaves)
        s = gd_fail(GD_ERR_INVALID, "state chunk %u of %u", (unsigned)chunk,
                    (unsigned)mmr.n_leaves);
    if (s == GD_OK)
        s = gd_mmr_prove(&mmr, proof, chunk);
    gd_mmr_free(&mmr);
    return s;
}

uint32_t gd_state_chunk_count(uint64_t total, size_t chunk_bytes) {
    if (chunk_bytes == 0)
        return 0;
    uint64_t n = total / chunk_bytes + (total % chunk_bytes != 0);
    if (n == 0)
        n = 1;
    return n > GD_MMR_MAX_LEAVES ? 0 : (uint32_t)n;
}

bool gd_state_verify_chunk(const uint8_t root[GD_MMR_HASH_LEN], uint64_t total,
                           size_t chunk_bytes, uint32_t chunk, const void *data, size_t len,
                           const gd_mmr_proof *proof) {
    uint32_t count = gd_state_chunk_count(total, chunk_bytes);
    if (count == 0 || chunk >= count || proof == NULL || proof->leaf_index != chunk ||
        proof->leaf_count != count)
        return false;
    uint64_t off = (uint64_t)chunk * chunk_bytes;
    uint64_t want = total - off < chunk_bytes ? total - off : chunk_bytes;
    if (len != want || (len > 0 && data == NULL))
        return false;
    uint8_t leaf[GD_MMR_HASH_LEN];
    gd_mmr_hash_leaf(leaf, chunk, data, len);
    return gd_mmr_verify(root, proof, leaf);
}
