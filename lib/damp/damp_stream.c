/* damp_stream.c — gl-damp's per-record work (damp_stream.h): classify a
 * record, apply it to the state in one locked transaction, write the
 * output record; and the text forms of analyze and simulate. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "damp/damp_once.h"
#include "damp/damp_sim.h"
#include "damp/damp_stream.h"
#include "evidence/witness_key.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "json/log.h"

/* The record of r's release (extra, consumed, with its penalty and flag). */
static void emit(const struct gl_damp_record *r, jv extra, double penalty, bool suppressed,
		 const char *kind)
{
	jv out = extra;
	out = jv_object_set(out, jv_string("release"), jv_string(r->release));
	out = jv_object_set(out, jv_string("penalty"), jv_number(penalty));
	out = jv_object_set(out, jv_string("suppressed"), jv_bool(suppressed));
	gl_log_event("damp", JV_OBJECT(jv_string("release"), jv_string(r->release),
				       jv_string("kind"), jv_string(kind), jv_string("penalty"),
				       jv_number(penalty), jv_string("suppressed"), jv_bool(suppressed)));
	gl_json_emit(out);
}

/* Under the store's lock: has r's evidence been counted already
 * (damp_once.h)? 1 (answered "repeated", the lock released), 0 (not: *once
 * holds the keys, to be added once the state is saved), or -1 with f. */
static int repeated(struct gl_damp_store *store, const struct gl_damp_record *r,
		    struct gl_damp_once *once, jv *extra, struct gl_fail *f)
{
	if (!r->key[0] || gl_damp_once_off())
		return 0;
	if (gl_damp_once_load(once, store->path, f) < 0) {
		gl_damp_store_abort(store);
		return -1;
	}
	if (!gl_damp_once_has(once, r->key))
		return 0;
	double penalty = gl_damp_penalty(store->st, r->release);
	bool suppressed = gl_damp_is_suppressed(store->st, r->release);
	gl_damp_store_abort(store);
	emit(r, jv_object_set(*extra, jv_string("repeated"), jv_true()), penalty, suppressed,
	     "repeated");
	*extra = jv_invalid();
	return 1;
}

/* A verdict on a witness no trusted key signed (gl-replay's
 * "trusted":false): its release's penalty as it stands, answered
 * "untrusted":true; nothing added, no key kept (so a forgery that borrows
 * a real witness's id never makes the real one "repeated"). 1, or -1 with
 * f. */
static int untrusted(struct gl_damp_store *store, const struct gl_damp_record *r, jv extra,
		     struct gl_fail *f)
{
	if (gl_damp_store_begin(store, f) < 0) {
		jv_free(extra);
		return -1;
	}
	double penalty = gl_damp_penalty(store->st, r->release);
	bool suppressed = gl_damp_is_suppressed(store->st, r->release);
	gl_damp_store_abort(store);
	emit(r, jv_object_set(extra, jv_string("untrusted"), jv_true()), penalty, suppressed,
	     "untrusted");
	return 1;
}

/* One locked transaction on the state file for r; then its output record,
 * merged into extra (an object, consumed). A verdict whose evidence was
 * counted before adds nothing (damp_once.h). */
static int apply(struct gl_damp_store *store, const struct gl_damp_params *p,
		 const struct gl_damp_record *r, uint64_t lineno, jv extra, struct gl_fail *f)
{
	double penalty;
	bool suppressed;
	if (r->kind == GL_DAMP_VERDICT && r->untrusted && !gl_witness_trust_off())
		return untrusted(store, r, extra, f);
	if (gl_damp_store_begin(store, f) < 0) {
		jv_free(extra);
		return -1;
	}
	struct gl_damp_once once = {0};
	int seen = repeated(store, r, &once, &extra, f);
	if (seen != 0) {
		gl_damp_once_free(&once);
		jv_free(extra);
		return seen < 0 ? -1 : 1;
	}
	if (gl_damp_apply(store->st, p, r, &penalty, &suppressed) < 0) {
		gl_damp_store_abort(store);
		gl_damp_once_free(&once);
		jv_free(extra);
		gl_json_emit_error(jv_null(), "state_full",
				   "line %llu: the state already holds %u releases", (unsigned long long)lineno,
				   GL_DAMP_MAX_RELEASES);
		return 0;
	}
	/* Persist first: an output record never reports an unsaved state. The
	 * key after the state: a crash between the two counts this evidence
	 * once more at worst, never not at all. */
	int rc = gl_damp_store_save(store, f);
	if (rc == 0 && once.path)
		rc = gl_damp_once_add(&once, r->key, f);
	gl_damp_store_abort(store); /* unlocked */
	gl_damp_once_free(&once);
	if (rc < 0) {
		jv_free(extra);
		return -1;
	}
	emit(r, extra, penalty, suppressed, r->kind == GL_DAMP_CALL ? "call" : "event");
	return 1;
}

/* A line gl-damp could not take as a record, whose bytes buf[0..n) may
 * name a release at their top level (gl_jsonl_named): charged to that
 * release as r says (r->release filled here) and answered with the penalty
 * and ok:false, error code, detail what, plus how it was counted (as_what);
 * naming none, there is nobody to charge: only the error record. Either
 * way gl-damp's exit status is 1. */
