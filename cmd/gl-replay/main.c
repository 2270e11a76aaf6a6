/* gl-replay — trigger records or witness files in, verdicts out (SPEC §7;
 * paper §IV-F, Definition 6, Table XIV; docs/witness.md).
 *
 * On stdin (no files): each result record of gl-run is written out
 * unchanged, then one verdict per trigger, in order, so gl-damp decays for
 * the call before it adds the call's events (docs/damp.md "Pairing"); a
 * bare trigger record (SPEC §6's trigger object) gets its verdict, a
 * verdict passes on, and any other record is answered with an ok:false
 * record "bad_record" (SPEC §2: never a silently skipped line). With
 * files: one verdict per witness file. The work is lib/replay/replay.c
 * (probe and control), lib/replay/replay_stream.c (stdin) and
 * lib/broker/broker_replay.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "broker/http.h"
#include "json/json.h"
#include "json/log.h"
#include "plan/policy.h"
#include "replay/replay.h"
#include "replay/replay_stream.h"
#include "core/util.h"
#include "evidence/witness_key.h"
#include "evidence/witness_store.h"

static const char usage[] =
    "usage: gl-replay [--tries N] [--items DIR] [--release PATH] [--policy P] [--no-probe]\n"
    "                 [--trust KEY]… [--max-deadline S] [--max-time S] [--log FILE]\n"
    "                 [WITNESS…]\n"
    "\n"
    "Re-runs the release of each witness record — the probe (the comparing copy's\n"
    "items with the destination's slot, twin inputs and replies) and the control\n"
    "(the destination copy's exact inputs), N times each — and writes one verdict\n"
    "per witness (paper §IV-F, Table XIV; SPEC §7). Without WITNESS files it reads\n"
    "gl-run's result records on stdin and writes each record, then one verdict per\n"
    "trigger; a bare trigger record gets its verdict, a verdict passes on, and any\n"
    "other record is answered with {\"ok\":false,\"error\":\"bad_record\"}.\n"
    "\n"
    "  --tries N       runs of the probe and of the control (1..100, default 5)\n"
    "  --items DIR     item contents as DIR/<item name> (when not in the witness)\n"
    "  --release PATH  the signed release archive (its SHA-256 must be the\n"
    "                  witness's release), or a directory holding it as *.tar.gz;\n"
    "                  default: the installed release, re-hashed\n"
    "  --policy P      the deployer's policy: grants the release's read_paths\n"
    "                  exactly as gl-run does; without it none are granted, and a\n"
    "                  release asking for any is not replayed (error read_paths,\n"
    "                  event unverified; docs/formats.md)\n"
    "  --trust KEY     trust witnesses signed by KEY (KEY.pub; repeatable); the\n"
    "                  keys in GL_HOME/keys/trusted/ (this host's gl-run) always\n"
    "                  are. A witness no trusted key signed is not replayed: an\n"
    "                  unverified event of weight 0 (\"trusted\":false)\n"
    "  --max-deadline S  a run's deadline is the witness's, at most S seconds\n"
    "                  (default 120); the copies' bounds are the witness's, at\n"
    "                  most --policy's limits (else the defaults)\n"
    "  --max-time S    a witness's runs together take at most S seconds (default\n"
    "                  600); past it: replay_time, an unverified event\n"
    "  --log FILE      append JSON Lines events (verdicts, refusals; never item\n"
    "                  contents) to FILE (or GL_LOG)\n"
    "  --no-probe      ablation (Table V's reference): probe with the comparing\n"
    "                  copy's own slot and placeholders; misclassifies, never use\n"
    "\n"
    "Exit status: 0 every record a verdict, 1 some witness refused (tampered,\n"
    "hash mismatch, missing item…), 2 usage or I/O error. docs/witness.md.\n";

static GL_NORETURN void bad_usage(const char *what)
{
	gl_warn("%s", what);
	fputs(usage, stderr);
	exit(GL_EXIT_USAGE);
}

static int worst = GL_EXIT_OK;
/* --trust and GL_HOME/keys/trusted/ (lib/evidence/witness_key.h) */
static struct gl_witness_trust trust;

static void emit(jv rec, enum gl_replay_status st)
{
	if ((int)st > worst)
		worst = (int)st;
	gl_json_emit(rec);
}

/* A --max-deadline or --max-time value: seconds, above 0 and at most a
 * day. */
static double seconds(const char *flag, const char *v)
{
	char *end = NULL;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !(d > 0) || d > GL_REPLAY_TIME_MAX)
		bad_usage(gl_xasprintf("%s must be seconds above 0 and at most %g, not '%s'", flag,
				       GL_REPLAY_TIME_MAX, v));
	return d;
}

/* The flags into x, *pol (--policy) and *log_path; returns the index of
 * the first witness file (argc: none, read stdin). */
