/* gl-damp — result records and verdicts -> penalties and suppression
 * (SPEC §8; the paper's Appendix B-E). The rule and the state file live in
 * lib/damp/damp.c, the analysis and the simulator in lib/damp/damp_sim.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "damp/damp.h"
#include "damp/damp_sim.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "json/log.h"
#include "core/util.h"

static const char usage[] =
	"usage: gl-damp [--state FILE] [PARAMS]        < records > penalties\n"
	"       gl-damp analyze [--rate P]... [--text] [PARAMS]\n"
	"       gl-damp simulate --rate P --calls N --releases R\n"
	"                        [--schedule random|bursty] [--seed S] [--text] [PARAMS]\n"
	"\n"
	"Reads result records of gl-run (one call each: the penalty decays) and\n"
	"verdicts of gl-replay (an event: its weight is added) as JSON Lines and\n"
	"writes {\"release\":H,\"penalty\":P,\"suppressed\":bool} per record.\n"
	"\n"
	"  --state FILE      penalties of every release (default $GL_HOME/damp.json)\n"
	"  --log FILE        append JSON Lines events (penalties, refusals) to FILE\n"
	"                    (or GL_LOG)\n"
	"PARAMS (the operating point of the paper's Appendix B-E):\n"
	"  --half-life H     calls to halve the penalty (default 50)\n"
	"  --weight W        weight of an unverified event (default 250)\n"
	"  --suppress S      suppress once the penalty reaches S (default 2000)\n"
	"  --reuse R         usable again once the penalty falls below R (default 750)\n"
	"analyze: p*, calls to suppress and to recover, expected trajectories\n"
	"  --rate P          a divergence rate for the trajectory (default 0.5 0.2 0.1)\n"
	"simulate: probability of at least one suppression within N calls (Table XV)\n"
	"  --schedule        random (default) or bursty; --seed S (default 1)\n"
	"  --text            human-readable output instead of JSON\n"
	"See docs/damp.md.\n";

enum opt { O_STATE = 256, O_HALF, O_WEIGHT, O_SUPPRESS, O_REUSE, O_RATE, O_CALLS,
	   O_RELEASES, O_SCHEDULE, O_SEED, O_TEXT, O_LOG };

static const struct option options[] = {
	{"state", required_argument, 0, O_STATE},
	{"half-life", required_argument, 0, O_HALF},
	{"weight", required_argument, 0, O_WEIGHT},
	{"suppress", required_argument, 0, O_SUPPRESS},
	{"reuse", required_argument, 0, O_REUSE},
	{"rate", required_argument, 0, O_RATE},
	{"calls", required_argument, 0, O_CALLS},
	{"releases", required_argument, 0, O_RELEASES},
	{"schedule", required_argument, 0, O_SCHEDULE},
	{"seed", required_argument, 0, O_SEED},
	{"text", no_argument, 0, O_TEXT},
	{"log", required_argument, 0, O_LOG},
	{0, 0, 0, 0},
};

enum mode { STREAM, ANALYZE, SIMULATE };

struct args {
	enum mode mode;
	const char *state, *log;
	struct gl_damp_params params;
	double rates[32];
	size_t nrates;
	struct gl_damp_sim sim;
	bool have_rate, have_calls, have_releases, text;
};

/* A finite decimal number, nothing else (no hex, inf, nan, blanks). */
static double number(const char *flag, const char *s)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (!*s || s[strspn(s, "0123456789.eE+-")] || *end || errno == ERANGE || !isfinite(d))
		gl_die(GL_EXIT_USAGE, "--%s: \"%s\" is not a finite decimal number in range", flag, s);
	return d;
}

static uint64_t count(const char *flag, const char *s)
{
	double d = number(flag, s);
	if (d < 0 || d != floor(d) || d > 9007199254740991.0)
		gl_die(GL_EXIT_USAGE, "--%s: \"%s\" is not a whole number in [0, 2^53)", flag, s);
	return (uint64_t)d;
}

/* Which flags each mode takes; the four PARAMS apply everywhere. */
static bool applies(int opt, enum mode m)
{
	switch (opt) {
	case O_STATE: return m == STREAM;
	case O_LOG: return m == STREAM;
	case O_RATE:
	case O_TEXT: return m != STREAM;
	case O_CALLS:
	case O_RELEASES:
	case O_SCHEDULE:
	case O_SEED: return m == SIMULATE;
	}
	return true;
}

