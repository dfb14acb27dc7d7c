/* The synthetic Markov source: a random order-ORDER chain over ALPHABET
 * symbols whose entropy rate is known exactly, so a model trained on it has
 * an objective floor (and the best order-(ORDER-1) model a clearly higher
 * one).
 *
 * Construction (a pure function of SEED, ALPHABET and ORDER). A context is
 * the last ORDER symbols, numbered c = x_{t-ORDER} * A^(ORDER-1) + ... +
 * x_{t-1} (newest least significant). For each context c, a Philox stream
 * keyed by (SEED; tag, c, ALPHABET, ORDER) picks K = min(3, ALPHABET)
 * distinct "support" symbols and weights w_k = 1 - U(0,1) in (0, 1]; then
 *     p(s | c) = eps / A + (1 - eps) * w_k / sum(w)   if s is support k,
 *     p(s | c) = eps / A                               otherwise,
 * with eps = 0.01. The eps floor makes every transition possible, so the
 * chain on contexts is irreducible and aperiodic and has one stationary
 * distribution. Each context concentrates 99% of its mass on 3 symbols of
 * its own choosing, so the next symbol depends strongly on all ORDER
 * previous symbols: forgetting the oldest one mixes A unrelated 3-symbol
 * distributions, and H(X_t | ORDER-1 previous) is well above the entropy
 * rate H(X_t | ORDER previous) (for the defaults, 16 symbols and order 2,
 * by about 1.5 nats). With 2 or 3 symbols the support is the whole
 * alphabet and only the random weights carry the dependence, so the gap is
 * smaller (a few hundredths of a nat).
 *
 * Stationary distribution: power iteration in double from the uniform
 * distribution, in a fixed order of operations, until the L1 change is below
 * 1e-13 (at most GD_MARKOV_MAX_ITERATIONS). Entropies: H_j = H(X_t | j
 * previous) = H(j+1 symbols) - H(j symbols), the joint entropies of the
 * stationary m-gram distributions, which are marginals of the stationary
 * context distribution (m <= ORDER) or of context times transition
 * (m = ORDER + 1).
 *
 * Sampling uses only comparisons and exactly rounded IEEE additions and
 * multiplications in a fixed order (no libm, no fused multiply-add: ISO C
 * mode makes GCC keep them apart, and the pragma below tells clang), so a
 * seed gives the same symbols on every IEEE-754 machine. The stationary
 * distribution feeds the start-context CDF, so it obeys the same rule; only
 * the entropies use log(). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "trainer/markov.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define GD_MARKOV_SUPPORT 3
#define GD_MARKOV_EPSILON 0.01
#define GD_MARKOV_TOLERANCE 1e-13
#define GD_MARKOV_MAX_ITERATIONS 20000
#define GD_MARKOV_TAG_TABLE 0x6d6b7462u /* "mktb" */

struct gd_markov {
    uint64_t seed;
    uint32_t alphabet, order;
    uint32_t contexts; /* alphabet^order */
    uint32_t stride;   /* alphabet^(order-1): contexts sharing the newest order-1 symbols */
    uint32_t support;  /* K = min(3, alphabet) */
    double floor;      /* eps / alphabet: every symbol's probability before the support's */
    uint8_t *symbols;  /* contexts * support: support symbols, ascending per context */
    double *extra;     /* contexts * support: (1 - eps) * w_k / sum(w) */
    double *cum_extra; /* contexts * (support + 1): running sums of extra, first 0 */
    double *stationary;
    double *start_cdf; /* running sums of stationary; the last forced to 1 */
    double entropies[GD_MARKOV_MAX_ORDER + 1];
};

uint64_t gd_markov_seed(const gd_markov *markov) { return markov->seed; }
uint32_t gd_markov_alphabet(const gd_markov *markov) { return markov->alphabet; }
uint32_t gd_markov_order(const gd_markov *markov) { return markov->order; }

