/* launch.c — verified launch with admission and receipts (SPEC §9; see
 * launch.h, docs/receipts.md). */
#define _GNU_SOURCE
#include "runtime/launch.h"

#include <signal.h>
#include <sys/wait.h>
#include <string.h>

#include "runtime/admit.h"
#include "runtime/exec.h"
#include "json/json.h"
#include "release/config.h"
#include "release/manifest.h"
#include "core/util.h"

void gl_ids_add(jv *ids, const char *id)
{
	if (!id || !*id)
		return;
	jv_array_foreach(*ids, i, x)
	{
		bool same = !strcmp(jv_string_value(x), id);
		jv_free(x);
		if (same)
			return;
	}
	*ids = jv_array_append(*ids, jv_string(id));
}

/* Write one receipt: 0, or -1 when it cannot be written. A launch without
 * its evidence must not go on (fail closed): L->rc->lost hears of it
 * first (gl-run ends there, exit 2, receipt.h), then the caller stops. */
static int write_receipt(const struct gl_launcher *L, struct gl_launch_ev *ev, const char *state,
			 jv extra, jv *ids)
{
	if (!L->rc) {
		jv_free(extra);
		return 0;
	}
	char id[65];
	autofail struct gl_fail f = {0};
	if (gl_receipt_write(L->rc, ev, state, extra, id, &f) < 0) {
		char *detail = gl_xasprintf("cannot write a receipt: %s", f.detail ? f.detail : "?");
		if (L->rc->lost)
			L->rc->lost(detail);
		free(detail);
		return -1;
	}
	gl_ids_add(ids, id);
	return 0;
}

static jv why(const char *binding, const char *detail)
{
	autofree char *d = gl_sanitize(detail ? detail : "", strlen(detail ? detail : ""));
	if (strlen(d) > 1024)
		d[1024] = 0;
	return JV_OBJECT(jv_string("binding"), jv_string(binding), jv_string("detail"), jv_string(d));
}

int gl_launch_reject(const struct gl_launcher *L, const char *release, const char *binding,
		     const char *detail, jv *ids)
{
	if (!L->rc || !release || !gl_sha256_hex_ok(release, strlen(release)))
		return 0;
	struct gl_launch_ev ev;
	gl_launch_ev_init(&ev, release);
	return write_receipt(L, &ev, "rejected", why(binding, detail), ids);
}

/* A receipt that could not be written refuses the launch (write_receipt). */
static int receipt_lost(struct gl_fail *f)
{
	return gl_fail(f, GL_E_IO, "cannot write a receipt");
}

/* Step 1 (launch.h): admission, or a "rejected" receipt. */
static int admit(const struct gl_launcher *L, const struct gl_launch_spec *spec,
		 struct gl_launch_ev *ev, struct gl_admit *a, jv *ids, struct gl_fail *f)
{
	autofail struct gl_fail af = {0};
	enum gl_admit_status as = gl_admit_open(L->releases_dir, ev->release, spec->entry, a, &af);
	if (as != GL_ADMIT_OK) {
		const char *aerr = af.detail;
		if (write_receipt(L, ev, "rejected", why(gl_admit_binding(as), aerr), ids) < 0)
			return receipt_lost(f);
		return gl_fail(f, GL_E_REJECTED, "release refused at admission (%s): %s",
			       gl_admit_binding(as), aerr);
	}
	memcpy(ev->target_sha256, a->target_sha256, 65);
	memcpy(ev->manifest_sha256, a->manifest_sha256, 65);
	memcpy(ev->tree_sha256, a->tree_sha256, 65);
	if (spec->config) /* the operator's args and env are part of what launched */
		gl_config_digest(spec->config, ev->config_sha256);
	ev->target = gl_xstrdup(a->target);
	return 0;
}

/* Step 2 failed before the exec: SPEC §9 fail closed, a restriction not
 * installed, nothing ran ("bootstrap_failed"). */
static int bootstrap_failed(const struct gl_launcher *L, struct gl_launch_ev *ev,
			    enum gl_launch_step st, const char *lerr, jv *ids, struct gl_fail *f)
{
	const char *missing = gl_receipt_missing(st, ev->enf->landlock_abi);
	autofree char *d = gl_sanitize(lerr ? lerr : "", strlen(lerr ? lerr : ""));
	if (strlen(d) > 1024)
		d[1024] = 0;
	if (write_receipt(L, ev, "bootstrap_failed",
			  JV_OBJECT(jv_string("step"), jv_string(gl_launch_step_name(st)),
				    jv_string("missing"), JV_ARRAY(jv_string(missing)),
				    jv_string("detail"), jv_string(d)),
			  ids) < 0)
		return receipt_lost(f);
	return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "bootstrap_failed: %s is missing: %s", missing,
		       lerr ? lerr : "");
}

