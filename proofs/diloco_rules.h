/* The deterministic draws, seals, digest and address order of the DiLoCo
 * training module (gonka.diloco.v1), below both sides that must agree on
 * them: the chain module (chain/module), which makes the draws, and the
 * clients, validators and trainer that predict or reproduce them.
 * docs/protocol.md section 7 defines each one; all hashes are SHA-256 over
 * the concatenation shown, addresses as their bech32 ASCII. */
#ifndef GD_PROOFS_DILOCO_RULES_H
#define GD_PROOFS_DILOCO_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_DILOCO_HASH_LEN 32
#define GD_DILOCO_PPM 1000000u

/* Verdict values, as the proto enum gonka.diloco.v1.Verdict. */
typedef enum gd_diloco_verdict {
    GD_VERDICT_UNSPECIFIED = 0,
    GD_VERDICT_PASS = 1,
    GD_VERDICT_FAIL = 2,
    GD_VERDICT_UNAVAILABLE = 3,
} gd_diloco_verdict;

/* Every sealed answer (verdicts, re-checks, attestations, randomness) is
 * committed the same way, salted so that equal answers give unrelated
 * seals until they are revealed:
 *   seal = SHA-256("gd-diloco-seal-v2" || kind byte || signer length byte
 *                  || signer || body || salt),
 * salt 32 bytes; signers are addresses, far below 255 bytes (a longer one
 * would be cut to 255). A verdict's body is its verdict byte then its 32-byte
 * digest (all zero for UNAVAILABLE); an attestation's is the 32-byte state
 * hash; a randomness seal has no body and its secret is the salt. */
#define GD_DILOCO_SALT_LEN 32
typedef enum gd_diloco_seal_kind {
    GD_SEAL_VERDICT = 1,
    GD_SEAL_RECHECK = 2,
    GD_SEAL_ATTEST = 3,
    GD_SEAL_RANDOMNESS = 4,
    GD_SEAL_OWN = 5, /* a target's own digest of one of its checks (a PASS) */
} gd_diloco_seal_kind;

void gd_diloco_seal(uint8_t out[GD_DILOCO_HASH_LEN], gd_diloco_seal_kind kind, const char *signer,
                    const uint8_t *body, size_t body_len, const uint8_t salt[GD_DILOCO_SALT_LEN]);
/* The seal of a verdict, re-check or own digest (kind GD_SEAL_VERDICT,
 * _RECHECK or _OWN). */
void gd_diloco_verdict_seal(uint8_t out[GD_DILOCO_HASH_LEN], gd_diloco_seal_kind kind,
                            const char *signer, gd_diloco_verdict verdict,
                            const uint8_t digest[GD_DILOCO_HASH_LEN],
                            const uint8_t salt[GD_DILOCO_SALT_LEN]);

/* A round's seed, fixed at its verify_start: the beacon (the hash of the
 * round's train_start block, which no one could choose knowing the secrets)
 * and every secret revealed for the round, in the members' address order:
 *   seed = SHA-256("gd-diloco-seed-v1" || LE64 run || LE64 round || beacon
 *                  || secret_1 || ... || secret_n).
 * Each purpose's randomness is SHA-256("gd-diloco-purpose" || seed ||
 * purpose), purposes "verify" (checks, availability chunks) and "recheck". */
gd_status gd_diloco_round_seed(uint8_t seed[GD_DILOCO_HASH_LEN], uint64_t run, uint64_t round,
                               const uint8_t beacon[GD_DILOCO_HASH_LEN], const uint8_t *secrets,
                               size_t n_secrets) GD_MUST_CHECK;
void gd_diloco_purpose(uint8_t out[GD_DILOCO_HASH_LEN], const uint8_t seed[GD_DILOCO_HASH_LEN],
                       const char *purpose);

/* The chunks (0-based; MMR leaf chunk + 1) a reporter must prove for a
 * target: draw j = 0, 1, ... gives LE64(SHA-256("gd-avail-v2" || randomness
 * || target || reporter || LE32 j)[0..8]) mod chunks, repeats skipped, until
 * min(want, chunks) distinct chunks are drawn (in draw order). Returns that
 * count; chunks >= 1, want <= GD_DILOCO_AVAIL_CHUNKS_MAX. */
#define GD_DILOCO_AVAIL_CHUNKS_MAX 16
uint32_t gd_diloco_avail_chunks(uint32_t out[GD_DILOCO_AVAIL_CHUNKS_MAX],
                                const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                                const char *reporter, uint32_t chunks, uint32_t want);