static void parse(int argc, char **argv, struct args *a)
{
	gl_damp_params_default(&a->params);
	a->sim = (struct gl_damp_sim){.schedule = GL_DAMP_RANDOM, .seed = 1};
	if (argc > 1 && !strcmp(argv[1], "analyze"))
		a->mode = ANALYZE;
	else if (argc > 1 && !strcmp(argv[1], "simulate"))
		a->mode = SIMULATE;
	if (a->mode != STREAM) {
		argv++;
		argc--;
	}
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		const char *flag = c >= O_STATE ? options[c - O_STATE].name : "";
		if (c == '?')
			gl_die(GL_EXIT_USAGE, "%s: unknown option or missing value (see --help)",
			       argv[optind - 1]);
		if (!applies(c, a->mode))
			gl_die(GL_EXIT_USAGE, "--%s does not apply here (see --help)", flag);
		switch (c) {
		case O_STATE: a->state = optarg; break;
		case O_LOG: a->log = optarg; break;
		case O_HALF: a->params.half_life = number(flag, optarg); break;
		case O_WEIGHT: a->params.weight = number(flag, optarg); break;
		case O_SUPPRESS: a->params.suppress = number(flag, optarg); break;
		case O_REUSE: a->params.reuse = number(flag, optarg); break;
		case O_RATE:
			if (a->nrates == sizeof a->rates / sizeof *a->rates)
				gl_die(GL_EXIT_USAGE, "--rate: at most 32 rates");
			a->rates[a->nrates++] = a->sim.rate = number(flag, optarg);
			if (!(a->sim.rate >= 0 && a->sim.rate <= 1))
				gl_die(GL_EXIT_USAGE, "--rate: %s is not in [0, 1]", optarg);
			a->have_rate = true;
			break;
		case O_CALLS: a->sim.calls = count(flag, optarg), a->have_calls = true; break;
		case O_RELEASES: a->sim.releases = count(flag, optarg), a->have_releases = true; break;
		case O_SEED: a->sim.seed = count(flag, optarg); break;
		case O_TEXT: a->text = true; break;
		case O_SCHEDULE:
			if (!strcmp(optarg, "random"))
				a->sim.schedule = GL_DAMP_RANDOM;
			else if (!strcmp(optarg, "bursty"))
				a->sim.schedule = GL_DAMP_BURSTY;
			else
				gl_die(GL_EXIT_USAGE, "--schedule: \"%s\" is not random or bursty", optarg);
			break;
		}
	}
	if (optind < argc)
		gl_die(GL_EXIT_USAGE, "unexpected argument \"%s\" (see --help)", argv[optind]);
	const char *why = gl_damp_params_check(&a->params);
	if (why)
		gl_die(GL_EXIT_USAGE, "%s", why);
	if (a->mode == SIMULATE) {
		if (!a->have_rate || !a->have_calls || !a->have_releases)
			gl_die(GL_EXIT_USAGE, "simulate needs --rate, --calls and --releases");
		if (a->nrates > 1)
			gl_die(GL_EXIT_USAGE, "simulate takes one --rate");
		if ((why = gl_damp_sim_check(&a->sim)))
			gl_die(GL_EXIT_USAGE, "%s", why);
	}
	if (a->mode == ANALYZE && !a->nrates) {
		static const double dflt[] = {0.5, 0.2, 0.1}; /* Appendix B-E's examples */
		memcpy(a->rates, dflt, sizeof dflt);
		a->nrates = 3;
	}
}

static void print_calls(const char *label, jv k)
{
	if (jv_get_kind(k) == JV_KIND_NUMBER)
		printf("%s%.0f calls", label, jv_number_value(k));
	else
		printf("%snever", label);
	jv_free(k);
}