/* extra (consumed) with an "exited" receipt's fields: exit code c (or
 * -signal), closing ev's launch. */
static jv exited_fields(jv extra, int c, bool stopped, const struct gl_launch_ev *ev)
{
	jv ex = c >= 0 ? JV_OBJECT(jv_string("code"), jv_number(c))
		       : JV_OBJECT(jv_string("signal"), jv_number(-c));
	extra = jv_object_set(extra, jv_string("exit"), ex);
	extra = jv_object_set(extra, jv_string("stopped_by_host"), jv_bool(stopped));
	extra = jv_object_set(extra, jv_string("closes"), jv_string(ev->launched_id));
	return jv_object_set(extra, jv_string("launched_at"), jv_number((double)ev->launched_at));
}

/* Step 2 after the enforced exec: the release's own initialisation failed,
 * launch and exit records, as the seed's "tool error" case. */
static int init_failed(const struct gl_launcher *L, const struct gl_germline *g,
		       struct gl_launch_ev *ev, enum gl_launch_step st, const char *lerr, jv *ids,
		       struct gl_fail *f)
{
	int c = 0;
	if (g->reaped)
		c = WIFEXITED(g->wait_status) ? WEXITSTATUS(g->wait_status) : -WTERMSIG(g->wait_status);
	bool stopped = g->reaped && WIFSIGNALED(g->wait_status) && WTERMSIG(g->wait_status) == SIGKILL;
	if (write_receipt(L, ev, "exited", exited_fields(why("initialisation", lerr), c, stopped, ev),
			  ids) < 0)
		return receipt_lost(f);
	return gl_fail(f, GL_E_LAUNCH, "%s: %s", gl_launch_step_name(st), lerr ? lerr : "failed");
}

/* Step 3: initialisation read the tree; is it still what was hashed? */
static int readmit(const struct gl_launcher *L, struct gl_germline *g, struct gl_launch_ev *ev,
		   struct gl_admit *a, jv *ids, struct gl_fail *f)
{
	autofail struct gl_fail af = {0};
	enum gl_admit_status as = gl_admit_recheck(a, &af);
	gl_admit_close(a);
	if (as == GL_ADMIT_OK)
		return 0;
	const char *aerr = af.detail;
	int c;
	bool stopped;
	gl_germline_end(g, &c, &stopped);
	if (write_receipt(L, ev, "exited",
			  exited_fields(why(gl_admit_binding(as), aerr), c, stopped, ev), ids) < 0)
		return receipt_lost(f);
	return gl_fail(f, GL_E_REJECTED, "release refused after initialisation (%s): %s",
		       gl_admit_binding(as), aerr);
}

/* rejected, bootstrap_failed, launch or io in *f */
int gl_launch_release(const struct gl_launcher *L, const struct gl_launch_spec *spec,
		      const char *release, struct gl_germline *g, struct gl_launch_ev *ev, jv *ids,
		      struct gl_fail *f)
{
	gl_launch_ev_init(ev, release);
	struct gl_admit a;
	if (admit(L, spec, ev, &a, ids, f) < 0)
		return -1;
	struct gl_launch_spec s = *spec;
	s.min_landlock_abi = L->profile->min_landlock_abi;
	s.profile = strcmp(L->profile->name, "full") ? L->profile->name : NULL;
	autofail struct gl_fail lf = {0};
	enum gl_launch_step st = gl_germline_launch(&s, g, &lf);
	const char *lerr = lf.detail; /* NULL when it launched */
	memcpy(ev->interpreter_sha256, g->interpreter_sha256, 65);
	ev->enf = &g->enf;
	int rc;
	if (st != GL_LAUNCH_OK && !g->exec_observed) {
		rc = bootstrap_failed(L, ev, st, lerr, ids, f);
	} else if (write_receipt(L, ev, "fully_enforced", jv_null(), ids) < 0) {
		/* every restriction installed, the exec observed, its receipt lost */
		gl_germline_stop(g);
		rc = receipt_lost(f);
	} else if (st != GL_LAUNCH_OK) {
		rc = init_failed(L, g, ev, st, lerr, ids, f);
	} else {
		return readmit(L, g, ev, &a, ids, f);
	}
	gl_admit_close(&a);
	return rc;
}

