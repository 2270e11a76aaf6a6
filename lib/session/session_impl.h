/* session_impl.h — lib/session's own: the resident record of a release and
 * the steps the per-line call (line.c) and the baselines (baseline.c) share
 * with the registry (resident.c). Not for cmd/. */
#ifndef GL_SESSION_IMPL_H
#define GL_SESSION_IMPL_H

#include "session/session.h"

struct gl_resident {
	char release[65];
	jv manifest; /* owned: read_paths point into it */
	const char **read_paths;
	struct gl_germline g;
	struct gl_launch_ev ev; /* what g's launch bound (its receipts) */
	bool up;
	struct gl_session_proc sp; /* confined, sigifc, sigpin: the release's process */
	bool discovered;           /* mcp-stdio: the discovery check passed (lib/broker/mcp.h) */
	jv tools;                  /* owned: the server's tools/list, once discovered */
	jv server;                 /* owned: its serverInfo and instructions (gl_mcp_discover), or null */
	char *refused;             /* the discovery check refused the release: why */
	char *rp_refused;          /* its read_paths are not granted: why (lib/plan/readpaths.h) */
	uint64_t used;             /* s->tick at its last use: the LRU order of eviction */
	unsigned busy;             /* calls in flight on it (gl-run --jobs): never evicted then */
};

/* The resident record of a release (created on first use). NULL with f
 * when there are too many (launch) or its read_paths are not granted
 * (read_paths). */
struct gl_resident *gl_session_resident(struct gl_session *s, const char *release, jv manifest,
					struct gl_fail *f);

/* Does r hold a persistent process (a python germline, or the confined,
 * sigifc or sigpin process)? Those are what --max-resident counts; an
 * exec release's retained tree (no process) and fresh's per-call germline
 * are not. */
bool gl_session_is_resident(const struct gl_resident *r);

/* Room for r's persistent process before it is started: 0 at once when r
 * already holds one (a resident hit); else, with s->max_resident releases
 * resident, the least recently used idle one (busy 0) is stopped as at the
 * session's end. -1 with f (launch, the detail naming --max-resident) when
 * every resident is busy: never more than K. */
int gl_session_room(struct gl_session *s, const struct gl_resident *r, struct gl_fail *f);

/* Would a call of release have to wait for room (gl-run --jobs)? When K
 * releases are resident and each has a call in flight, gl_session_room
 * would refuse it, and whether it is refused would depend on other calls
 * in flight: one bit about them in the record of a consumer not cleared
 * for them. The call waits in the queue instead until one of them ends
 * (lib/session/jobs.c may_start). A release not yet seen (its runtime
 * unknown) counts as needing room. GL_TESTING, GL_TEST_ROOM_WAIT_OFF=1:
 * never (the refusal, the damage). */
bool gl_session_room_waits(const struct gl_session *s, const char *release);

/* Would a call of release run release code before its copies (germline
 * run only): its germline's launch (the import) or, for mcp-stdio, its
 * discovery copy (the server's start)? Both hold no data and what they
 * keep reaches every later copy of every horizon (A2), so gl-run --jobs
 * starts such a call under "same-clearance" only while every running
 * call's copies are public (lib/session/jobs.c may_start). A release not
 * yet seen would. */
bool gl_session_starts_release(const struct gl_session *s, const char *release);

/* What a launch of r's release needs; *dir (malloc'd) holds release_dir. */
struct gl_launch_spec gl_session_launch_spec(const struct gl_session *s,
					     const struct gl_resident *r, char **dir);

/* A verified launch of r's release into g, admitted and receipted
 * (lib/runtime/launch.h). 0, or -1 with f (rejected, bootstrap_failed,
 * launch, io). */
int gl_session_launch(struct gl_session *s, const struct gl_resident *r, struct gl_germline *g,
		      struct gl_launch_ev *ev, struct gl_fail *f);

/* The germline of a release, launched on first use (and again after it
 * was lost). NULL with f when the launch fails (gl_session_resident's,
 * gl_session_room's and gl_session_launch's codes). */
struct gl_resident *gl_session_germline(struct gl_session *s, const char *release, jv manifest,
					struct gl_fail *f);

/* An mcp-stdio release's discovery check (SPEC §11; lib/broker/mcp.h),
 * once per germline, before its first call: 0 when r may serve calls,
 * else -1 with *f (discovery_changed, germline or germline_check). */
int gl_session_mcp_ready(struct gl_session *s, struct gl_resident *r, struct gl_fail *f);

/* The baselines (SPEC §6; paper §VII-A "Runtimes"), baseline.c: the part
 * before the call (the release's record, an exec release's verification,
 * the persistent process of confined, sigifc and sigpin started): *r, and
 * jv_invalid() or the refusal (owned); then the call on *r: the body of the
 * record (owned). */
jv gl_session_baseline_prepare(struct gl_session *s, const struct gl_call *c, jv manifest,
			       struct gl_resident **r);
jv gl_session_baseline_run(struct gl_session *s, const struct gl_call *c,
			   const struct gl_plan *plan, struct gl_resident *r);

/* Is the release suppressed by the dampening state (re-read when it
 * changed)? 1, 0, or -1 with f (damp: fail closed). */
int gl_session_suppressed(struct gl_session *s, const char *release, struct gl_fail *f);

/* The record's "enforcement" object (owned) for e. */
jv gl_session_enforcement(const struct gl_enforcement *e);

/* THE refusal record of gl-run (SPEC §2, §6): out (consumed; jv_object()
 * for a new record) with "ok":false, "error":code and "detail" (consumed;
 * a string, or what jq said of a bad line) merged in. Every refusal of
 * lib/session is built here. */
jv gl_session_refusal(jv out, const char *code, jv detail);

#endif
