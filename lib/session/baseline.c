/* baseline.c — the baselines of gl-run (SPEC §6; paper §VII-A "Runtimes";
 * docs/gl-run.md "Modes"): find or start the process that serves the
 * call, then run it (lib/broker/broker_session.c). Fresh+IFC launches a
 * germline per call; Confined+IFC keeps one copy of the germline per
 * release; Sig+IFC and Sig+Pin keep one unconfined process per release.
 * None of them is germline execution: they are what Tables VI and XII
 * compare it with. */
#define _GNU_SOURCE
#include <string.h>

#include "json/json.h"
#include "runtime/exec.h"
#include "session/session_impl.h"

/* A refusal of the baseline (detail malloc'd, consumed; NULL: "failed"). */
static jv fail(const char *code, char *detail)
{
	jv out = gl_session_refusal(jv_object(), code, jv_string(detail ? detail : "failed"));
	free(detail);
	return out;
}

/* fail of f's code and detail (f cleared). */
static jv fail_f(struct gl_fail *f)
{
	const char *code = gl_code_name(f->code);
	char *detail = f->detail;
	f->detail = NULL;
	gl_fail_clear(f);
	return fail(code, detail);
}

/* Fresh+IFC: a germline launched for this call (a verified launch), one
 * confined copy with every item, both gone before the next call: no state
 * survives, items of one call share a process. */
static jv run_fresh(struct gl_session *s, const struct gl_resident *r, const struct gl_call *c,
		    const struct gl_plan *plan)
{
	struct gl_germline g;
	struct gl_launch_ev ev;
	struct gl_session_proc p;
	bool lost = false;
	struct gl_fail f = {0};
	if (gl_session_launch(s, r, &g, &ev, &f) < 0)
		return fail_f(&f);
	if (gl_session_fork(&g, true, NULL, 0, &p, &lost, &f) < 0) { /* germline or germline_check */
		gl_launch_end(&s->launcher, &g, &ev, &s->ids);
		return fail_f(&f);
	}
	jv res = gl_broker_session_call(&s->broker, s->run, &p, c, plan, g.config);
	gl_session_stop(&p);
	res = jv_object_set(res, jv_string("enforcement"), gl_session_enforcement(&g.enf));
	gl_launch_end(&s->launcher, &g, &ev, &s->ids);
	return res;
}

/* Confined+IFC: one copy of the germline, kept for the session. 0, or -1
 * with *out the refusal. */
static int start_confined(struct gl_session *s, struct gl_resident *r, jv *out)
{
	struct gl_fail f = {0};
	if (!r->up) {
		if (gl_session_room(s, r, &f) < 0 || gl_session_launch(s, r, &r->g, &r->ev, &f) < 0) {
			*out = fail_f(&f);
			return -1;
		}
		r->up = true;
	}
	bool lost = false;
	if (gl_session_fork(&r->g, false, NULL, 0, &r->sp, &lost, &f) < 0) {
		if (lost) {
			gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
			r->up = false;
		}
		*out = fail_f(&f); /* germline or germline_check */
		return -1;
	}
	return 0;
}

/* Sig+Pin, Sig+IFC: one unconfined process, kept for the session (of an
 * exec release: lib/runtime/exec.h). 0, or -1 with *out the refusal. */
static int start_unconfined(struct gl_session *s, struct gl_resident *r, const struct gl_call *c,
			    jv *out)
{
	struct gl_fail f = {0};
	int rc;
	if (gl_session_room(s, r, &f) < 0) {
		*out = fail_f(&f);
		return -1;
	}
	if (gl_runtime_ops_for(gl_manifest_runtime(r->manifest)) == &gl_exec_ops) {
		/* launched unconfined by the exec runtime, which ends it */
		rc = gl_exec_session_start(r->g.exec, (const char *const *)c->dest, c->ndest, &r->sp,
					   &f);
		if (rc == 0)
			r->sp.rt = gl_germline_runtime(&r->g);
	} else {
		autofree char *dir = NULL;
		struct gl_launch_spec spec = gl_session_launch_spec(s, r, &dir);
		rc = gl_session_launch_unconfined(&spec, &r->sp, &f);
	}
	if (rc < 0)
		*out = fail("launch", f.detail); /* takes the detail */
	return rc;
}

jv gl_session_baseline_prepare(struct gl_session *s, const struct gl_call *c, jv manifest,
			       struct gl_resident **rp)
{
	struct gl_fail f = {0};
	struct gl_resident *r = *rp = gl_session_resident(s, c->release, manifest, &f);
	if (!r)
		return fail_f(&f);
	if (gl_runtime_ops_for(gl_manifest_runtime(manifest)) == &gl_exec_ops && !r->up) {
		/* the verified release (lib/runtime/exec.h) */
		if (gl_session_launch(s, r, &r->g, &r->ev, &f) < 0)
			return fail_f(&f);
		r->up = true;
	}
	jv out = jv_invalid();
	if (s->run == GL_RUN_FRESH) /* all of it is the call's (run_fresh) */
		return out;
	if (!r->sp.up && s->run == GL_RUN_CONFINED && start_confined(s, r, &out) < 0)
		return out;
	if (!r->sp.up && s->run != GL_RUN_CONFINED && start_unconfined(s, r, c, &out) < 0)
		return out;
	return jv_invalid();
}

jv gl_session_baseline_run(struct gl_session *s, const struct gl_call *c,
			   const struct gl_plan *plan, struct gl_resident *r)
{
	if (s->run == GL_RUN_FRESH)
		return run_fresh(s, r, c, plan);
	jv res = gl_broker_session_call(&s->broker, s->run, &r->sp, c, plan,
					gl_policy_config(s->pol, gl_json_get_str(r->manifest, "name")));
	if (s->run == GL_RUN_CONFINED)
		gl_ids_add(&s->ids, r->ev.launched_id);
	struct gl_enforcement none = {0}; /* nothing installed: the baseline */
	return jv_object_set(res, jv_string("enforcement"),
			     gl_session_enforcement(s->run == GL_RUN_CONFINED ? &r->g.enf : &none));
}