int gl_launch_end(const struct gl_launcher *L, struct gl_germline *g, struct gl_launch_ev *ev,
		  jv *ids)
{
	int c;
	bool stopped;
	gl_germline_end(g, &c, &stopped);
	int rc = 0;
	if (ev->launched_id[0])
		rc = write_receipt(L, ev, "exited", exited_fields(jv_object(), c, stopped, ev), ids);
	free((char *)ev->target);
	ev->target = NULL;
	return rc;
}

/* ---- runtime exec ------------------------------------------------------ */

static jv exit_fields(int ws, bool stopped, const struct gl_launch_ev *ev)
{
	/* not reaped (cannot happen after gl_copy_kill): the SIGKILL it was sent */
	jv ex = ws >= 0 && WIFEXITED(ws) ? JV_OBJECT(jv_string("code"), jv_number(WEXITSTATUS(ws)))
					 : JV_OBJECT(jv_string("signal"),
						     jv_number(ws >= 0 ? WTERMSIG(ws) : SIGKILL));
	return JV_OBJECT(jv_string("exit"), ex, jv_string("stopped_by_host"), jv_bool(stopped),
			 jv_string("closes"), jv_string(ev->launched_id), jv_string("launched_at"),
			 jv_number((double)ev->launched_at));
}

static jv bootstrap_fields(const char *missing, const char *detail)
{
	autofree char *d = gl_sanitize(detail ? detail : "", strlen(detail ? detail : ""));
	if (strlen(d) > 1024)
		d[1024] = 0;
	return JV_OBJECT(jv_string("step"), jv_string(missing), jv_string("missing"),
			 JV_ARRAY(jv_string(missing)), jv_string("detail"), jv_string(d));
}

int gl_launch_exec_refused(const struct gl_launcher *L, const char *release,
			   const struct gl_exec *x, const char *detail, jv *ids)
{
	const char *b = x->fail_binding ? x->fail_binding : "release";
	if (x->fail_rejected)
		return gl_launch_reject(L, release, b, detail, ids);
	if (!L->rc || !release || !gl_sha256_hex_ok(release, strlen(release)))
		return 0;
	struct gl_launch_ev ev;
	gl_launch_ev_init(&ev, release);
	return write_receipt(L, &ev, "bootstrap_failed", bootstrap_fields(b, detail), ids);
}

/* entry[0] as the receipt names it: relative to the release, else absolute. */
static char *exec_target(const struct gl_exec *x)
{
	size_t n = strlen(x->release_dir);
	if (!strncmp(x->target_path, x->release_dir, n) && x->target_path[n] == '/')
		return gl_xstrdup(x->target_path + n + 1);
	return gl_xstrdup(x->target_path);
}

int gl_launch_exec_copy(const struct gl_launcher *L, const char *release,
			const struct gl_exec *x, int rc, const char *err, struct gl_launch_ev *ev,
			jv *ids)
{
	gl_launch_ev_init(ev, release);
	if (!L->rc || !release || !gl_sha256_hex_ok(release, strlen(release)))
		return 0;
	if (rc < 0 && x->fail_rejected)
		return write_receipt(L, ev, "rejected",
				     why(x->fail_binding ? x->fail_binding : "tree", err), ids);
	/* Seed 002's bindings for this launch: what ran is gl-exec-host (the
	 * "interpreter", executed from its retained descriptor) exec'ing
	 * entry[0] (the "target") from its own (docs/receipts.md). */
	memcpy(ev->target_sha256, x->target_sha256, 65);
	memcpy(ev->interpreter_sha256, x->host_sha256, 65);
	memcpy(ev->manifest_sha256, x->manifest_sha256, 65);
	memcpy(ev->tree_sha256, x->tree_sha256, 65);
	memcpy(ev->config_sha256, x->config_sha256, 65);
	ev->target = exec_target(x);
	ev->enf = &x->enf;
	int w;
	if (rc < 0)
		w = write_receipt(L, ev, "bootstrap_failed",
				  bootstrap_fields(x->fail_binding ? x->fail_binding : "exec", err), ids);
	else
		w = write_receipt(L, ev, "fully_enforced", jv_null(), ids); /* sets launched_id */
	if (rc < 0) {
		free((char *)ev->target);
		ev->target = NULL;
	}
	return w;
}

int gl_launch_exec_end(const struct gl_launcher *L, struct gl_launch_ev *ev, int wstatus, jv *ids)
{
	/* the broker ends every copy: SIGKILL after its result is a stop */
	bool stopped = wstatus < 0 || (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);
	int w = 0;
	if (L->rc && ev->launched_id[0])
		w = write_receipt(L, ev, "exited", exit_fields(wstatus, stopped, ev), ids);
	free((char *)ev->target);
	ev->target = NULL;
	ev->launched_id[0] = 0;
	return w;
}
