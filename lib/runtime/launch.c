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

/* Write one receipt; a receipt that cannot be written stops gl-run: a
 * launch without its evidence must not go on (fail closed). */
static void write_or_die(const struct gl_launcher *L, struct gl_launch_ev *ev, const char *state,
			 jv extra, jv *ids)
{
	if (!L->rc) {
		jv_free(extra);
		return;
	}
	char id[65];
	char *err = NULL;
	if (gl_receipt_write(L->rc, ev, state, extra, id, &err) < 0)
		gl_die(GL_EXIT_USAGE, "cannot write a receipt: %s", err);
	gl_ids_add(ids, id);
}

static jv why(const char *binding, const char *detail)
{
	autofree char *d = gl_sanitize(detail ? detail : "", strlen(detail ? detail : ""));
	if (strlen(d) > 1024)
		d[1024] = 0;
	return JV_OBJECT(jv_string("binding"), jv_string(binding), jv_string("detail"), jv_string(d));
}

void gl_launch_reject(const struct gl_launcher *L, const char *release, const char *binding,
		      const char *detail, jv *ids)
{
	if (!L->rc || !release || !gl_sha256_hex_ok(release, strlen(release)))
		return;
	struct gl_launch_ev ev;
	gl_launch_ev_init(&ev, release);
	write_or_die(L, &ev, "rejected", why(binding, detail), ids);
}

int gl_launch_release(const struct gl_launcher *L, const struct gl_launch_spec *spec,
		      const char *release, struct gl_germline *g, struct gl_launch_ev *ev, jv *ids,
		      char **err, const char **code)
{
	gl_launch_ev_init(ev, release);
	struct gl_admit a;
	char *aerr = NULL;
	enum gl_admit_status as = gl_admit_open(L->releases_dir, release, spec->entry, &a, &aerr);
	if (as != GL_ADMIT_OK) {
		write_or_die(L, ev, "rejected", why(gl_admit_binding(as), aerr), ids);
		*err = gl_xasprintf("release refused at admission (%s): %s", gl_admit_binding(as), aerr);
		*code = "rejected";
		free(aerr);
		return -1;
	}
	memcpy(ev->target_sha256, a.target_sha256, 65);
	memcpy(ev->manifest_sha256, a.manifest_sha256, 65);
	memcpy(ev->tree_sha256, a.tree_sha256, 65);
	ev->target = gl_xstrdup(a.target);

	struct gl_launch_spec s = *spec;
	s.min_landlock_abi = L->profile->min_landlock_abi;
	s.profile = strcmp(L->profile->name, "full") ? L->profile->name : NULL;
	char *lerr = NULL;
	enum gl_launch_step st = gl_germline_launch(&s, g, &lerr);
	memcpy(ev->interpreter_sha256, g->interpreter_sha256, 65);
	ev->enf = &g->enf;
	if (st != GL_LAUNCH_OK && !g->exec_observed) {
		/* SPEC §9 fail closed: a restriction not installed, nothing ran. */
		const char *missing = gl_receipt_missing(st, g->enf.landlock_abi);
		autofree char *d = gl_sanitize(lerr ? lerr : "", strlen(lerr ? lerr : ""));
		if (strlen(d) > 1024)
			d[1024] = 0;
		write_or_die(L, ev, "bootstrap_failed",
			     JV_OBJECT(jv_string("step"), jv_string(gl_launch_step_name(st)),
				       jv_string("missing"), JV_ARRAY(jv_string(missing)),
				       jv_string("detail"), jv_string(d)),
			     ids);
		*err = gl_xasprintf("bootstrap_failed: %s is missing: %s", missing, lerr ? lerr : "");
		*code = "bootstrap_failed";
		free(lerr);
		gl_admit_close(&a);
		return -1;
	}
	/* The exec was observed with every restriction installed. */
	write_or_die(L, ev, "fully_enforced", jv_null(), ids);
	if (st != GL_LAUNCH_OK) {
		/* The release's own initialisation failed after the enforced exec:
		 * launch and exit records, as the seed's "tool error" case. */
		int code_ = 0;
		if (g->reaped)
			code_ = WIFEXITED(g->wait_status) ? WEXITSTATUS(g->wait_status)
							  : -WTERMSIG(g->wait_status);
		jv ex = code_ >= 0 ? JV_OBJECT(jv_string("code"), jv_number(code_))
				   : JV_OBJECT(jv_string("signal"), jv_number(-code_));
		jv extra = why("initialisation", lerr);
		extra = jv_object_set(extra, jv_string("exit"), ex);
		extra = jv_object_set(extra, jv_string("stopped_by_host"),
				      jv_bool(g->reaped && WIFSIGNALED(g->wait_status) &&
					      WTERMSIG(g->wait_status) == SIGKILL));
		extra = jv_object_set(extra, jv_string("closes"), jv_string(ev->launched_id));
		extra = jv_object_set(extra, jv_string("launched_at"), jv_number((double)ev->launched_at));
		write_or_die(L, ev, "exited", extra, ids);
		*err = gl_xasprintf("%s: %s", gl_launch_step_name(st), lerr ? lerr : "failed");
		*code = "launch";
		free(lerr);
		gl_admit_close(&a);
		return -1;
	}
	/* Initialisation read the tree: is it still what was hashed? */
	as = gl_admit_recheck(&a, &aerr);
	gl_admit_close(&a);
	if (as != GL_ADMIT_OK) {
		int c;
		bool stopped;
		gl_germline_end(g, &c, &stopped);
		jv ex = c >= 0 ? JV_OBJECT(jv_string("code"), jv_number(c))
			       : JV_OBJECT(jv_string("signal"), jv_number(-c));
		jv extra = why(gl_admit_binding(as), aerr);
		extra = jv_object_set(extra, jv_string("exit"), ex);
		extra = jv_object_set(extra, jv_string("stopped_by_host"), jv_bool(stopped));
		extra = jv_object_set(extra, jv_string("closes"), jv_string(ev->launched_id));
		extra = jv_object_set(extra, jv_string("launched_at"), jv_number((double)ev->launched_at));
		write_or_die(L, ev, "exited", extra, ids);
		*err = gl_xasprintf("release refused after initialisation (%s): %s",
				    gl_admit_binding(as), aerr);
		*code = "rejected";
		free(aerr);
		return -1;
	}
	return 0;
}

