/* flags.c — gl-run's command line (flags.h; docs/gl-run.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "evidence/witness_store.h"
#include "json/log.h"
#include "json/refusal.h"
#include "session/jobs.h"
#include "sign/keys.h"

#include "flags.h"

const char gl_run_usage[] =
    "usage: gl-run --policy FILE [--mode MODE] [--deadline SECONDS]\n"
    "              [--damp FILE] [--releases DIR] [--witness-items] [--no-twin]\n"
    "              [--receipts DIR --host-key KEY] [--profile full|no-scope]\n"
    "              [--pool] [--witness-cap-mb N] [--witness-release-cap-mb N]\n"
    "              [--max-resident K] [--jobs N] [--unordered] [--log FILE]\n"
    "\n"
    "Reads planned call envelopes (JSON Lines, from gl-plan) on stdin, runs each\n"
    "call in sandboxed copies forked from the release's germline, and writes one\n"
    "result record per call (paper Algorithm 1; SPEC §6).\n"
    "\n"
    "  --policy FILE       clearances and routes (SPEC §4, docs/formats.md)\n"
    "  --mode MODE         germline (default): one copy per plan group;\n"
    "                      nosplit: one copy holding every item and member;\n"
    "                      lazy: a destination's copy only if the full-view\n"
    "                      copy contacts it (Lemma 2 ablation); baselines:\n"
    "                      fresh (a fresh confined process per call),\n"
    "                      confined (one persistent confined process per\n"
    "                      release, destination allowlist, per-call labels),\n"
    "                      sigifc (one persistent unconfined process, per-call\n"
    "                      labels), sigpin (the same, no labels)\n"
    "  --deadline SECONDS  budget of each copy from its fork (default 30)\n"
    "  --pool              keep one data-free copy of each resident germline\n"
    "                      forked ahead of its call (modes germline, nosplit,\n"
    "                      lazy; python releases; docs/gl-run.md)\n"
    "  --max-resident K    at most K releases' germlines (or baseline processes)\n"
    "                      resident at once, 1..256 (default 256); one more\n"
    "                      stops the least recently used idle one first, and\n"
    "                      its release's next call relaunches it, verified\n"
    "  --jobs N            up to N calls at once, 1..64 (default: the online\n"
    "                      CPUs); calls of one release keep their order\n"
    "  --unordered         write each record when its call ends, not in\n"
    "                      input order (docs/gl-run.md \"--jobs\")\n"
    "  --damp FILE         refuse calls to releases this state suppresses\n"
    "  --releases DIR      releases in DIR/<sha256>/ (default: $GL_HOME/releases)\n"
    "  --witness-items     put the items' contents in witness records (for a\n"
    "                      verifier cleared for them; docs/witness.md)\n"
    "  --witness-cap-mb N  bytes of all witnesses under GL_HOME/witnesses, in MiB\n"
    "                      (default 1024): the oldest are removed first\n"
    "  --witness-release-cap-mb N\n"
    "                      the same per release (default 256); a witness larger\n"
    "                      than either cap is not written (docs/witness.md)\n"
    "  --no-twin           ablation: each copy gets its own clock and seed\n"
    "                      (false triggers; for experiments only)\n"
    "  --serve-mcp         be an MCP server on stdio for one release instead\n"
    "                      (with --release H|NAME[@VERSION] [--consumer NAME];\n"
    "                      docs/mcp.md; gl-verify list shows the names)\n"
    "  --receipts DIR      write one signed receipt per launch into DIR (SPEC §9,\n"
    "                      docs/receipts.md); needs --host-key\n"
    "  --log FILE          append JSON Lines events (calls, refusals, triggers,\n"
    "                      limits; never item contents) to FILE (or GL_LOG)\n"
    "  --host-key KEY      the host key (gl-sign keygen); its passphrase from\n"
    "                      GL_PASSPHRASE, else the terminal\n"
    "  --profile NAME      full (default): Landlock ABI >= 6, seccomp, namespaces;\n"
    "                      no-scope: accepts Landlock ABI 4-5 (no scoping of\n"
    "                      abstract sockets and signals), stated in every receipt\n"
    "\n"
    "Exit status: 0 every record ok, 1 some record refused, 2 usage or I/O error.\n";

static GL_NORETURN void bad_usage(const char *what)
{
	gl_warn("%s", what);
	fputs(gl_run_usage, stderr);
	exit(GL_EXIT_USAGE);
}

/* A witness cap in MiB (1..GL_WITNESS_CAP_MB_MAX), as bytes. */
static uint64_t cap_mb(const char *flag, const char *v)
{
	char *end = NULL;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > GL_WITNESS_CAP_MB_MAX)
		bad_usage(gl_xasprintf("%s must be MiB in 1..%u, not '%s'", flag,
				       GL_WITNESS_CAP_MB_MAX, v));
	return (uint64_t)n << 20;
}

/* --max-resident K: 1..GL_SESSION_RELEASES_MAX. */
static unsigned max_resident(const char *v)
{
	char *end = NULL;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > GL_SESSION_RELEASES_MAX)
		bad_usage(gl_xasprintf("--max-resident must be releases in 1..%d, not '%s'",
				       GL_SESSION_RELEASES_MAX, v));
	return (unsigned)n;
}