static int analyze(const struct args *a)
{
	jv r = gl_damp_analyze(&a->params, a->rates, a->nrates);
	if (!a->text) {
		gl_json_emit(r);
		return GL_EXIT_OK;
	}
	const struct gl_damp_params *p = &a->params;
	double ps = gl_damp_p_star(p);
	printf("h = %g calls, w = %g, S = %g, R = %g, lambda = %.6f\n", p->half_life, p->weight,
	       p->suppress, p->reuse, gl_damp_lambda(p));
	if (isfinite(ps))
		printf("p* = %.1f%% (the stationary mean penalty reaches S)\n", 100 * ps);
	else
		printf("p* = none (w = 0: the penalty never grows)\n");
	print_calls("always diverging: suppressed after ", gl_json_get(r, "calls_to_suppress"));
	print_calls("\nrecovery from S to R: ", gl_json_get(r, "calls_to_recover"));
	printf("\nexpected trajectory:");
	jv traj = gl_json_get(r, "trajectory");
	jv_array_foreach(traj, i, t)
	{
		jv rate = gl_json_get(t, "rate");
		printf("%s %g%% -> ", i ? "," : "", 100 * jv_number_value(rate));
		jv_free(rate);
		print_calls("", gl_json_get(t, "calls_to_suppress"));
		jv_free(t);
	}
	printf("\n");
	jv_free(traj);
	jv_free(r);
	return fflush(stdout) ? GL_EXIT_USAGE : GL_EXIT_OK;
}

static int simulate(const struct args *a)
{
	struct gl_damp_sim_result res;
	gl_damp_simulate(&a->params, &a->sim, &res);
	if (!a->text) {
		gl_json_emit(gl_damp_sim_json(&a->params, &a->sim, &res));
		return GL_EXIT_OK;
	}
	printf("%s %g%%, %llu calls, %llu releases, seed %llu: suppressed at least once: "
	       "%.2f%% +- %.2f%% (1 standard error)\n",
	       a->sim.schedule == GL_DAMP_BURSTY ? "bursty" : "random", 100 * a->sim.rate,
	       (unsigned long long)a->sim.calls, (unsigned long long)a->sim.releases,
	       (unsigned long long)a->sim.seed, 100 * res.probability, 100 * res.stderr_);
	return fflush(stdout) ? GL_EXIT_USAGE : GL_EXIT_OK;
}

/* One locked transaction on the state file for r; then its output record,
 * merged into extra (an object, consumed). */
static bool apply(struct gl_damp_store *store, const struct gl_damp_params *p,
		  const struct gl_damp_record *r, uint64_t lineno, jv extra)
{
	autofree char *err = NULL;
	double penalty;
	bool suppressed;
	if (gl_damp_store_begin(store, &err) < 0)
		gl_die(GL_EXIT_USAGE, "%s", err);
	if (gl_damp_apply(store->st, p, r, &penalty, &suppressed) < 0) {
		gl_damp_store_abort(store);
		jv_free(extra);
		gl_json_emit_error(jv_null(), "state_full",
				   "line %llu: the state already holds %u releases", (unsigned long long)lineno,
				   GL_DAMP_MAX_RELEASES);
		return false;
	}
	/* Persist first: an output record never reports an unsaved state. */
	if (gl_damp_store_commit(store, &err) < 0)
		gl_die(GL_EXIT_USAGE, "%s", err);
	jv out = extra;
	out = jv_object_set(out, jv_string("release"), jv_string(r->release));
	out = jv_object_set(out, jv_string("penalty"), jv_number(penalty));
	out = jv_object_set(out, jv_string("suppressed"), jv_bool(suppressed));
	gl_log_event("damp", JV_OBJECT(jv_string("release"), jv_string(r->release),
				       jv_string("kind"),
				       jv_string(r->kind == GL_DAMP_CALL ? "call" : "event"),
				       jv_string("penalty"), jv_number(penalty),
				       jv_string("suppressed"), jv_bool(suppressed)));
	gl_json_emit(out);
	return true;
}

