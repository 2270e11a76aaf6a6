/* replay_runs.c — a witness's runs and their verdict (gl-replay; paper
 * §IV-F, Definition 6, Table XIV, Theorem 2, Propositions 1–2): the
 * copies' bounds and deadline, the probe and the control, the mirror run,
 * and the verdict they give. docs/witness.md "What the runs are", "The
 * mirror run", "Verdicts", "Bounds of a replay". */
#define _GNU_SOURCE
#include "replay/replay.h"

#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "evidence/witness.h"
#include "json/json.h"
#include "json/msg.h"
#include "runtime/exec.h"

static bool same(jv a, jv b) /* borrowed */
{
	return jv_equal(jv_copy(a), jv_copy(b));
}

static bool declared(const struct gl_replay *x)
{
	return gl_json_get_bool(x->manifest, "deterministic", 0) == 1;
}

jv gl_replay_verdict(const struct gl_witness *w, const struct gl_replay *x,
		      const struct gl_replay_counts *n)
{
	int probe_differs = n->probe, control_differs = n->control, mirror_differs = n->mirror;
	const char *outcome, *event;
	if (control_differs > 0) {
		outcome = "nondeterminism"; /* Proposition 2 */
		event = declared(x) ? "declared_broken" : "unverified";
	} else if (probe_differs == x->tries) {
		outcome = "item_witness"; /* Theorem 2(a) */
		event = declared(x) ? "verified" : "verified_undeclared";
	} else if (probe_differs == 0 && mirror_differs > 0) {
		/* The comparing copy's own inputs — W, its slot, its replies, τ —
		 * did not give the requests it made: neither W \ V(d) (the probe)
		 * nor Proposition 1 (the slot and replies, the mirror's own)
		 * explains the trigger, only a release that is not the function
		 * of its inputs it declared (the mirror runs only then). */
		outcome = "nondeterminism";
		event = "declared_broken";
	} else if (probe_differs == 0) {
		outcome = "state_divergence"; /* Proposition 1 */
		event = "unverified";
	} else {
		outcome = "nondeterminism";
		event = "unverified";
	}
	int weight = !strcmp(event, "verified") || !strcmp(event, "declared_broken")
			 ? GL_REPLAY_WEIGHT_S
			 : GL_REPLAY_WEIGHT_W;
	jv v = JV_OBJECT(jv_string("ok"), jv_true(), jv_string("witness"), jv_string(w->id),
			 jv_string("release"), jv_string(w->release), jv_string("destination"),
			 jv_string(w->destination), jv_string("outcome"), jv_string(outcome),
			 jv_string("event"), jv_string(event), jv_string("weight"),
			 jv_number(weight), jv_string("tries"), jv_number(x->tries));
	v = jv_object_set(v, jv_string("probe_differs"), jv_number(probe_differs));
	v = jv_object_set(v, jv_string("control_differs"), jv_number(control_differs));
	if (mirror_differs >= 0)
		v = jv_object_set(v, jv_string("mirror_differs"), jv_number(mirror_differs));
	v = jv_object_set(v, jv_string("call"), jv_copy(w->call));
	v = jv_object_set(v, jv_string("function"), jv_string(w->function));
	v = jv_object_set(v, jv_string("kind"), jv_string(w->kind));
	v = jv_object_set(v, jv_string("position"), jv_number((double)w->position));
	return jv_object_set(v, jv_string("replay"), jv_string(x->no_probe ? "no_probe" : "probe"));
}

/* GL_TESTING builds with GL_TEST_REPLAY_BOUNDS_OFF=1: the landed
 * behaviour — the copies bounded by the auditor's limits whatever the call
 * ran under, the witness's deadline taken as given, no time per witness
 * (the dodge and the hold tests/witness-trust.bats shows). */
bool gl_replay_bounds_off(void) { return GL_TEST_SWITCH("GL_TEST_REPLAY_BOUNDS_OFF"); }

/* A run's deadline: the witness's (what the call's copies had), at most
 * the auditor's --max-deadline. */
double gl_replay_deadline(const struct gl_replay *x, const struct gl_witness *w)
{
	double max = x->max_deadline_s > 0 ? x->max_deadline_s : GL_REPLAY_MAX_DEADLINE_DEFAULT;
	double d = (double)w->deadline_ms / 1000.0;
	return d < max || gl_replay_bounds_off() ? d : max;
}

/* The copies' bounds for w's runs: those its call's copies ran under
 * (version 4; the defaults before), each at most the auditor's for the
 * release (x->lim: --policy's limits, else the defaults). A release that
 * measured its bounds at the call finds the same ones in replay, unless
 * the auditor allows less. true when the runs get exactly the call's
 * bounds and deadline (nothing capped). */
static bool bounds(struct gl_replay *x, const struct gl_witness *w)
{
	struct gl_limits lim = gl_replay_bounds_off() ? x->lim : w->limits;
	gl_limits_cap(&lim, &x->lim);
	const struct gl_limits *c = &w->limits;
	bool exact = !gl_replay_bounds_off() && lim.memory_mb == c->memory_mb &&
		     lim.pids == c->pids && lim.tmp_mb == c->tmp_mb && lim.cpu_s == c->cpu_s &&
		     lim.workspace_mb == c->workspace_mb &&
		     gl_replay_deadline(x, w) == (double)w->deadline_ms / 1000.0;
	x->g.lim = lim;
	x->g.tmp_mb = lim.tmp_mb;
	if (x->g.exec) {
		x->g.exec->tmp_mb = lim.tmp_mb;
		x->g.exec->workspace_mb = lim.workspace_mb;
	}
	return exact;
}

