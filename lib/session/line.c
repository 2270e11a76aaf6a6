/* line.c — one call envelope in, one result record out (SPEC §6;
 * docs/gl-run.md). The plan is recomputed from the policy (lib/plan/plan.c):
 * an envelope whose given plan differs is refused ("bad_plan"), so a plan
 * tampered with upstream never runs. Then the dampening state (SPEC §7),
 * the release and its runtime, and the call: germline execution (paper
 * Algorithm 1, lib/broker/broker.c) or the mode's baseline (baseline.c).
 * Every refusal is gl_session_refusal's record. */
#define _GNU_SOURCE
#include <string.h>

#include "evidence/call_binding.h"
#include "evidence/trigger_list.h"
#include "broker/itempath.h"
#include "json/json.h"
#include "json/log.h"
#include "session/session_impl.h"

/* Does the envelope's plan (borrowed; absent is allowed) equal ours? */
static bool plan_matches(jv given, const struct gl_plan *plan, const struct gl_call *c)
{
	if (!jv_is_valid(given))
		return true;
	autobuf struct gl_buf a = {0}, b = {0};
	gl_json_dump(&a, given); /* keys sorted, as gl_plan_dump writes them */
	gl_plan_dump(&b, plan, c);
	return a.len == b.len && !memcmp(a.data, b.data, a.len);
}

/* The plan check: ours, or for a baseline the germline plan too (a
 * baseline uses the plan for D_f only: an envelope planned for germline
 * execution runs too). */
static bool plan_ok(const struct gl_session *s, jv given, const struct gl_plan *plan,
		    const struct gl_call *c)
{
	if (plan_matches(given, plan, c))
		return true;
	if (!gl_session_baseline(s))
		return false;
	struct gl_plan gp;
	gl_plan_make(&gp, c, s->pol, GL_PLAN_GERMLINE);
	bool ok = plan_matches(given, &gp, c);
	gl_plan_free(&gp);
	return ok;
}

/* Why gl-run cannot run this release in this mode, or NULL. */
static const char *unsupported(const struct gl_session *s, jv manifest)
{
	enum gl_runtime_kind rt = gl_manifest_runtime(manifest);
	if (rt == GL_RT_EXEC && (s->run == GL_RUN_FRESH || s->run == GL_RUN_CONFINED))
		return "runtime \"exec\" runs in modes germline, nosplit, lazy, sigifc and sigpin "
		       "only (docs/exec.md)";
	if (rt == GL_RT_UNKNOWN || gl_manifest_protocol(manifest) == GL_PROTO_UNKNOWN)
		return "gl-run runs runtime \"python\" with protocol \"germline\" or \"mcp-stdio\" "
		       "only, for now";
	return NULL;
}

/* An upstream refusal ({"ok":false,"error":…}, borrowed) passes through. */
static bool upstream_refusal(jv env)
{
	if (jv_get_kind(env) != JV_KIND_OBJECT)
		return false;
	jv ok = gl_json_get(env, "ok");
	bool upstream = jv_get_kind(ok) == JV_KIND_FALSE && gl_json_get_str(env, "error");
	jv_free(ok);
	return upstream;
}

/* Read and check the envelope env (consumed by gl_call_read) into c: 0,
 * or -1 with *out its refusal. Item paths never name host state
 * (lib/broker/itempath.h); the broker checks again on what it opens. */
static int read_call(struct gl_session *s, struct gl_call *c, jv env, jv *out)
{
	struct gl_call_error ce = {0};
	if (gl_call_read(c, env, s->pol, s->rel, &ce) >= 0 &&
	    gl_itempath_check_call(c, s->broker.roots, &ce) >= 0)
		return 0;
	*out = gl_session_refusal(jv_object(), ce.code, jv_string(ce.detail));
	if (c->release && !strcmp(ce.code, "unknown_release"))
		gl_launch_reject(&s->launcher, c->release, "release", ce.detail, &s->ids);
	free(ce.detail);
	if (c->release && gl_sha256_hex_ok(c->release, strlen(c->release)))
		*out = jv_object_set(*out, jv_string("release"), jv_string(c->release));
	return -1;
}

/* The receipts of k's launches are s->ids while one of its parts runs. */
static void ids_in(struct gl_session *s, struct gl_session_call *k)
{
	jv_free(s->ids);
	s->ids = k->ids;
	k->ids = jv_invalid();
}

static void ids_out(struct gl_session *s, struct gl_session_call *k)
{
	k->ids = s->ids;
	s->ids = jv_array();
}

/* gl_session_call_read; log: its call_start event (not when a reused
 * worker reads the line the main process read and logged). */