/* One record: classify, then apply. */
static bool handle(struct gl_damp_store *store, const struct gl_damp_params *p,
		   const struct gl_buf *line, uint64_t lineno)
{
	jv rec = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(rec)) {
		jv msg = jv_invalid_get_msg(rec);
		gl_json_emit_error(jv_null(), "bad_json", "line %llu: %s", (unsigned long long)lineno,
				   jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "?");
		jv_free(msg);
		return false;
	}
	struct gl_damp_record r;
	const char *code;
	autofree char *detail = NULL;
	int rc = gl_damp_classify(rec, &r, &code, &detail);
	jv_free(rec);
	if (rc < 0) {
		gl_log_event("refusal", JV_OBJECT(jv_string("line"), jv_number((double)lineno),
						  jv_string("error"), jv_string(code)));
		gl_json_emit_error(jv_null(), code, "line %llu: %s", (unsigned long long)lineno, detail);
		return false;
	}
	return apply(store, p, &r, lineno, jv_object());
}

/* A line over the pipeline's limit (SPEC §2; lib/json/jsonl.h). No stage of
 * ours writes one; when its first bytes name a release it is counted as a
 * call to it (never a silently skipped record) and answered with the
 * penalty and ok:false; otherwise there is nobody to charge: only the
 * error record. Either way the exit status is 1. */
static void too_long(struct gl_damp_store *store, const struct gl_damp_params *p,
		     const struct gl_buf *prefix, uint64_t lineno)
{
	jv named = gl_jsonl_named(prefix->data, prefix->len);
	const char *rel = gl_json_get_str(named, "release");
	autofree char *detail = gl_xasprintf("line %llu: longer than %u bytes (the pipeline's "
					     "line limit, SPEC §2)%s",
					     (unsigned long long)lineno, GL_JSON_LINE_MAX,
					     rel ? "; counted as a call to its release" : "");
	if (!rel) {
		jv_free(named);
		gl_json_emit_error(jv_null(), "too_long", "%s", detail);
		return;
	}
	struct gl_damp_record r = {.kind = GL_DAMP_CALL};
	memcpy(r.release, rel, 65);
	jv extra = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string("too_long"),
			     jv_string("detail"), jv_string(detail));
	jv id = gl_json_get(named, "id");
	if (jv_is_valid(id))
		extra = jv_object_set(extra, jv_string("id"), id);
	else
		jv_free(id);
	jv_free(named);
	apply(store, p, &r, lineno, extra);
}

static int stream(const struct args *a)
{
	autofree char *path = NULL;
	if (a->state) {
		path = gl_xstrdup(a->state);
	} else {
		autofree char *home = gl_home();
		if (gl_mkdir_p(home, 0700) < 0)
			gl_die_errno(GL_EXIT_USAGE, "%s", home);
		path = gl_xasprintf("%s/damp.json", home);
	}
	struct gl_damp_store store;
	autofree char *err = NULL;
	if (gl_damp_store_open(&store, path, &err) < 0)
		gl_die(GL_EXIT_USAGE, "%s", err);
	/* Refuse a corrupt state before reading any record. */
	if (gl_damp_store_begin(&store, &err) < 0)
		gl_die(GL_EXIT_USAGE, "%s", err);
	gl_damp_store_abort(&store);

	gl_log_open("gl-damp", a->log);
	struct gl_lines rd;
	gl_lines_init(&rd, STDIN_FILENO);
	autobuf struct gl_buf line = {0};
	uint64_t lineno = 0;
	bool all_ok = true;
	for (;;) {
		enum gl_line_status ls = gl_lines_next(&rd, &line, GL_JSON_LINE_MAX);
		if (ls == GL_LINE_EOF)
			break;
		if (ls == GL_LINE_IO)
			gl_die_errno(GL_EXIT_USAGE, "reading stdin");
		lineno++;
		if (ls == GL_LINE_TOO_LONG) {
			too_long(&store, &a->params, &line, lineno);
			all_ok = false;
			continue;
		}
		if (line.data[strspn(line.data, " \t\r")] == 0)
			continue; /* a blank line is not a record */
		all_ok &= handle(&store, &a->params, &line, lineno);
	}
	gl_damp_store_close(&store);
	gl_log_close();
	return all_ok ? GL_EXIT_OK : GL_EXIT_REFUSED;
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-damp");
	gl_std_flags(argc, argv, usage);
	struct args a = {0};
	parse(argc, argv, &a);
	switch (a.mode) {
	case ANALYZE: return analyze(&a);
	case SIMULATE: return simulate(&a);
	case STREAM: break;
	}
	return stream(&a);
}
