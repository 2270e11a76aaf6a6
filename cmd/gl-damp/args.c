/* args.c — gl-damp's command line (args.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#include "args.h"

const char gl_damp_usage[] =
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

void parse(int argc, char **argv, struct args *a)
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