static double now_s(void) { return (double)gl_mono_ns() / 1e9; }

/* The auditor's time for one witness's runs (--max-time), and how many
 * of them are done. */
struct clock {
	double start, budget;
	int done, total;
};

/* One run of in on g; *differs counted when its sequence to d is not want.
 * A run that could pass the time per witness is not started, and one the
 * germline (or an exec launch) cannot complete ends the witness's runs:
 * the error record (g stopped then); else jv_invalid(). */
static jv run_one(struct gl_replay *x, struct gl_germline *g, const struct gl_witness *w,
		  struct gl_replay_in *in, jv want, struct clock *c, int *differs)
{
	/* a trusted trigger whose runs are cut still counts: unverified */
	if (!gl_replay_bounds_off() && now_s() - c->start + in->deadline_s > c->budget)
		return gl_replay_failure(w->id, "replay_time",
					 "%d of %d runs done; the next could pass --max-time %g s",
					 c->done, c->total, c->budget);
	/* A witness of the --no-twin ablation is replayed the same way: every
	 * run draws its own clock and seed. */
	const struct gl_twin *keep = in->twin;
	struct gl_twin tw;
	if (!strcmp(w->mode, "no_twin")) {
		gl_twin_new(&tw);
		in->twin = &tw;
	}
	jv seq = jv_invalid();
	const char *how = NULL;
	bool lost = false;
	autofail struct gl_fail f = {0};
	int rc = gl_broker_replay(g, in, &seq, &how, &lost, &f);
	in->twin = keep;
	c->done++;
	if (rc < 0) { /* launch, germline or germline_check (lib/broker/broker.h) */
		jv out = gl_replay_failure(w->id, gl_code_name(f.code), "%s", gl_fail_detail(&f));
		gl_replay_stop(x);
		return out;
	}
	if (!same(seq, want))
		*differs += 1;
	jv_free(seq);
	return jv_invalid();
}

/* x->tries probe and control runs on g; *pd and *cd count the runs whose
 * delivered sequence differs from the witness's. */
static jv run_tries(struct gl_replay *x, struct gl_germline *g, const struct gl_witness *w,
		    struct gl_replay_in *pin, struct gl_replay_in *cin, struct clock *c, int *pd,
		    int *cd)
{
	for (int t = 0; t < x->tries; t++) {
		jv out = run_one(x, g, w, pin, w->delivered, c, pd);
		if (!jv_is_valid(out))
			out = run_one(x, g, w, cin, w->delivered, c, cd);
		if (jv_is_valid(out))
			return out;
	}
	return jv_invalid();
}

/* GL_TESTING builds with GL_TEST_REPLAY_MIRROR_OFF=1: no mirror run (the
 * landed behaviour: a release that tells its replay from its call is a
 * state divergence, 250; tests/witness-trust.bats). */
static bool mirror_off(void) { return GL_TEST_SWITCH("GL_TEST_REPLAY_MIRROR_OFF"); }

/* The mirror run (docs/witness.md "The mirror run"): after a state
 * divergence, x->tries runs on the comparing copy's own inputs — W's
 * contents, its slot, its τ, the replies it got (its transcript, version
 * 6) — each compared with the requests it made to d (`compared`). A
 * deterministic release gives them back every time: that is what its
 * manifest declares. Run only when the verdict could turn on it: a
 * release that declares determinism, the call's own twin inputs (not the
 * --no-twin ablation), and exactly the call's bounds and deadline (exact:
 * an auditor's lower cap is not the call, and must not frame a release).
 * *md: the runs that differ, or -1 when not run. */
static jv run_mirror(struct gl_replay *x, struct gl_germline *g, const struct gl_witness *w,
		     struct gl_replay_in *min, bool exact, int pd, int cd, struct clock *c,
		     int *md)
{
	*md = -1;
	if (mirror_off() || x->no_probe || pd || cd || !w->mirrored || !declared(x) ||
	    strcmp(w->mode, "germline") || !exact)
		return jv_invalid();
	*md = 0;
	c->total += x->tries;
	for (int t = 0; t < x->tries; t++) {
		jv out = run_one(x, g, w, min, w->compared, c, md);
		if (jv_is_valid(out))
			return out;
	}
	return jv_invalid();
}

jv gl_replay_runs(struct gl_replay *x, struct gl_germline *g, const struct gl_witness *w,
		  struct gl_replay_in *in[3], struct gl_replay_counts *n)
{
	bool exact = bounds(x, w);
	struct clock c = {.start = now_s(),
			  .budget = x->max_time_s > 0 ? x->max_time_s : GL_REPLAY_TIME_DEFAULT,
			  .total = 2 * x->tries};
	jv out = run_tries(x, g, w, in[0], in[1], &c, &n->probe, &n->control);
	if (!jv_is_valid(out))
		out = run_mirror(x, g, w, in[2], exact, n->probe, n->control, &c, &n->mirror);
	return out;
}