/* An availability report's state sample (proofs/state_sample.h checks its
 * proof): h = SHA-256("gd-avail-state-v1" || randomness || target ||
 * reporter); the transcript leaf is LE64(h[0..8]) mod segment_count (a
 * segment's start state), the array LE32(h[8..12]) mod 3 (params, exp_avg,
 * exp_avg_sq: what a re-execution downloads) and the chunk LE64(h[16..24])
 * mod that array's chunk count, which the leaf's descriptor fixes. Neither
 * the worker nor the reporter knows it before the seed is fixed. */
/* The arrays a sample draws from (a re-execution's: not the residual). */
#define GD_STATE_SAMPLE_ARRAYS 3

typedef struct gd_state_sample {
    uint32_t leaf;  /* transcript leaf: segment start, < segment_count */
    uint32_t array; /* 0 params, 1 exp_avg, 2 exp_avg_sq */
    uint64_t pick;  /* the chunk is pick mod the array's chunk count */
} gd_state_sample;

/* segment_count >= 1 (0 draws leaf 0). */
void gd_state_sample_draw(gd_state_sample *out, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                          const char *target, const char *reporter, uint32_t segment_count);

/* A pick weighted by bonded collateral: index i with probability weights[i]
 * / sum, from x = LE128(h[0..16]) mod sum, the first i whose running sum
 * exceeds x (uniform, LE64(h[0..8]) mod n, when every weight is 0); 0 when n
 * is 0, reading nothing. */
uint32_t gd_diloco_draw_weighted(const uint8_t h[GD_DILOCO_HASH_LEN], const uint64_t *weights,
                                 uint32_t n);

/* Check j of a target: r = SHA-256("gd-check" || randomness || target ||
 * LE32 j), and for its chunk c = SHA-256("gd-check-chunk" || randomness ||
 * target || LE32 j) (a hash of its own: r's 32 bytes are all taken). */
typedef struct gd_diloco_check_draw {
    uint32_t segment; /* LE64(r[0..8]) mod segments */
    uint32_t step;    /* LE32(r[28..32]) mod segment_steps */
    bool twice;       /* LE32(r[16..20]) mod 10^6 < double_ppm */
    uint32_t chunk;   /* LE64(c[0..8]) mod chunks: the payload chunk (0-based,
                       * MMR leaf chunk + 1) the validator checks against the
                       * target's final state */
} gd_diloco_check_draw;

/* segments, segment_steps and chunks >= 1 (0 counts as 1). */
void gd_diloco_draw_check(gd_diloco_check_draw *out, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                          const char *target, uint32_t check, uint32_t segments,
                          uint32_t segment_steps, uint32_t chunks, uint32_t double_ppm);

/* Validator k (0, or 1 for a double check) of check j, or re-checker k of a
 * disputed check: gd_diloco_draw_weighted over the eligible members' weights
 * with h = SHA-256(tag || randomness || target || LE32 check || LE32 k), tag
 * "gd-validator" or "gd-recheck". The module draws k = 0, 1, ... and takes
 * each pick out of the eligible list (weight and all) before the next. */
uint32_t gd_diloco_draw_member(const char *tag, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                               const char *target, uint32_t check, uint32_t k,
                               const uint64_t *weights, uint32_t n);

/* A segment's trace: a hash chain over what each of its K inner steps
 * computes and nothing publishes, the step's mean loss (its forward pass)
 * and its gradient norm before clipping (its backward pass):
 *   t_0 = SHA-256("gd-segment-trace-v1"),
 *   t_k+1 = SHA-256(t_k || LE64 bits(loss_k) || LE64 bits(grad_norm_k))
 * (IEEE-754 binary64 bits). Within a hardware class both are bit-exact and
 * do not depend on how many GPUs computed the step, so the worker records
 * it while it trains and a validator gets it only by re-executing every
 * step of the segment. */
void gd_diloco_trace_begin(uint8_t trace[GD_DILOCO_HASH_LEN]);
void gd_diloco_trace_step(uint8_t trace[GD_DILOCO_HASH_LEN], double loss, double grad_norm);

/* The verdict digest, which a validator computes by re-executing the
 * segment and the target by keeping its trace while it trained:
 * SHA-256("gd-verdict-v2" || LE64 run || LE64 round || target || LE32 segment
 *         || the segment's trace || state hash at the segment's end).
 * The trace binds every step of the segment; the end hash (public, the
 * transcript's leaf) binds the comparison that decides PASS or FAIL. */
void gd_diloco_verdict_digest(uint8_t out[GD_DILOCO_HASH_LEN], uint64_t run, uint64_t round,
                              const char *target, uint32_t segment,
                              const uint8_t trace[GD_DILOCO_HASH_LEN],
                              const uint8_t end_state[GD_DILOCO_HASH_LEN]);

/* The one address order (snapshots, eligible validators, sets): by
 * length, then bytewise. For addresses of one length, as all of Gonka's
 * account addresses are, that is plain string order. <0, 0 or >0. */
int gd_diloco_address_cmp(const char *a, const char *b);

#endif