void gl_launch_end(const struct gl_launcher *L, struct gl_germline *g, struct gl_launch_ev *ev,
		   jv *ids)
{
	int c;
	bool stopped;
	gl_germline_end(g, &c, &stopped);
	jv ex = c >= 0 ? JV_OBJECT(jv_string("code"), jv_number(c))
		       : JV_OBJECT(jv_string("signal"), jv_number(-c));
	if (ev->launched_id[0])
		write_or_die(L, ev, "exited",
			     JV_OBJECT(jv_string("exit"), ex, jv_string("stopped_by_host"),
				       jv_bool(stopped), jv_string("closes"), jv_string(ev->launched_id),
				       jv_string("launched_at"), jv_number((double)ev->launched_at)),
			     ids);
	else
		jv_free(ex);
	free((char *)ev->target);
	ev->target = NULL;
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

void gl_launch_exec_refused(const struct gl_launcher *L, const char *release,
			    const struct gl_exec *x, const char *detail, jv *ids)
{
	const char *b = x->fail_binding ? x->fail_binding : "release";
	if (x->fail_rejected) {
		gl_launch_reject(L, release, b, detail, ids);
		return;
	}
	if (!L->rc || !release || !gl_sha256_hex_ok(release, strlen(release)))
		return;
	struct gl_launch_ev ev;
	gl_launch_ev_init(&ev, release);
	write_or_die(L, &ev, "bootstrap_failed", bootstrap_fields(b, detail), ids);
}

/* entry[0] as the receipt names it: relative to the release, else absolute. */
static char *exec_target(const struct gl_exec *x)
{
	size_t n = strlen(x->release_dir);
	if (!strncmp(x->target_path, x->release_dir, n) && x->target_path[n] == '/')
		return gl_xstrdup(x->target_path + n + 1);
	return gl_xstrdup(x->target_path);
}

void gl_launch_exec_copy(const struct gl_launcher *L, const char *release,
			 const struct gl_exec *x, int rc, const char *err, struct gl_launch_ev *ev,
			 jv *ids)
{
	gl_launch_ev_init(ev, release);
	if (!L->rc || !release || !gl_sha256_hex_ok(release, strlen(release)))
		return;
	if (rc < 0 && x->fail_rejected) {
		write_or_die(L, ev, "rejected", why(x->fail_binding ? x->fail_binding : "tree", err),
			     ids);
		return;
	}
	/* Seed 002's bindings for this launch: what ran is gl-exec-host (the
	 * "interpreter", executed from its retained descriptor) exec'ing
	 * entry[0] (the "target") from its own (docs/receipts.md). */
	memcpy(ev->target_sha256, x->target_sha256, 65);
	memcpy(ev->interpreter_sha256, x->host_sha256, 65);
	memcpy(ev->manifest_sha256, x->manifest_sha256, 65);
	memcpy(ev->tree_sha256, x->tree_sha256, 65);
	ev->target = exec_target(x);
	ev->enf = &x->enf;
	if (rc < 0)
		write_or_die(L, ev, "bootstrap_failed",
			     bootstrap_fields(x->fail_binding ? x->fail_binding : "exec", err), ids);
	else
		write_or_die(L, ev, "fully_enforced", jv_null(), ids); /* sets launched_id */
	if (rc < 0) {
		free((char *)ev->target);
		ev->target = NULL;
	}
}

void gl_launch_exec_end(const struct gl_launcher *L, struct gl_launch_ev *ev, int wstatus,
			jv *ids)
{
	/* the broker ends every copy: SIGKILL after its result is a stop */
	bool stopped = wstatus < 0 || (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);
	if (L->rc && ev->launched_id[0])
		write_or_die(L, ev, "exited", exit_fields(wstatus, stopped, ev), ids);
	free((char *)ev->target);
	ev->target = NULL;
	ev->launched_id[0] = 0;
}