static unsigned jobs(const char *v)
{
	char *end = NULL;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > GL_JOBS_MAX)
		bad_usage(gl_xasprintf("--jobs must be 1..%d, not '%s'", GL_JOBS_MAX, v));
	return (unsigned)n;
}

static double deadline(const char *v)
{
	char *end = NULL;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d <= 0 || d > 3600)
		bad_usage(gl_xasprintf("--deadline must be seconds in (0, 3600], not '%s'", v));
	return d;
}

/* The flags into o and b (the broker's settings). */
void parse_flags(int argc, char **argv, struct opts *o, struct gl_broker *b)
{
	const char *v;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	o->jobs = cpus < 1 ? 1 : cpus > GL_JOBS_MAX ? GL_JOBS_MAX : (unsigned)cpus;
#define FLAG(name) (v = gl_flag_value(argc, argv, &i, name, gl_run_usage))
	for (int i = 1; i < argc; i++) {
		if (FLAG("--policy"))
			o->policy = v;
		else if (FLAG("--mode"))
			o->mode = v;
		else if (FLAG("--releases"))
			o->releases = v;
		else if (FLAG("--damp"))
			o->damp = v;
		else if (FLAG("--receipts"))
			o->receipts = v;
		else if (FLAG("--host-key"))
			o->host_key = v;
		else if (FLAG("--profile"))
			o->profile = v;
		else if (FLAG("--log"))
			o->log = v;
		else if (!strcmp(argv[i], "--witness-items"))
			b->witness_items = true;
		else if (FLAG("--witness-cap-mb"))
			b->witness_caps.total = cap_mb("--witness-cap-mb", v);
		else if (FLAG("--witness-release-cap-mb"))
			b->witness_caps.release = cap_mb("--witness-release-cap-mb", v);
		else if (!strcmp(argv[i], "--no-twin"))
			b->no_twin = true;
		else if (!strcmp(argv[i], "--pool"))
			b->pool = true;
		else if (!strcmp(argv[i], "--serve-mcp"))
			o->serve_mcp = true;
		else if (FLAG("--release"))
			o->serve_release = v;
		else if (FLAG("--consumer"))
			o->consumer = v;
		else if (FLAG("--max-resident"))
			o->max_resident = max_resident(v);
		else if (FLAG("--jobs"))
			o->jobs = jobs(v), o->jobs_given = true;
		else if (!strcmp(argv[i], "--unordered"))
			o->unordered = true;
		else if (FLAG("--deadline"))
			b->deadline_s = deadline(v);
		else
			bad_usage(gl_xasprintf("unknown argument '%s'", argv[i]));
	}
#undef FLAG
}

/* --receipts and --host-key: the directory and the host key (its
 * passphrase: a wrong one is a refusal, SPEC §2). */
static void open_receipts(const struct opts *o, struct gl_receipts *rc)
{
	struct stat st;
	if (stat(o->receipts, &st) < 0 || !S_ISDIR(st.st_mode))
		gl_die(GL_EXIT_USAGE, "--receipts %s: not a directory", o->receipts);
	autofail struct gl_fail kf = {0};
	enum gl_key_status ks = gl_receipts_load_key(rc, o->host_key, &kf);
	if (ks == GL_KEY_BAD_PASSPHRASE)
		exit(gl_fail_report(&kf)); /* bad_passphrase */
	if (ks != GL_KEY_OK)
		gl_die(GL_EXIT_USAGE, "--host-key %s", gl_fail_detail(&kf));
}

/* The flags' combinations, in the order gl-run has always checked them. */
void check_flags(const struct opts *o, struct gl_session *s, struct gl_receipts *rc)
{
	if (!o->policy)
		bad_usage("--policy is required");
	gl_log_open("gl-run", o->log); /* lib/json/log.h: exit 2 when it cannot be opened */
	if (o->serve_mcp && (!o->serve_release || !*o->serve_release))
		bad_usage("--serve-mcp needs --release with a release's sha256, NAME or "
			  "NAME@VERSION");
	if (!o->serve_mcp && o->serve_release)
		bad_usage("--release and --consumer go with --serve-mcp");
	if (!gl_profile_find(o->profile))
		bad_usage(gl_xasprintf("--profile must be full or no-scope, not '%s'", o->profile));
	if (!o->receipts != !o->host_key)
		bad_usage("--receipts and --host-key go together");
	s->launcher.profile = gl_profile_find(o->profile);
	s->max_resident = o->max_resident; /* 0: GL_SESSION_RELEASES_MAX */
	if (o->receipts) {
		open_receipts(o, rc);
		s->launcher.rc = rc;
	}
	if (gl_session_mode(s, o->mode) < 0)
		bad_usage(gl_xasprintf("--mode must be germline, nosplit, lazy, fresh, confined, "
				       "sigifc or sigpin, not '%s'",
				       o->mode));
	if (s->broker.pool && gl_session_baseline(s))
		bad_usage(gl_xasprintf("--pool goes with modes germline, nosplit and lazy, not '%s'",
				       o->mode));
}

