/* gl-replay — trigger records or witness files in, verdicts out (SPEC §7;
 * paper §IV-F, Definition 6, Table XIV; docs/witness.md).
 *
 * On stdin (no files): each result record of gl-run is written out
 * unchanged, then one verdict per trigger, in order, so gl-damp decays for
 * the call before it adds the call's events (docs/damp.md "Pairing"); a
 * bare trigger record (SPEC §6's trigger object) gets its verdict, a
 * verdict passes on, and any other record is answered with an ok:false
 * record "bad_record" (SPEC §2: never a silently skipped line). With
 * files: one verdict per witness file. The work
 * is lib/replay/replay.c (probe and control) and lib/broker/broker_replay.c. */
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
#include "core/util.h"
#include "evidence/witness_store.h"

static const char usage[] =
    "usage: gl-replay [--tries N] [--items DIR] [--release PATH] [--policy P] [--no-probe]\n"
    "                 [--log FILE] [WITNESS…]\n"
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

static void emit(jv rec, enum gl_replay_status st)
{
	if ((int)st > worst)
		worst = (int)st;
	gl_json_emit(rec);
}

/* A witness refused as too_large before it was read names no release; the
 * result record does, so the refusal is an unverified event gl-damp counts
 * (issue 15; docs/witness.md "Caps"). rec and t borrowed. */
static jv too_large(jv out, jv rec, jv t)
{
	const char *code = gl_json_get_str(out, "error");
	const char *rel = gl_json_get_str(rec, "release"), *d = gl_json_get_str(t, "destination");
	if (!code || strcmp(code, "too_large") || jv_object_has(jv_copy(out), jv_string("event")) ||
	    !rel || strlen(rel) != 64 || strspn(rel, "0123456789abcdef") != 64 || !d)
		return out;
	out = jv_object_set(out, jv_string("release"), jv_string(rel));
	out = jv_object_set(out, jv_string("destination"), jv_string(d));
	out = jv_object_set(out, jv_string("event"), jv_string("unverified"));
	return jv_object_set(out, jv_string("weight"), jv_number(GL_REPLAY_WEIGHT_W));
}

/* The verdict of one trigger object t (borrowed) of the result record rec
 * (borrowed; jv_null() for a bare trigger record): its witness replayed,
 * or an error record when the trigger names none. */
static void trigger_verdict(struct gl_replay *x, jv rec, jv t)
{
	bool obj = jv_get_kind(t) == JV_KIND_OBJECT;
	const char *path = obj ? gl_json_get_str(t, "witness") : NULL;
	const char *id = obj ? gl_json_get_str(t, "id") : NULL;
	const char *sha = obj ? gl_json_get_str(t, "witness_sha256") : NULL;
	enum gl_replay_status st = GL_REPLAY_REFUSED;
	jv out;
	if (!path || (!id && jv_get_kind(rec) != JV_KIND_NULL)) {
		const char *why = obj ? gl_json_get_str(t, "witness_error") : NULL;
		/* not written, too large: counted like a refused file */
		bool big = why && id && !strcmp(why, GL_WITNESS_TOO_LARGE_TEXT);
		out = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
				jv_string(big ? "too_large" : "no_witness"), jv_string("detail"),
				jv_string(why ? why : "the trigger names no witness file"),
				jv_string("witness"), id ? jv_string(id) : jv_null());
	} else {
		out = gl_replay_file(x, path, sha, id, &st);
	}
	if (jv_get_kind(rec) == JV_KIND_OBJECT)
		out = too_large(out, rec, t);
	gl_log_event(gl_json_get_bool(out, "ok", 1) == 0 ? "refusal" : "verdict",
		     JV_OBJECT(jv_string("witness"), id ? jv_string(id) : jv_null(),
			       jv_string("release"), gl_log_field(out, "release"),
			       jv_string("destination"), gl_log_field(out, "destination"),
			       jv_string("outcome"), gl_log_field(out, "outcome"),
			       jv_string("verdict_event"), gl_log_field(out, "event"),
			       jv_string("weight"), gl_log_field(out, "weight"), jv_string("error"),
			       gl_log_field(out, "error")));
	emit(out, st);
}

/* What a stdin record is (SPEC §7): a result record of gl-run (it has
 * "ok"), a bare trigger record (SPEC §6's trigger object: "witness" or
 * "witness_error", no "ok"), a verdict of an earlier gl-replay ("event"),
 * or none of these. */
enum kind { K_RESULT, K_TRIGGER, K_VERDICT, K_OTHER };

