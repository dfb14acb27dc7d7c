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

#define GD_DILOCO_HASH_LEN 32
#define GD_DILOCO_PPM 1000000u

/* Verdict values, as the proto enum gonka.diloco.v1.Verdict. */
typedef enum gd_diloco_verdict {
    GD_VERDICT_UNSPECIFIED = 0,
    GD_VERDICT_PASS = 1,
    GD_VERDICT_FAIL = 2,
    GD_VERDICT_UNAVAILABLE = 3,
} gd_diloco_verdict;

/* seal = SHA-256("gd-verdict-seal" || validator || verdict byte || digest);
 * digest is 32 bytes (all zero for UNAVAILABLE). */
void gd_diloco_seal(uint8_t out[GD_DILOCO_HASH_LEN], const char *validator,
                    gd_diloco_verdict verdict, const uint8_t digest[GD_DILOCO_HASH_LEN]);

/* The chunk (0-based; MMR leaf chunk + 1) a reporter must prove for a target:
 * LE64(SHA-256("gd-avail" || beacon || target || reporter)[0..8]) mod chunks.
 * chunks >= 1. */
uint32_t gd_diloco_avail_chunk(const uint8_t beacon[GD_DILOCO_HASH_LEN], const char *target,
                               const char *reporter, uint32_t chunks);

/* Check j of a target: r = SHA-256("gd-check" || randomness || target ||
 * LE32 j), and for its chunk c = SHA-256("gd-check-chunk" || randomness ||
 * target || LE32 j) (a hash of its own: r's 32 bytes are all taken). */
typedef struct gd_diloco_check_draw {
    uint32_t segment;    /* LE64(r[0..8]) mod segments */
    uint32_t step;       /* LE32(r[28..32]) mod segment_steps */
    uint32_t first;      /* eligible[LE64(r[8..16]) mod n] */
    bool twice;          /* LE32(r[16..20]) mod 10^6 < double_ppm and n >= 2 */
    uint32_t second;     /* (first + 1 + LE64(r[20..28]) mod (n - 1)) mod n */
    uint32_t chunk;      /* LE64(c[0..8]) mod chunks: the payload chunk (0-based,
                          * MMR leaf chunk + 1) the validator checks against
                          * the target's final state */
} gd_diloco_check_draw;

/* segments, segment_steps, chunks and n_eligible >= 1 (0 counts as 1). */
void gd_diloco_draw_check(gd_diloco_check_draw *out, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                          const char *target, uint32_t check, uint32_t segments,
                          uint32_t segment_steps, uint32_t chunks, uint32_t n_eligible,
                          uint32_t double_ppm);

/* Re-checker k of a disputed check: LE64(SHA-256("gd-recheck" || randomness
 * || target || LE32 check || LE32 k)[0..8]) mod n (n >= 1); the module draws
 * k = 0, 1, ... and skips repeats and the check's own validators. */
uint32_t gd_diloco_draw_rechecker(const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                                  uint32_t check, uint32_t k, uint32_t n);

/* The verdict digest a validator computes by re-execution:
 * SHA-256("gd-verdict-v1" || LE64 run || LE64 round || target || LE32 segment
 *         || state hash after the drawn step || state hash at segment end). */
void gd_diloco_verdict_digest(uint8_t out[GD_DILOCO_HASH_LEN], uint64_t run, uint64_t round,
                              const char *target, uint32_t segment,
                              const uint8_t step_state[GD_DILOCO_HASH_LEN],
                              const uint8_t end_state[GD_DILOCO_HASH_LEN]);

/* The one address order (snapshots, eligible validators, sets): by
 * length, then bytewise. For addresses of one length, as all of Gonka's
 * account addresses are, that is plain string order. <0, 0 or >0. */
int gd_diloco_address_cmp(const char *a, const char *b);

#endif
