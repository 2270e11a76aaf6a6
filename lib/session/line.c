/* line.c — one call envelope in, one result record out (SPEC §6;
 * docs/gl-run.md). The plan is recomputed from the policy (lib/plan/plan.c):
 * an envelope whose given plan differs is refused ("bad_plan"), so a plan
 * tampered with upstream never runs. Then the dampening state (SPEC §7),
 * the release and its runtime, and the call: germline execution (paper
 * Algorithm 1, lib/broker/broker.c) or the mode's baseline (baseline.c).
 * Every refusal is gl_session_refusal's record. */
#define _GNU_SOURCE
#include <string.h>

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

/* Germline execution of c on its release's resident germline (launched,
 * and for mcp-stdio discovered, on first use). out: the record so far
 * (consumed); returns it completed (owned). */
static jv germline_call(struct gl_session *s, const struct gl_call *c, const struct gl_plan *plan,
			jv manifest, jv out)
{
	const char *code = "launch";
	char *err = NULL;
	struct gl_resident *r = gl_session_germline(s, c->release, manifest, &err, &code);
	if (!r || gl_session_mcp_ready(s, r, &code, &err) < 0) {
		out = gl_session_refusal(out, code, jv_string(err));
		free(err);
		return out;
	}
	bool lost = false;
	jv res = gl_broker_call(&s->broker, &r->g, c, plan, &lost);
	out = jv_object_merge(out, res);
	out = jv_object_set(out, jv_string("enforcement"), gl_session_enforcement(&r->g.enf));
	gl_ids_add(&s->ids, r->ev.launched_id);
	if (lost) {
		gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
		r->up = false;
	}
	return out;
}

/* The checks of a read call, then the call. out: the record so far
 * (consumed); returns it completed (owned). */
static jv run_call(struct gl_session *s, const struct gl_call *c, jv given, jv out)
{
	struct gl_plan plan;
	gl_plan_make(&plan, c, s->pol, s->mode);
	jv manifest = jv_invalid();
	char *err = NULL;
	const char *why;
	int sup;
	if (!plan_ok(s, given, &plan, c)) {
		out = gl_session_refusal(
		    out, "bad_plan",
		    jv_string("the envelope's plan is not the plan of this policy and mode"));
	} else if ((sup = gl_session_suppressed(s, c->release, &err)) != 0) {
		gl_launch_reject(&s->launcher, c->release, sup > 0 ? "suppressed" : "damp",
				 sup > 0 ? "suppressed by the dampening state" : err, &s->ids);
		out = gl_session_refusal(
		    out, sup > 0 ? "suppressed" : "damp",
		    jv_string(sup > 0 ? "the release is suppressed by the dampening state (gl-damp)"
				      : err));
	} else if (gl_releases_get(s->rel, c->release, &manifest, &err) != GL_MANIFEST_OK) {
		gl_launch_reject(&s->launcher, c->release, "release", err, &s->ids);
		out = gl_session_refusal(out, "unknown_release", jv_string(err));
	} else if ((why = unsupported(s, manifest))) {
		out = gl_session_refusal(out, "unsupported_runtime", jv_string(why));
	} else if (gl_session_baseline(s)) {
		out = jv_object_merge(out, gl_session_baseline_call(s, c, &plan, manifest));
	} else {
		out = germline_call(s, c, &plan, manifest, out);
	}
	free(err);
	gl_plan_free(&plan);
	return out;
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

jv gl_session_line(struct gl_session *s, const struct gl_buf *line)
{
	jv_free(s->ids);
	s->ids = jv_array(); /* the receipts of this call's launches */
	jv env = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(env))
		return gl_session_refusal(jv_object(), "bad_json", jv_invalid_get_msg(env));
	if (upstream_refusal(env))
		return env;
	jv given = jv_get_kind(env) == JV_KIND_OBJECT ? gl_json_get(env, "plan") : jv_invalid();
	struct gl_call c;
	jv out;
	if (read_call(s, &c, env, &out) == 0) {
		out = JV_OBJECT(jv_string("release"), jv_string(c.release), jv_string("function"),
				jv_string(c.function), jv_string("mode"), jv_string(s->mode_name));
		gl_log_event("call_start",
			     JV_OBJECT(jv_string("id"), jv_is_valid(c.id) ? jv_copy(c.id) : jv_null(),
				       jv_string("release"), jv_string(c.release), jv_string("function"),
				       jv_string(c.function), jv_string("mode"),
				       jv_string(s->mode_name)));
		out = run_call(s, &c, given, out);
	}
	if (s->launcher.rc)
		out = jv_object_set(out, jv_string("receipts"), jv_copy(s->ids));
	if (jv_is_valid(c.id))
		out = jv_object_set(out, jv_string("id"), jv_copy(c.id));
	jv_free(given);
	gl_call_free(&c);
	return out;
}