void gd_markov_free(gd_markov *markov) {
    if (markov == NULL)
        return;
    free(markov->symbols);
    free(markov->extra);
    free(markov->cum_extra);
    free(markov->stationary);
    free(markov->start_cdf);
    free(markov);
}

static void gd_markov_build_context(gd_markov *m, uint32_t c) {
    uint32_t ids[4] = {GD_MARKOV_TAG_TABLE, c, m->alphabet, m->order};
    gd_rng rng;
    gd_rng_init(&rng, m->seed, ids);
    uint32_t sym[GD_MARKOV_SUPPORT];
    double w[GD_MARKOV_SUPPORT];
    uint32_t k_max = m->support;
    for (uint32_t k = 0; k < k_max; k++) {
        uint32_t s;
        bool fresh;
        do {
            s = (uint32_t)gd_rng_below(&rng, m->alphabet);
            fresh = true;
            for (uint32_t i = 0; i < k; i++)
                fresh = fresh && sym[i] != s;
        } while (!fresh);
        sym[k] = s;
        w[k] = 1.0 - gd_rng_uniform(&rng);
    }
    /* Ascending symbols, so the CDF can be evaluated left to right. */
    for (uint32_t k = 1; k < k_max; k++)
        for (uint32_t i = k; i > 0 && sym[i - 1] > sym[i]; i--) {
            uint32_t ts = sym[i];
            sym[i] = sym[i - 1];
            sym[i - 1] = ts;
            double tw = w[i];
            w[i] = w[i - 1];
            w[i - 1] = tw;
        }
    double total = 0;
    for (uint32_t k = 0; k < k_max; k++)
        total += w[k];
    const double keep = 1.0 - GD_MARKOV_EPSILON;
    size_t base = (size_t)c * k_max;
    double *cum = m->cum_extra + (size_t)c * (k_max + 1);
    cum[0] = 0;
    for (uint32_t k = 0; k < k_max; k++) {
        double q = w[k] / total;
        m->symbols[base + k] = (uint8_t)sym[k];
        m->extra[base + k] = keep * q;
        cum[k + 1] = cum[k] + m->extra[base + k];
    }
}

/* One step of pi' = pi P, normalised; returns the L1 change. */
static double gd_markov_step(const gd_markov *m, const double *pi, double *next) {
    uint32_t A = m->alphabet, K = m->support;
    for (uint32_t c = 0; c < m->contexts; c++)
        next[c] = 0;
    /* Support mass: context c moves to (c mod stride) * A + s. */
    for (uint32_t c = 0; c < m->contexts; c++) {
        size_t to = (size_t)(c % m->stride) * A;
        for (uint32_t k = 0; k < K; k++) {
            double flow = pi[c] * m->extra[(size_t)c * K + k];
            next[to + m->symbols[(size_t)c * K + k]] += flow;
        }
    }
    /* Floor mass: every context a * stride + d sends floor to each d * A + s. */
    for (uint32_t d = 0; d < m->stride; d++) {
        double from = 0;
        for (uint32_t a = 0; a < A; a++)
            from += pi[(size_t)a * m->stride + d];
        double flow = from * m->floor;
        for (uint32_t s = 0; s < A; s++)
            next[(size_t)d * A + s] += flow;
    }
    double sum = 0;
    for (uint32_t c = 0; c < m->contexts; c++)
        sum += next[c];
    double change = 0;
    for (uint32_t c = 0; c < m->contexts; c++) {
        next[c] /= sum;
        change += fabs(next[c] - pi[c]);
    }
    return change;
}