static void read_line(struct gl_session *s, const struct gl_buf *line, struct gl_session_call *k,
		      bool log)
{
	memset(k, 0, sizeof *k);
	k->given = k->manifest = jv_invalid();
	k->ids = jv_array(); /* the receipts of this call's launches */
	k->c.id = jv_invalid();
	k->state = GL_CALL_DONE;
	jv env = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(env)) {
		k->out = gl_session_refusal(jv_object(), "bad_json", jv_invalid_get_msg(env));
		k->bare = true;
		return;
	}
	if (upstream_refusal(env)) {
		k->out = env;
		k->bare = true;
		return;
	}
	ids_in(s, k);
	k->given = jv_get_kind(env) == JV_KIND_OBJECT ? gl_json_get(env, "plan") : jv_invalid();
	k->have_call = true; /* gl_call_free either way (lib/plan/call.h) */
	if (read_call(s, &k->c, env, &k->out) == 0) {
		struct gl_call *c = &k->c;
		k->out = JV_OBJECT(jv_string("release"), jv_string(c->release), jv_string("function"),
				   jv_string(c->function), jv_string("mode"), jv_string(s->mode_name));
		if (log)
			gl_log_event(
			    "call_start",
			    JV_OBJECT(jv_string("id"), jv_is_valid(c->id) ? jv_copy(c->id) : jv_null(),
				      jv_string("release"), jv_string(c->release), jv_string("function"),
				      jv_string(c->function), jv_string("mode"),
				      jv_string(s->mode_name)));
		gl_plan_make(&k->plan, c, s->pol, s->mode);
		k->have_plan = true;
		if (!plan_ok(s, k->given, &k->plan, c))
			k->out = gl_session_refusal(
			    k->out, "bad_plan",
			    jv_string("the envelope's plan is not the plan of this policy and mode"));
		else
			k->state = GL_CALL_READ;
	}
	ids_out(s, k);
}

void gl_session_call_read(struct gl_session *s, const struct gl_buf *line,
			  struct gl_session_call *k)
{
	read_line(s, line, k, true);
}

void gl_session_call_adopt(struct gl_session *s, const struct gl_buf *line, jv ids,
			   struct gl_session_call *k)
{
	read_line(s, line, k, false);
	jv_free(k->ids);
	k->ids = ids;
	if (k->state != GL_CALL_READ)
		return; /* the same line the main process read: not expected */
	k->state = GL_CALL_DONE;
	for (size_t i = 0; i < s->nres; i++) {
		struct gl_resident *r = &s->res[i];
		if (!strcmp(r->release, k->c.release) && r->up && !r->g.exec && !r->rp_refused) {
			k->r = r;
			k->state = GL_CALL_READY;
			return;
		}
	}
	k->out = gl_session_refusal(k->out, "internal",
				     jv_string("the worker's session has no germline of this release"));
}

/* Germline execution's part before the call: the release's resident
 * germline (launched, and for mcp-stdio discovered, on first use). */
static void germline_prepare(struct gl_session *s, struct gl_session_call *k)
{
	autofail struct gl_fail f = {0};
	k->r = gl_session_germline(s, k->c.release, k->manifest, &f);
	if (!k->r || gl_session_mcp_ready(s, k->r, &f) < 0) {
		k->out = gl_session_refusal(k->out, gl_code_name(f.code),
					     jv_string(gl_fail_detail(&f)));
		return;
	}
	k->state = GL_CALL_READY;
}

void gl_session_call_prepare(struct gl_session *s, struct gl_session_call *k)
{
	if (k->state != GL_CALL_READ)
		return;
	ids_in(s, k);
	k->state = GL_CALL_DONE;
	const struct gl_call *c = &k->c;
	autofail struct gl_fail rf = {0};
	const char *why;
	int sup;
	if ((sup = gl_session_suppressed(s, c->release, &rf)) != 0) {
		const char *err = gl_fail_detail(&rf); /* damp */
		gl_launch_reject(&s->launcher, c->release, sup > 0 ? "suppressed" : "damp",
				 sup > 0 ? "suppressed by the dampening state" : err, &s->ids);
		k->out = gl_session_refusal(
		    k->out, sup > 0 ? "suppressed" : "damp",
		    jv_string(sup > 0 ? "the release is suppressed by the dampening state (gl-damp)"
				      : err));
	} else if (gl_releases_get(s->rel, c->release, &k->manifest, &rf) != GL_E_OK) {
		/* a bad manifest too is unknown_release here, as before */
		gl_launch_reject(&s->launcher, c->release, "release", rf.detail, &s->ids);
		k->out = gl_session_refusal(k->out, "unknown_release", jv_string(rf.detail));
	} else if ((why = unsupported(s, k->manifest))) {
		k->out = gl_session_refusal(k->out, "unsupported_runtime", jv_string(why));
	} else if (gl_session_baseline(s)) {
		jv refused = gl_session_baseline_prepare(s, c, k->manifest, &k->r);
		if (jv_is_valid(refused))
			k->out = jv_object_merge(k->out, refused);
		else
			k->state = GL_CALL_READY;
	} else {
		germline_prepare(s, k);
	}
	ids_out(s, k);
}

