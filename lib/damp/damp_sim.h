/* damp_sim.h — analysis and Monte-Carlo simulation of the dampening rule
 * (Appendix B-E "Dampening analysis", Table XV, Fig. 5).
 *
 * The simulator applies the same rule as damp.c: per call P <- lambda*P,
 * then + w if the call diverges; it stops a release at its first P >= S,
 * since Table XV counts releases suppressed at least once. */
#ifndef GL_DAMP_SIM_H
#define GL_DAMP_SIM_H

#include <jv.h>
#include <stdbool.h>
#include <stdint.h>

#include "damp/damp.h"

/* ---- analysis -------------------------------------------------------- */

/* p* = S(1 - lambda)/w: the divergence rate at which the stationary mean
 * penalty w p/(1 - lambda) reaches S (+inf when w = 0). */
double gl_damp_p_star(const struct gl_damp_params *p);
/* Smallest k >= 1 with a(1 - lambda^k)/(1 - lambda) >= S, i.e. calls from
 * P = 0 to suppression when every call adds a; -1 if never. a = w is the
 * always-diverging release, a = p w the expected trajectory at rate p. */
int64_t gl_damp_calls_to_suppress(const struct gl_damp_params *p, double per_call);
/* Smallest n with S lambda^n < R: calls (refused ones count) from S back to
 * usable; the paper's ceil(h log2(S/R)) except where that is an integer. */
int64_t gl_damp_calls_to_recover(const struct gl_damp_params *p);

/* The analysis as one JSON object (owned): parameters, lambda, p_star,
 * calls_to_suppress, calls_to_recover, and "trajectory": one
 * {"rate":r,"calls_to_suppress":k|null} per rate. */
jv gl_damp_analyze(const struct gl_damp_params *p, const double *rates, size_t nrates);

/* ---- simulation (Table XV) -------------------------------------------- */

enum gl_damp_schedule { GL_DAMP_RANDOM, GL_DAMP_BURSTY };

/* Bursty schedule (docs/damp.md): bursts of GL_DAMP_BURST_LEN calls, inside
 * which each call diverges with probability GL_DAMP_BURST_RATE; outside a
 * burst no call diverges, and each call starts a new burst (which includes
 * it) with probability b = p / (q L - (L-1) p). A renewal cycle is then a
 * geometric gap of mean (1-b)/b calls plus L burst calls carrying q L
 * divergences, so the long-run rate is q L b / (1 + (L-1) b) = p exactly.
 * Needs p <= q. */
#define GL_DAMP_BURST_LEN 10
#define GL_DAMP_BURST_RATE 0.5

struct gl_damp_sim {
	enum gl_damp_schedule schedule;
	double rate;       /* long-run divergence rate p, in [0, 1] */
	uint64_t calls;    /* horizon N per release */
	uint64_t releases; /* simulated releases */
	uint64_t seed;
};

struct gl_damp_sim_result {
	uint64_t suppressed;      /* releases suppressed at least once */
	uint64_t calls_simulated; /* calls run (a release stops when suppressed) */
	uint64_t divergences;     /* diverging calls among them */
	double probability;       /* suppressed / releases */
	double stderr_;           /* sqrt(p(1-p)/releases) */
	double burst_start;       /* b (bursty only, else 0) */
};

/* NULL if s is usable with p, else a static message. */
const char *gl_damp_sim_check(const struct gl_damp_sim *s);
/* Deterministic given s->seed (xoshiro256** seeded by splitmix64). */
void gl_damp_simulate(const struct gl_damp_params *p, const struct gl_damp_sim *s,
		      struct gl_damp_sim_result *out);
/* The result as one JSON object (owned). */
jv gl_damp_sim_json(const struct gl_damp_params *p, const struct gl_damp_sim *s,
		    const struct gl_damp_sim_result *r);

#endif