static int charge_named(struct gl_damp_store *store, const struct gl_damp_params *p,
			struct gl_damp_record *r, const char *buf, size_t n, uint64_t lineno,
			const char *code, const char *what, const char *as_what, struct gl_fail *f)
{
	jv named = gl_jsonl_named(buf, n);
	const char *rel = gl_json_get_str(named, "release");
	autofree char *detail = gl_xasprintf("line %llu: %s%s%s", (unsigned long long)lineno, what,
					     rel ? "; counted as " : "", rel ? as_what : "");
	if (!rel) {
		jv_free(named);
		gl_json_emit_error(jv_null(), code, "%s", detail);
		return 0;
	}
	memcpy(r->release, rel, 65);
	jv extra = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string(code),
			     jv_string("detail"), jv_string(detail));
	jv id = gl_json_get(named, "id");
	if (jv_is_valid(id))
		extra = jv_object_set(extra, jv_string("id"), id);
	else
		jv_free(id);
	jv_free(named);
	gl_log_event("refusal", JV_OBJECT(jv_string("line"), jv_number((double)lineno),
					  jv_string("release"), jv_string(r->release),
					  jv_string("error"), jv_string(code)));
	return apply(store, p, r, lineno, extra, f) < 0 ? -1 : 0;
}

/* A line the reader refuses (why: its message). No stage of ours writes
 * one; a record whose copy made it unreadable (a value the pipeline cannot
 * carry) would otherwise hide its call and its triggers. Naming a release,
 * it is an unverified event of that release (the weight of a trigger that
 * cannot be replayed): reading nothing from a record never costs a release
 * less than the record would have. */
static int bad_line(struct gl_damp_store *store, const struct gl_damp_params *p,
		    const struct gl_buf *line, uint64_t lineno, const char *why, struct gl_fail *f)
{
	struct gl_damp_record r = {.kind = GL_DAMP_VERDICT, .event = GL_DAMP_UNVERIFIED};
	gl_damp_once_key("line", line->data, line->len, r.key); /* the same line counts once */
	return charge_named(store, p, &r, line->data, line->len, lineno, "bad_json", why,
			    "an unverified event of its release", f);
}

/* One record: classify, then apply. */
int gl_damp_stream_line(struct gl_damp_store *store, const struct gl_damp_params *p,
			const struct gl_buf *line, uint64_t lineno, struct gl_fail *f)
{
	jv rec = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(rec)) {
		jv msg = jv_invalid_get_msg(rec);
		int rc = bad_line(store, p, line, lineno,
				  jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "?", f);
		jv_free(msg);
		return rc;
	}
	struct gl_damp_record r;
	autofail struct gl_fail cf = {0};
	int rc = gl_damp_classify(rec, &r, &cf);
	jv_free(rec);
	if (rc < 0) {
		const char *code = gl_code_name(cf.code);
		gl_log_event("refusal", JV_OBJECT(jv_string("line"), jv_number((double)lineno),
						  jv_string("error"), jv_string(code)));
		gl_json_emit_error(jv_null(), code, "line %llu: %s", (unsigned long long)lineno,
				   gl_fail_detail(&cf));
		return 0;
	}
	return apply(store, p, &r, lineno, jv_object(), f);
}

/* No stage of ours writes a line over the limit; when its first bytes name
 * a release it is counted as a call to it (never a silently skipped
 * record). */
int gl_damp_stream_too_long(struct gl_damp_store *store, const struct gl_damp_params *p,
			    const struct gl_buf *prefix, uint64_t lineno, struct gl_fail *f)
{
	struct gl_damp_record r = {.kind = GL_DAMP_CALL};
	autofree char *what = gl_xasprintf("longer than %u bytes (the pipeline's line limit, SPEC §2)",
					   GL_JSON_LINE_MAX);
	return charge_named(store, p, &r, prefix->data, prefix->len, lineno, "too_long", what,
			    "a call to its release", f);
}

static void print_calls(const char *label, jv k)
{
	if (jv_get_kind(k) == JV_KIND_NUMBER)
		printf("%s%.0f calls", label, jv_number_value(k));
	else
		printf("%snever", label);
	jv_free(k);
}

/* analysis: gl_damp_analyze's (consumed). */
int gl_damp_analyze_text(const struct gl_damp_params *p, jv r)
{
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

int gl_damp_simulate_text(const struct gl_damp_sim *sim, const struct gl_damp_sim_result *res)
{
	printf("%s %g%%, %llu calls, %llu releases, seed %llu: suppressed at least once: "
	       "%.2f%% +- %.2f%% (1 standard error)\n",
	       sim->schedule == GL_DAMP_BURSTY ? "bursty" : "random", 100 * sim->rate,
	       (unsigned long long)sim->calls, (unsigned long long)sim->releases,
	       (unsigned long long)sim->seed, 100 * res->probability, 100 * res->stderr_);
	return fflush(stdout) ? GL_EXIT_USAGE : GL_EXIT_OK;
}

