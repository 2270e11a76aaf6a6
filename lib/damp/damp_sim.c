/* damp_sim.c — analysis and simulation of dampening (Appendix B-E,
 * Table XV, Fig. 5); see damp_sim.h. */
#include "damp/damp_sim.h"

#include <math.h>

#include "core/util.h"

/* ---- analysis -------------------------------------------------------- */

/* 1 - lambda^k = -expm1(-k ln2 / h), exact even when h is large. */
static double one_minus_lambda_pow(const struct gl_damp_params *p, double k)
{
	return -expm1(-k * M_LN2 / p->half_life);
}

double gl_damp_p_star(const struct gl_damp_params *p)
{
	/* Appendix B-E, "Stationary mean": E[P] -> w p/(1 - lambda), which
	 * reaches S at p* = S(1 - lambda)/w. */
	if (p->weight == 0)
		return INFINITY;
	return p->suppress * one_minus_lambda_pow(p, 1) / p->weight;
}

static bool reached(const struct gl_damp_params *p, double a, int64_t k)
{
	return a * one_minus_lambda_pow(p, (double)k) / one_minus_lambda_pow(p, 1) >= p->suppress;
}

/* The closed forms below are exact up to rounding; these loops settle on the
 * exact smallest count of the inequality, a few steps at most. */
#define SETTLE_STEPS 1000

int64_t gl_damp_calls_to_suppress(const struct gl_damp_params *p, double a)
{
	/* Appendix B-E, "Time to suppress": from P = 0, k calls each adding a
	 * give P = a(1 - lambda^k)/(1 - lambda), which first reaches S at
	 * k = ceil(-h log2(1 - S(1 - lambda)/a)); never if that is not > 0. */
	double x = 1 - p->suppress * one_minus_lambda_pow(p, 1) / a;
	if (!(a > 0) || !(x > 0))
		return -1;
	double k0 = ceil(-p->half_life * log2(x)); /* finite: x >= 2^-1074 */
	int64_t k = k0 < 1 ? 1 : (int64_t)k0;
	for (int i = 0; i < SETTLE_STEPS && k > 1 && reached(p, a, k - 1); i++)
		k--;
	for (int i = 0; !reached(p, a, k); i++, k++)
		if (i == SETTLE_STEPS)
			return -1; /* only at the rounding edge of the limit */
	return k;
}

static bool recovered(const struct gl_damp_params *p, int64_t n)
{
	return p->suppress * exp2(-(double)n / p->half_life) < p->reuse;
}

int64_t gl_damp_calls_to_recover(const struct gl_damp_params *p)
{
	/* Appendix B-E, "recovery": without events P falls from S to R in
	 * ceil(h log2(S/R)) calls (the smallest n with S lambda^n < R). */
	double n0 = floor(p->half_life * (log2(p->suppress) - log2(p->reuse))); /* S/R may overflow */
	int64_t n = n0 < 0 ? 0 : (int64_t)n0;
	for (int i = 0; i < SETTLE_STEPS && n > 0 && recovered(p, n - 1); i++)
		n--;
	for (int i = 0; i < SETTLE_STEPS && !recovered(p, n); i++)
		n++;
	return n;
}

static jv count_or_null(int64_t k) { return k < 0 ? jv_null() : jv_number((double)k); }

static jv params_json(const struct gl_damp_params *p)
{
	jv o = jv_object();
	o = jv_object_set(o, jv_string("half_life"), jv_number(p->half_life));
	o = jv_object_set(o, jv_string("weight"), jv_number(p->weight));
	o = jv_object_set(o, jv_string("suppress"), jv_number(p->suppress));
	o = jv_object_set(o, jv_string("reuse"), jv_number(p->reuse));
	o = jv_object_set(o, jv_string("big_weight"),
			  jv_number(gl_damp_event_weight(p, GL_DAMP_VERIFIED)));
	return o;
}

jv gl_damp_analyze(const struct gl_damp_params *p, const double *rates, size_t nrates)
{
	jv o = params_json(p);
	double ps = gl_damp_p_star(p);
	o = jv_object_set(o, jv_string("lambda"), jv_number(gl_damp_lambda(p)));
	o = jv_object_set(o, jv_string("p_star"), isfinite(ps) ? jv_number(ps) : jv_null());
	o = jv_object_set(o, jv_string("calls_to_suppress"),
			  count_or_null(gl_damp_calls_to_suppress(p, p->weight)));
	o = jv_object_set(o, jv_string("calls_to_recover"),
			  jv_number((double)gl_damp_calls_to_recover(p)));
	/* "Along the expected-penalty trajectory, in which each call adds p w". */
	jv traj = jv_array();
	for (size_t i = 0; i < nrates; i++) {
		jv t = jv_object();
		t = jv_object_set(t, jv_string("rate"), jv_number(rates[i]));
		t = jv_object_set(t, jv_string("calls_to_suppress"),
				  count_or_null(gl_damp_calls_to_suppress(p, rates[i] * p->weight)));
		traj = jv_array_append(traj, t);
	}
	return jv_object_set(o, jv_string("trajectory"), traj);
}

/* ---- a small seeded PRNG --------------------------------------------- */

/* splitmix64 seeds xoshiro256** (Blackman and Vigna); both public domain. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct rng {
	uint64_t s[4];
};

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(struct rng *g)
{
	uint64_t *s = g->s;
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

/* A Bernoulli(q) draw is (next >> 11) < threshold(q): 53 random bits
 * against q 2^53, computed once instead of per step. q = 1 is always. */
static uint64_t threshold(double q) { return (uint64_t)ceil(ldexp(q, 53)); }

