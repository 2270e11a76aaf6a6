/* jobs.h — gl-run --jobs N (issue 19; docs/gl-run.md "--jobs"; docs/design/
 * run.md "Workers"): up to N calls in flight, each call's broker part in a
 * worker process (libjq's jv refcounts are not atomic, so never threads),
 * forked for it or kept from an earlier call of a python germline while
 * the registry is unchanged (jobs_pool.c), everything that changes the
 * session's registry in the main process (lib/session/session.h: read,
 * prepare, finish).
 *
 * Ordering: a call's keys are its release's copy lane ("r:<release>#<lane>",
 * the lane its input position mod GL_COPY_LANES, whose copies are number
 * GL_COPY_PID + lane in the germline's PID namespace; the release alone
 * with --pool and in the confined, sigifc and sigpin baselines) and each
 * horizon its plan's groups use (the slot GL_HOME/slots/<release>/<horizon
 * id> of lib/broker/slots.c). A call whose keys meet those of a call in
 * flight or queued before it waits, so each slot's read, call and commit
 * keep their input order; a function whose manifest declares "state":
 * "none" (lib/release/manifest.h, enforced by the broker) reads and writes
 * no slot, so its calls have no horizon key and calls of one slot overlap.
 * One germline serves copies of several calls at once (docs/design/run.md
 * "Workers"), and calls to different releases run in parallel. The
 * policy's "concurrency" narrows this (lib/plan/policy.h). Records
 * come out in input order (a head that is still running holds the rest,
 * at most GL_JOBS_HELD_PER_JOB × N calls are held: stdin is not read
 * past that), or as they finish with unordered. */
#ifndef GL_JOBS_H
#define GL_JOBS_H

#include <jv.h>
#include <poll.h>
#include <stddef.h>
#include <stdbool.h>

#include "session/session.h"

#define GL_JOBS_MAX 64
#define GL_JOBS_HELD_PER_JOB 16 /* calls held (queued, running, done) per job slot */

/* Each record as it is due (consumed), with its elapsed_ms: true when it
 * was written. */
typedef bool (*gl_jobs_emit_fn)(jv rec, void *ctx);

/* The dispatcher, step by step, for a front end with its own input
 * (gl-run --serve-mcp, cmd/gl-run/serve_mcp.c): open it, add one envelope
 * line at a time with a caller's tag (MCP: the JSON-RPC id), poll the
 * descriptors gl_jobs_fds gives beside its own, and step: step reads the
 * workers that are ready, reaps those done, starts what may start and
 * hands each due record with its tag to done. */
struct gl_jobs;
/* A record (consumed) that is due, with its call's tag (consumed). */
typedef void (*gl_jobs_done_fn)(jv rec, jv tag, void *ctx);

/* Up to n calls at once (n clamped to 1..GL_JOBS_MAX; even 1 forks a
 * worker per call); records in input order, or as they finish. */
struct gl_jobs *gl_jobs_open(struct gl_session *s, unsigned n, bool unordered);
/* gl-run --serve-mcp (docs/mcp.md "Concurrency"): records as they finish
 * only for calls whose consumers are cleared for everything their copies
 * can reach (gl_session_call_cleared); any other call's record waits for
 * every call before it, and every call after it waits for it, so the
 * order of answers never tells a consumer which of two calls ended first
 * where a copy it is not cleared for chose when. finished (may be NULL)
 * is told a call's tag (its own: it may replace it) once its record has
 * arrived while it still waits for an earlier call: its progress stops
 * there, not when it is handed out. After gl_jobs_open with unordered, before any add. */
typedef void (*gl_jobs_finished_fn)(jv *tag, void *ctx);
void gl_jobs_by_clearance(struct gl_jobs *J, gl_jobs_finished_fn finished, void *ctx);
/* May another call be added (fewer than GL_JOBS_HELD_PER_JOB × n held)? */
bool gl_jobs_room(const struct gl_jobs *J);
/* Calls held: queued, running, or done and not yet handed out. */
size_t gl_jobs_pending(const struct gl_jobs *J);
/* One envelope line (borrowed); tag consumed. A line refused when read
 * (not JSON, a bad envelope) is done at once: the next step hands it out.
 * true when its record is handed out as it finishes (unordered, and
 * under gl_jobs_by_clearance the call is cleared), false when in input
 * order. */
bool gl_jobs_add(struct gl_jobs *J, const struct gl_buf *line, jv tag);
/* The running workers' pipes into pf (POLLIN), at most max: how many. */
size_t gl_jobs_fds(const struct gl_jobs *J, struct pollfd *pf, size_t max);
/* pf[0..n): what poll said of gl_jobs_fds' entries (NULL, 0: nothing
 * read). Never blocks but on a worker's message already under way. */
void gl_jobs_step(struct gl_jobs *J, const struct pollfd *pf, size_t n, gl_jobs_done_fn done,
		  void *ctx);
/* The call whose tag is id (borrowed), or an object with "id" id (the
 * first held, not yet cancelled): a queued one is dropped; a running one
 * is cancelled (its worker fires the session's lib/core/cancel.h control:
 * its copy is killed, no further copy forked; with no control the worker
 * is killed: SIGKILL); either way its record is never handed out. Its tag
 * (a copy), or jv_invalid() when no such call is held. */
jv gl_jobs_cancel(struct gl_jobs *J, jv id);
/* Wait for every call, hand out every record, free J. */
void gl_jobs_close(struct gl_jobs *J, gl_jobs_done_fn done, void *ctx);

/* The JSON Lines loop of gl-run over stdin with up to n calls at once
 * (n in 1..GL_JOBS_MAX; 1 is gl_session_line call after call; else a loop
 * over the step API above). Returns when
 * stdin ends and every call's record is emitted: 0, or 1 when a line was
 * too long (its "too_long" record is written when it is read), or -1 when
 * a worker stopped with exit status 2 (it said why on stderr: a receipt it
 * could not write, out of memory): no further call was started, the
 * records of those that ended were written, and gl-run exits 2 as it does
 * without --jobs. */
int gl_jobs_lines(struct gl_session *s, unsigned n, bool unordered, gl_jobs_emit_fn emit,
		  void *ctx);

#endif
