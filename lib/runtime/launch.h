/* launch.h — a release's verified launch with admission and receipts
 * (SPEC §9; seed 002). gl-run's one way to start a germline:
 *
 *   1. admission (lib/runtime/admit.h): the release tree against its install record,
 *      from retained descriptors; refused -> a "rejected" receipt;
 *   2. gl_germline_launch with the profile's Landlock floor; a restriction
 *      not installed -> "bootstrap_failed" naming what is missing;
 *      the exec observed -> "fully_enforced";
 *   3. after initialisation, admission again from the same descriptors;
 *   4. when the germline ends or is stopped, "exited".
 * Without a receipt directory the same steps run and nothing is written. */
#ifndef GL_LAUNCH_H
#define GL_LAUNCH_H

#include <jv.h>

#include "runtime/germline.h"
#include "runtime/receipt.h"

struct gl_launcher {
	const struct gl_receipts *rc;      /* NULL: no receipts */
	const struct gl_profile *profile;  /* never NULL */
	const char *releases_dir;
};

/* A receipt that cannot be written is a returned failure: every call
 * below that writes one returns -1 then, after L->rc->lost heard of it
 * (lib/runtime/receipt.h; gl-run exits 2 there), and 0 otherwise. */

/* A "rejected" receipt for release (64 hex, else nothing is written) that
 * never got to a launch: binding names why (e.g. "suppressed", "release").
 * Its id is appended to *ids. */
int gl_launch_reject(const struct gl_launcher *L, const char *release, const char *binding,
		     const char *detail, jv *ids);

/* Admission, launch and receipts. On success g is up and ev (which the
 * caller keeps with g) holds the launch's bindings. Ids of the receipts
 * written are appended to *ids. -1 with f: rejected or bootstrap_failed,
 * or launch when the release's own initialisation failed after an
 * enforced exec; io when a receipt could not be written, the germline
 * then stopped. */
int gl_launch_release(const struct gl_launcher *L, const struct gl_launch_spec *spec,
		      const char *release, struct gl_germline *g, struct gl_launch_ev *ev, jv *ids,
		      struct gl_fail *f);

/* Stop g (if it is still alive) and write its "exited" receipt. */
int gl_launch_end(const struct gl_launcher *L, struct gl_germline *g, struct gl_launch_ev *ev,
		  jv *ids);

/* ---- runtime exec (lib/runtime/exec.h): every copy is its own verified launch ----
 *
 * gl_exec_open refused: a "rejected" receipt (x->fail_rejected, binding
 * x->fail_binding) or, when a restriction is unavailable, "bootstrap_failed".
 * x is the failed (closed) gl_exec; nothing is written without receipts. */
struct gl_exec;
int gl_launch_exec_refused(const struct gl_launcher *L, const char *release,
			   const struct gl_exec *x, const char *detail, jv *ids);

/* One copy of an exec release: ev is initialised with the bindings of x
 * (target_sha256 entry[0], interpreter_sha256 the retained gl-exec-host,
 * manifest_sha256, tree_sha256, the enforcement); rc is gl_exec_copy's:
 * 0 writes "fully_enforced", -1 "rejected" (a file changed since it was
 * verified) or "bootstrap_failed" naming x->fail_binding, with err. */
int gl_launch_exec_copy(const struct gl_launcher *L, const char *release,
			const struct gl_exec *x, int rc, const char *err, struct gl_launch_ev *ev,
			jv *ids);

/* The copy of ev was reaped with wait status wstatus (gl_exec_copy_done;
 * -1: unknown): its "exited" receipt, closing the launch receipt. */
int gl_launch_exec_end(const struct gl_launcher *L, struct gl_launch_ev *ev, int wstatus,
		       jv *ids);

/* Append id to *ids unless present or empty. */
void gl_ids_add(jv *ids, const char *id);

#endif