static int parse_flags(int argc, char **argv, struct gl_replay *x, struct gl_policy *pol,
		       const char **log_path)
{
	const char *v;
	int i = 1;
	for (; i < argc; i++) {
		struct stat st;
		if ((v = gl_flag_value(argc, argv, &i, "--tries", usage))) {
			char *end = NULL;
			errno = 0;
			long n = strtol(v, &end, 10);
			if (errno || end == v || *end || n < 1 || n > GL_REPLAY_TRIES_MAX)
				bad_usage(gl_xasprintf("--tries must be 1..%d, not '%s'",
						       GL_REPLAY_TRIES_MAX, v));
			x->tries = (int)n;
		} else if ((v = gl_flag_value(argc, argv, &i, "--items", usage))) {
			if (stat(v, &st) < 0 || !S_ISDIR(st.st_mode))
				gl_die(GL_EXIT_USAGE, "--items %s: not a directory", v);
			x->items_dir = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--release", usage))) {
			if (stat(v, &st) == 0 && S_ISDIR(st.st_mode))
				x->archive_dir = v;
			else if (stat(v, &st) == 0 && S_ISREG(st.st_mode))
				x->archive = v;
			else
				gl_die(GL_EXIT_USAGE, "--release %s: not a file or directory", v);
		} else if ((v = gl_flag_value(argc, argv, &i, "--policy", usage))) {
			struct gl_fail f = {0};
			if (x->pol)
				bad_usage("--policy given twice");
			if (gl_policy_load(pol, v, &f) < 0)
				gl_die(GL_EXIT_USAGE, "--policy %s", gl_fail_detail(&f));
			x->pol = pol;
		} else if ((v = gl_flag_value(argc, argv, &i, "--max-deadline", usage))) {
			x->max_deadline_s = seconds("--max-deadline", v);
		} else if ((v = gl_flag_value(argc, argv, &i, "--max-time", usage))) {
			x->max_time_s = seconds("--max-time", v);
		} else if ((v = gl_flag_value(argc, argv, &i, "--trust", usage))) {
			struct gl_fail f = {0};
			if (gl_witness_trust_add(&trust, v, &f) < 0)
				gl_die(GL_EXIT_USAGE, "--trust %s", gl_fail_detail(&f));
		} else if ((v = gl_flag_value(argc, argv, &i, "--log", usage))) {
			*log_path = v;
		} else if (!strcmp(argv[i], "--no-probe")) {
			x->no_probe = true;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			bad_usage(gl_xasprintf("unknown argument '%s'", argv[i]));
		} else {
			break;
		}
	}
	return i;
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-replay");
	gl_std_flags(argc, argv, usage);
	if (sodium_init() < 0)
		gl_die(GL_EXIT_USAGE, "libsodium: initialisation failed");
	gl_http_global_init();
	autofree char *home = gl_home(), *host_dir = gl_host_dir();
	struct gl_replay x = {.home = home, .host_dir = host_dir, .tries = GL_REPLAY_TRIES_DEFAULT,
			      .manifest = jv_invalid(),
			      .config_pub = jv_null()};
	struct gl_policy pol = {.doc = jv_null()};
	const char *log_path = NULL;
	int i = parse_flags(argc, argv, &x, &pol, &log_path);
	gl_log_open("gl-replay", log_path);
	x.trust = &trust; /* and GL_HOME/keys/trusted/, by keyid */
	if (x.no_probe)
		gl_warn("--no-probe: the Table V reference; verdicts are not evidence");
	/* the auditor's host is bounded against the release (issue 15): the
	 * slots are made here, off every replay's path (lib/sandbox/cgroup.h) */
	struct gl_cg cg;
	gl_cg_open(&cg);
	x.cg = &cg;
	/* a host uid per copy, as gl-run's (lib/sandbox/uids.h): the replays'
	 * copies hold a witness's items beside whatever else runs */
	struct gl_uids uids;
	struct gl_fail uf = {0};
	if (gl_uids_open(&uids, gl_uids_subuid_path(), gl_uids_subgid_path(), &uf) < 0)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&uf));
	x.uids = &uids;
	if (i < argc) {
		int first = i;
		for (; i < argc; i++) {
			enum gl_replay_status st;
			jv out = gl_replay_file(&x, argv[i], NULL, NULL, &st);
			gl_log_event(st == GL_REPLAY_VERDICT ? "verdict" : "refusal",
				     JV_OBJECT(jv_string("release"), gl_log_field(out, "release"),
					       jv_string("verdict_event"), gl_log_field(out, "event"),
					       jv_string("error"), gl_log_field(out, "error")));
			emit(out, st);
			gl_log_progress("%d of %d witnesses", i - first + 1, argc - first);
		}
	} else {
		struct gl_lines in;
		gl_lines_init(&in, 0);
		autobuf struct gl_buf line = {0};
		bool too_long = false;
		unsigned long n = 0;
		while (gl_lines_record(&in, &line, &too_long)) {
			int st = gl_replay_stream_line(&x, &line);
			if (st < 0)
				gl_die_errno(GL_EXIT_USAGE, "writing to stdout");
			worst = st > worst ? st : worst;
			gl_log_progress("%lu records", ++n);
		}
		if (too_long)
			worst = worst > 1 ? worst : 1;
	}
	gl_replay_end(&x);
	gl_cg_close(&cg);
	gl_uids_close(&uids);
	gl_log_close();
	gl_policy_free(&pol);
	gl_witness_trust_free(&trust);
	curl_global_cleanup();
	return worst;
}