static gd_status gd_markov_stationary(gd_markov *m) {
    double *next = malloc((size_t)m->contexts * sizeof *next);
    if (next == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for the Markov source's distribution");
    double *pi = m->stationary;
    for (uint32_t c = 0; c < m->contexts; c++)
        pi[c] = 1.0 / m->contexts;
    for (int it = 0; it < GD_MARKOV_MAX_ITERATIONS; it++) {
        double change = gd_markov_step(m, pi, next);
        double *t = pi;
        pi = next;
        next = t;
        if (change < GD_MARKOV_TOLERANCE)
            break;
    }
    if (pi != m->stationary) {
        memcpy(m->stationary, pi, (size_t)m->contexts * sizeof *pi);
        next = pi;
    }
    free(next);
    double run = 0;
    for (uint32_t c = 0; c < m->contexts; c++) {
        run += m->stationary[c];
        m->start_cdf[c] = run;
    }
    m->start_cdf[m->contexts - 1] = 1.0;
    return GD_OK;
}

static double gd_plogp(double p) { return p > 0 ? -p * log(p) : 0; }

static gd_status gd_markov_compute_entropies(gd_markov *m) {
    uint32_t A = m->alphabet, K = m->support;
    double joint[GD_MARKOV_MAX_ORDER + 2] = {0};
    double *gram = malloc((size_t)m->contexts * sizeof *gram);
    if (gram == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for the Markov source's entropies");
    /* m-grams for m <= order: the stationary context distribution summed over
     * its order - m oldest symbols. */
    uint32_t size = 1;
    for (uint32_t len = 1; len <= m->order; len++) {
        size *= A;
        for (uint32_t d = 0; d < size; d++)
            gram[d] = 0;
        for (uint32_t c = 0; c < m->contexts; c++)
            gram[c % size] += m->stationary[c];
        double h = 0;
        for (uint32_t d = 0; d < size; d++)
            h += gd_plogp(gram[d]);
        joint[len] = h;
    }
    free(gram);
    /* (order+1)-grams: pi(c) p(s | c); the A - K floor-only symbols of a
     * context all have the same probability. */
    double h = 0;
    for (uint32_t c = 0; c < m->contexts; c++) {
        double pi = m->stationary[c];
        for (uint32_t k = 0; k < K; k++)
            h += gd_plogp(pi * (m->floor + m->extra[(size_t)c * K + k]));
        h += (double)(A - K) * gd_plogp(pi * m->floor);
    }
    joint[m->order + 1] = h;
    for (uint32_t j = 0; j <= m->order; j++)
        m->entropies[j] = joint[j + 1] - joint[j];
    return GD_OK;
}

gd_status gd_markov_new(gd_markov **out, uint64_t seed, uint32_t alphabet, uint32_t order) {
    *out = NULL;
    if (alphabet < GD_MARKOV_MIN_ALPHABET || alphabet > GD_MARKOV_MAX_ALPHABET)
        return gd_fail(GD_ERR_INVALID, "Markov ALPHABET %u is out of range: use %d..%d symbols",
                       alphabet, GD_MARKOV_MIN_ALPHABET, GD_MARKOV_MAX_ALPHABET);
    if (order < GD_MARKOV_MIN_ORDER || order > GD_MARKOV_MAX_ORDER)
        return gd_fail(GD_ERR_INVALID, "Markov ORDER %u is out of range: use %d..%d", order,
                       GD_MARKOV_MIN_ORDER, GD_MARKOV_MAX_ORDER);
    uint64_t contexts = 1;
    for (uint32_t i = 0; i < order; i++)
        contexts *= alphabet; /* <= 256^4: no overflow */
    if (contexts > GD_MARKOV_MAX_CONTEXTS)
        return gd_fail(GD_ERR_INVALID,
                       "Markov ALPHABET^ORDER = %u^%u = %llu contexts is more than %d; use a "
                       "smaller alphabet or order",
                       alphabet, order, (unsigned long long)contexts, GD_MARKOV_MAX_CONTEXTS);
    gd_markov *m = calloc(1, sizeof *m);
    if (m == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    m->seed = seed;
    m->alphabet = alphabet;
    m->order = order;
    m->contexts = (uint32_t)contexts;
    m->stride = (uint32_t)(contexts / alphabet);
    m->support = alphabet < GD_MARKOV_SUPPORT ? alphabet : GD_MARKOV_SUPPORT;
    m->floor = GD_MARKOV_EPSILON / alphabet;
    size_t n = (size_t)contexts;
    m->symbols = malloc(n * m->support);
    m->extra = malloc(n * m->support * sizeof *m->extra);
    m->cum_extra = malloc(n * (m->support + 1) * sizeof *m->cum_extra);
    m->stationary = malloc(n * sizeof *m->stationary);
    m->start_cdf = malloc(n * sizeof *m->start_cdf);
    if (m->symbols == NULL || m->extra == NULL || m->cum_extra == NULL ||
        m->stationary == NULL || m->start_cdf == NULL) {
        gd_markov_free(m);
        return gd_fail(GD_ERR_NOMEM, "out of memory for a Markov table of %zu contexts", n);
    }
    for (uint32_t c = 0; c < m->contexts; c++)
        gd_markov_build_context(m, c);
    gd_status s = gd_markov_stationary(m);
    if (s == GD_OK)
        s = gd_markov_compute_entropies(m);
    if (s != GD_OK) {
        gd_markov_free(m);
        return s;
    }
    *out = m;
    return GD_OK;
}

size_t gd_markov_entropies(const gd_markov *markov, double *entropies, size_t cap) {
    size_t n = (size_t)markov->order + 1;
    if (cap < n)
        return 0;
    for (size_t j = 0; j < n; j++)
        entropies[j] = markov->entropies[j];
    return n;
}

double gd_markov_prob(const gd_markov *markov, uint32_t context, uint32_t symbol) {
    if (context >= markov->contexts || symbol >= markov->alphabet)
        return 0;
    size_t base = (size_t)context * markov->support;
    for (uint32_t k = 0; k < markov->support; k++)
        if (markov->symbols[base + k] == symbol)
            return markov->floor + markov->extra[base + k];
    return markov->floor;
}

/* F(s) = P(next <= s | c) = (s + 1) * floor + (support mass of symbols <= s):
 * two exactly rounded operations on monotone terms, so F is monotone in s
 * and the same on every IEEE machine. */
static double gd_markov_cdf(const gd_markov *m, uint32_t c, uint32_t s) {
    size_t base = (size_t)c * m->support;
    uint32_t below = 0;
    while (below < m->support && m->symbols[base + below] <= s)
        below++;
    double floor_mass = (double)(s + 1) * m->floor;
    double support_mass = m->cum_extra[(size_t)c * (m->support + 1) + below];
    return floor_mass + support_mass;
}

/* Inverse CDF: the smallest s with u < F(s), or the last symbol (F of the
 * last symbol is 1 up to rounding, which must not lose a draw). */
static uint32_t gd_markov_next(const gd_markov *m, uint32_t c, double u) {
    uint32_t lo = 0, hi = m->alphabet - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (u < gd_markov_cdf(m, c, mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void gd_markov_sample(const gd_markov *markov, gd_rng *rng, int32_t *out, size_t len) {
    const gd_markov *m = markov;
    /* Start context: the smallest c with u < start_cdf[c] (the last is 1). */
    double u = gd_rng_uniform(rng);
    uint32_t lo = 0, hi = m->contexts - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (u < m->start_cdf[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    uint32_t ctx = lo;
    size_t head = len < m->order ? len : m->order;
    uint32_t place = m->stride; /* A^(order-1): weight of the oldest symbol */
    for (size_t i = 0; i < m->order; i++) {
        if (i < head)
            out[i] = (int32_t)(ctx / place % m->alphabet);
        place /= m->alphabet;
    }
    for (size_t t = head; t < len; t++) {
        uint32_t s = gd_markov_next(m, ctx, gd_rng_uniform(rng));
        out[t] = (int32_t)s;
        ctx = ctx % m->stride * m->alphabet + s;
    }
}
