/* gl-run — planned envelopes in, result records out (SPEC §6).
 *
 * Reads JSON Lines on stdin; for each planned envelope runs the call as
 * germline execution (paper Algorithm 1, lib/broker/broker.c) and writes one
 * result record, flushed. One germline per release is launched on first
 * use and kept resident while stdin is open; the session (registry, plan
 * check, damping, baselines) is lib/session/session.h. A bad record yields
 * {"ok":false,"error","detail"} and the stream goes on; the exit status is
 * then 1. docs/gl-run.md. */
#define _GNU_SOURCE
#include <sodium.h>
#include <string.h>

#include "broker/http.h"
#include "core/util.h"
#include "evidence/witness_key.h"
#include "release/installed.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "json/log.h"
#include "json/msg.h"
#include "json/refusal.h"
#include "runtime/receipt.h"
#include "session/jobs.h"
#include "session/mcp_serve.h"
#include "session/session.h"
#include "sign/keys.h"

#include "flags.h"
#include "serve_mcp.h"

/* One record of the JSON Lines front end (lib/session/jobs.h), flushed. */
static bool emit(jv rec, void *ctx)
{
	static unsigned long nrec;
	bool *all_ok = ctx;
	gl_log_result(rec);
	gl_log_progress("%lu records", ++nrec);
	*all_ok &= gl_json_get_bool(rec, "ok", 0) == 1;
	if (gl_jsonl_emit(jv_copy(rec))) {
		jv_free(rec);
	} else {
		gl_json_emit(gl_jsonl_oversized_result(rec)); /* SPEC §2 */
		*all_ok = false;
	}
	return true;
}

/* The JSON Lines front end: one record per envelope, up to --jobs calls
 * at once. true when every record was ok. */
static bool run_lines(struct gl_session *s, const struct opts *o)
{
	bool all_ok = true;
	int rc = gl_jobs_lines(s, o->jobs, o->unordered, emit, &all_ok);
	if (rc < 0)
		gl_die(GL_EXIT_USAGE, "a call's worker stopped (its message is above): gl-run stops");
	return all_ok && rc == 0;
}

/* The key that signs every witness (lib/evidence/witness_key.h): the
 * receipts' host key, else GL_HOME's own, loaded into own; its public half
 * recorded as trusted in GL_HOME, so gl-replay there trusts what this host
 * wrote. Stops gl-run (exit 2) when neither can be had: a witness nobody
 * can authenticate would count for nothing. */
static void witness_signer(struct gl_session *s, const struct gl_receipts *rc, struct gl_key *own)
{
	autofail struct gl_fail f = {0};
	const struct gl_key *k = rc->key.sk ? &rc->key : own;
	if (!rc->key.sk && gl_witness_key_own(s->broker.home, own, &f) < 0)
		gl_die(GL_EXIT_USAGE, "the witness key: %s", gl_fail_detail(&f));
	if (gl_witness_key_record(s->broker.home, k, &f) < 0)
		gl_die(GL_EXIT_USAGE, "the witness key: %s", gl_fail_detail(&f));
	s->broker.witness_key = k;
}

/* A receipt that cannot be written (lib/runtime/receipt.h): gl-run stops,
 * a launch without its evidence must not go on (SPEC §9, fail closed). */
static void receipt_lost(const char *detail)
{
	gl_die(GL_EXIT_USAGE, "%s", detail);
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-run");
	gl_std_flags(argc, argv, gl_run_usage);
	gl_msg_test_usage(); /* GL_TESTING only: peak RSS and CPU at exit (lib/json/msg.h) */
	if (sodium_init() < 0)
		gl_die(GL_EXIT_USAGE, "libsodium: initialisation failed");
	gl_http_global_init();
	struct opts o = {.consumer = "agent", .profile = "full", .mode = "germline"};
	struct gl_session s = {0};
	s.broker.deadline_s = GL_BROKER_DEADLINE_DEFAULT;
	parse_flags(argc, argv, &o, &s.broker);
	struct gl_receipts rc = {.dir = o.receipts, .profile = o.profile, .lost = receipt_lost};
	check_flags(&o, &s, &rc);

	struct gl_policy pol;
	struct gl_fail f = {0};
	if (gl_policy_load(&pol, o.policy, &f) < 0)
		gl_die(GL_EXIT_USAGE, "policy %s", gl_fail_detail(&f));
	s.pol = s.broker.pol = &pol;
	s.damp_path = o.damp;
	if (s.damp_path && gl_session_damp_check(&s, &f) < 0)
		gl_die(GL_EXIT_USAGE, "--damp %s", gl_fail_detail(&f));
	if (gl_session_places(&s, o.releases, o.receipts, o.host_key, &f) < 0)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	/* no delegated host uids: every call alone (lib/sandbox/uids.h) */
	if (gl_session_serialize(&s)) {
		if (o.jobs > 1 || s.broker.pool)
			gl_warn("%s: each call runs alone host-wide (--jobs 1, no --pool; "
				"docs/sandbox.md \"Host uids\")",
				s.uids.why);
		o.jobs = 1;
		s.broker.pool = false;
	}
	rc.mode = s.mode_name;
	/* --release NAME[@VERSION]: the one installed release it fits, by
	 * hash from here on (lib/release/installed.h) */
	char serve_sha[65];
	if (o.serve_mcp) {
		if (gl_installed_find(s.releases_dir, o.serve_release, serve_sha, &f) < 0)
			gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
		o.serve_release = serve_sha;
	}
	/* --serve-mcp fails fast, before its first message and before any
	 * slot exists (issue 17): an agent host shows this stderr line, with
	 * the path, instead of an error at the first tools/list */
	if (o.serve_mcp &&
	    gl_mcp_serve_check(o.releases ? NULL : s.broker.home, s.releases_dir, s.rel, &pol,
			       s.state, !gl_session_baseline(&s), o.serve_release, &f) < 0)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	struct gl_key own = {0};
	witness_signer(&s, &rc, &own);
	gl_session_start(&s);
	bool ok = o.serve_mcp ? gl_serve_mcp(&s, o.serve_release, o.consumer, o.jobs_given ? o.jobs : 1) == 0 : run_lines(&s, &o);
	gl_session_end(&s);
	gl_key_free(&rc.key);
	gl_key_free(&own);
	gl_policy_free(&pol);
	gl_log_close();
	curl_global_cleanup();
	return ok ? GL_EXIT_OK : GL_EXIT_REFUSED;
}