static enum kind kind_of(jv rec)
{
	if (jv_get_kind(rec) != JV_KIND_OBJECT)
		return K_OTHER;
	if (jv_object_has(jv_copy(rec), jv_string("ok")))
		return K_RESULT;
	if (jv_object_has(jv_copy(rec), jv_string("event")))
		return K_VERDICT;
	jv w = gl_json_get(rec, "witness"), we = gl_json_get(rec, "witness_error");
	bool t = jv_get_kind(w) == JV_KIND_STRING || jv_get_kind(we) == JV_KIND_STRING;
	jv_free(w);
	jv_free(we);
	return t ? K_TRIGGER : K_OTHER;
}

/* One line of stdin: a result record is passed on, then a verdict per
 * trigger; a bare trigger record gets its verdict; a verdict passes on;
 * anything else is answered with an ok:false record (never silently). */
static void stdin_line(struct gl_replay *x, const struct gl_buf *line)
{
	jv rec = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(rec)) {
		jv msg = jv_invalid_get_msg(rec);
		gl_json_emit_error(jv_null(), "bad_json", "%s",
				   jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "?");
		jv_free(msg);
		worst = worst > 1 ? worst : 1;
		return;
	}
	enum kind k = kind_of(rec);
	if (k == K_TRIGGER) {
		trigger_verdict(x, jv_null(), rec);
		jv_free(rec);
		return;
	}
	if (k == K_OTHER) {
		gl_json_emit_error(jv_null(), "bad_record", "%s",
				   "neither a result record, a trigger record nor a verdict (SPEC §7)");
		gl_log_event("refusal", JV_OBJECT(jv_string("error"), jv_string("bad_record")));
		worst = worst > 1 ? worst : 1;
		jv_free(rec);
		return;
	}
	/* The record itself, unchanged (byte for byte). */
	if (fwrite(line->data, 1, line->len, stdout) != line->len || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0)
		gl_die_errno(GL_EXIT_USAGE, "writing to stdout");
	jv trig = k == K_RESULT ? gl_json_get(rec, "triggers") : jv_invalid();
	if (jv_get_kind(trig) == JV_KIND_ARRAY) {
		jv_array_foreach(trig, i, t)
		{
			(void)i;
			trigger_verdict(x, rec, t);
			jv_free(t);
		}
	}
	jv_free(trig);
	jv_free(rec);
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
			      .manifest = jv_invalid()};
	struct gl_policy pol = {.doc = jv_null()};
	const char *v, *log_path = NULL;
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
			x.tries = (int)n;
		} else if ((v = gl_flag_value(argc, argv, &i, "--items", usage))) {
			if (stat(v, &st) < 0 || !S_ISDIR(st.st_mode))
				gl_die(GL_EXIT_USAGE, "--items %s: not a directory", v);
			x.items_dir = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--release", usage))) {
			if (stat(v, &st) == 0 && S_ISDIR(st.st_mode))
				x.archive_dir = v;
			else if (stat(v, &st) == 0 && S_ISREG(st.st_mode))
				x.archive = v;
			else
				gl_die(GL_EXIT_USAGE, "--release %s: not a file or directory", v);
		} else if ((v = gl_flag_value(argc, argv, &i, "--policy", usage))) {
			char *err = NULL;
			if (x.pol)
				bad_usage("--policy given twice");
			if (gl_policy_load(&pol, v, &err) < 0)
				gl_die(GL_EXIT_USAGE, "--policy %s", err);
			x.pol = &pol;
		} else if ((v = gl_flag_value(argc, argv, &i, "--log", usage))) {
			log_path = v;
		} else if (!strcmp(argv[i], "--no-probe")) {
			x.no_probe = true;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			bad_usage(gl_xasprintf("unknown argument '%s'", argv[i]));
		} else {
			break;
		}
	}
	gl_log_open("gl-replay", log_path);
	if (x.no_probe)
		gl_warn("--no-probe: the Table V reference; verdicts are not evidence");
	/* the auditor's host is bounded against the release (issue 15): the
	 * slots are made here, off every replay's path (lib/sandbox/cgroup.h) */
	struct gl_cg cg;
	gl_cg_open(&cg);
	x.cg = &cg;
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
			stdin_line(&x, &line);
			gl_log_progress("%lu records", ++n);
		}
		if (too_long)
			worst = worst > 1 ? worst : 1;
	}
	gl_replay_end(&x);
	gl_cg_close(&cg);
	gl_log_close();
	gl_policy_free(&pol);
	curl_global_cleanup();
	return worst;
}