/* A call of an exec release runs alone host-wide (its copies take no
 * lane's uid yet; lib/sandbox/uids.h), which its record's enforcement
 * says: the serial lock, unless the session holds it for every call. */
static int exec_serial(struct gl_session *s, struct gl_germline *g)
{
	if (!s->uids.off)
		g->enf.uid = "serialized";
	return s->serial ? -1 : gl_session_serial_take(s, true);
}

void gl_session_call_run(struct gl_session *s, struct gl_session_call *k)
{
	if (k->state != GL_CALL_READY)
		return;
	ids_in(s, k);
	k->state = GL_CALL_RAN;
	struct gl_resident *r = k->r;
	if (gl_session_baseline(s)) {
		k->out = jv_object_merge(k->out, gl_session_baseline_run(s, &k->c, &k->plan, r));
		k->sp_down = s->run != GL_RUN_FRESH && !r->sp.up;
	} else {
		/* An exec copy is a launch of its own that takes no lane's uid
		 * yet: with or without a delegated range its calls run alone
		 * host-wide (lib/sandbox/uids.h) */
		int serial = r->g.exec ? exec_serial(s, &r->g) : -1;
		jv res = gl_broker_call(&s->broker, &r->g, &k->c, &k->plan, &k->lost);
		gl_uids_serial_give(serial);
		k->out = jv_object_merge(k->out, res);
		k->out = jv_object_set(k->out, jv_string("enforcement"),
				       gl_session_enforcement(&r->g.enf));
		gl_ids_add(&s->ids, r->ev.launched_id);
	}
	k->pool_empty = !r->g.pooled;
	ids_out(s, k);
}

jv gl_session_call_finish(struct gl_session *s, struct gl_session_call *k)
{
	jv out = k->out;
	k->out = jv_invalid();
	if (k->bare)
		return out;
	ids_in(s, k);
	struct gl_resident *r = k->r;
	if (k->state == GL_CALL_RAN && k->lost && r->up) {
		gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
		r->up = false;
	}
	if (k->state == GL_CALL_RAN && k->sp_down && r->sp.up)
		gl_session_stop(&r->sp); /* a worker's call stopped it there */
	if (k->state == GL_CALL_RAN && gl_session_baseline(s))
		r->sp.started = false; /* served a call ("copies":0 from now on), as the broker says */
	if (s->launcher.rc)
		out = jv_object_set(out, jv_string("receipts"), jv_copy(s->ids));
	if (jv_is_valid(k->c.id))
		out = jv_object_set(out, jv_string("id"), jv_copy(k->c.id));
	/* the record bound to its launches, so no other receipt can be named
	 * in their place (lib/evidence/call_binding.h) */
	if (s->launcher.rc)
		out = gl_call_sign(out, &s->launcher.rc->key);
	/* its triggers vouched for by the key of its witnesses, so that one whose
	 * witness cannot be replayed still counts, and a made-up one never
	 * does (lib/evidence/trigger_list.h) */
	out = gl_triggers_sign(out, s->broker.witness_key);
	ids_out(s, k);
	return out;
}

void gl_session_call_free(struct gl_session_call *k)
{
	jv_free(k->given);
	jv_free(k->out);
	jv_free(k->ids);
	if (k->have_plan)
		gl_plan_free(&k->plan);
	if (k->have_call)
		gl_call_free(&k->c);
	memset(k, 0, sizeof *k);
	k->given = k->out = k->ids = k->manifest = jv_invalid();
}

jv gl_session_line(struct gl_session *s, const struct gl_buf *line)
{
	return gl_session_line_read(s, line, NULL, NULL);
}

jv gl_session_line_read(struct gl_session *s, const struct gl_buf *line,
			void (*read)(const struct gl_session *s, const struct gl_session_call *k,
				     void *ctx),
			void *ctx)
{
	/* without delegated host uids, the whole call alone host-wide: its
	 * germline's launch, its discovery, its copies (lib/sandbox/uids.h) */
	int serial = gl_session_serial_take(s, false);
	struct gl_session_call k;
	gl_session_call_read(s, line, &k);
	if (read)
		read(s, &k, ctx);
	gl_session_call_prepare(s, &k);
	gl_session_call_run(s, &k);
	jv out = gl_session_call_finish(s, &k);
	gl_session_call_free(&k);
	gl_uids_serial_give(serial);
	return out;
}