/* ---- simulation ------------------------------------------------------ */

const char *gl_damp_sim_check(const struct gl_damp_sim *s)
{
	if (!isfinite(s->rate) || s->rate < 0 || s->rate > 1)
		return "--rate must be a number in [0, 1]";
	if (s->schedule == GL_DAMP_BURSTY && s->rate > GL_DAMP_BURST_RATE)
		return "--schedule bursty needs --rate <= 0.5 (the rate inside a burst)";
	if (s->calls < 1 || s->calls > 1000000000000ull)
		return "--calls must be an integer in [1, 1e12]";
	if (s->releases < 1 || s->releases > 100000000ull)
		return "--releases must be an integer in [1, 1e8]";
	/* Every count in the output stays an exact JSON integer. */
	if ((double)s->calls * (double)s->releases > 9007199254740991.0)
		return "--calls times --releases must not exceed 2^53 - 1";
	if (s->seed > 9007199254740991ull)
		return "--seed must be an integer in [0, 2^53 - 1]";
	return NULL;
}

struct sim_ctx {
	double lambda, w, S;
	uint64_t calls, thr, burst_thr, in_burst_thr;
};

/* One release under the random schedule: 1 if suppressed within calls. */
static int run_random(const struct sim_ctx *c, struct rng *g, uint64_t *steps, uint64_t *divs)
{
	double P = 0;
	for (uint64_t n = 0; n < c->calls; n++) {
		P *= c->lambda; /* decay on every call ... */
		if ((rng_next(g) >> 11) < c->thr) {
			P += c->w; /* ... then the event's weight */
			(*divs)++;
			if (P >= c->S) {
				*steps += n + 1;
				return 1;
			}
		}
	}
	*steps += c->calls;
	return 0;
}

/* One release under the bursty schedule (damp_sim.h). */
static int run_bursty(const struct sim_ctx *c, struct rng *g, uint64_t *steps, uint64_t *divs)
{
	double P = 0;
	unsigned left = 0;
	for (uint64_t n = 0; n < c->calls; n++) {
		P *= c->lambda;
		if (!left && (rng_next(g) >> 11) < c->burst_thr)
			left = GL_DAMP_BURST_LEN;
		if (!left)
			continue;
		left--;
		if ((rng_next(g) >> 11) < c->in_burst_thr) {
			P += c->w;
			(*divs)++;
			if (P >= c->S) {
				*steps += n + 1;
				return 1;
			}
		}
	}
	*steps += c->calls;
	return 0;
}

static double burst_start(double p)
{
	const double L = GL_DAMP_BURST_LEN, q = GL_DAMP_BURST_RATE;
	return p / (q * L - (L - 1) * p);
}

void gl_damp_simulate(const struct gl_damp_params *p, const struct gl_damp_sim *s,
		      struct gl_damp_sim_result *out)
{
	struct sim_ctx c = {
		.lambda = gl_damp_lambda(p),
		.w = p->weight,
		.S = p->suppress,
		.calls = s->calls,
		.thr = threshold(s->rate),
		.in_burst_thr = threshold(GL_DAMP_BURST_RATE),
	};
	*out = (struct gl_damp_sim_result){0};
	if (s->schedule == GL_DAMP_BURSTY) {
		out->burst_start = burst_start(s->rate);
		c.burst_thr = threshold(out->burst_start);
	}
	struct rng g;
	uint64_t x = s->seed;
	for (int i = 0; i < 4; i++)
		g.s[i] = splitmix64(&x);
	for (uint64_t r = 0; r < s->releases; r++)
		out->suppressed += s->schedule == GL_DAMP_BURSTY
					   ? run_bursty(&c, &g, &out->calls_simulated, &out->divergences)
					   : run_random(&c, &g, &out->calls_simulated, &out->divergences);
	double pr = (double)out->suppressed / (double)s->releases;
	out->probability = pr;
	out->stderr_ = sqrt(pr * (1 - pr) / (double)s->releases);
}

jv gl_damp_sim_json(const struct gl_damp_params *p, const struct gl_damp_sim *s,
		    const struct gl_damp_sim_result *r)
{
	jv o = params_json(p);
	o = jv_object_set(o, jv_string("schedule"),
			  jv_string(s->schedule == GL_DAMP_BURSTY ? "bursty" : "random"));
	o = jv_object_set(o, jv_string("rate"), jv_number(s->rate));
	o = jv_object_set(o, jv_string("calls"), jv_number((double)s->calls));
	o = jv_object_set(o, jv_string("releases"), jv_number((double)s->releases));
	o = jv_object_set(o, jv_string("seed"), jv_number((double)s->seed));
	o = jv_object_set(o, jv_string("suppressed"), jv_number((double)r->suppressed));
	o = jv_object_set(o, jv_string("probability"), jv_number(r->probability));
	o = jv_object_set(o, jv_string("stderr"), jv_number(r->stderr_));
	o = jv_object_set(o, jv_string("calls_simulated"), jv_number((double)r->calls_simulated));
	o = jv_object_set(o, jv_string("divergences"), jv_number((double)r->divergences));
	if (s->schedule == GL_DAMP_BURSTY) {
		jv b = jv_object();
		b = jv_object_set(b, jv_string("length"), jv_number(GL_DAMP_BURST_LEN));
		b = jv_object_set(b, jv_string("rate"), jv_number(GL_DAMP_BURST_RATE));
		b = jv_object_set(b, jv_string("start"), jv_number(r->burst_start));
		o = jv_object_set(o, jv_string("burst"), b);
	}
	return o;
}
