/* jobs.h — gl-run --jobs N (issue 19; docs/gl-run.md "--jobs"; docs/design/
 * run.md "Workers"): up to N calls in flight, each call's broker part in a
 * worker process forked for it (libjq's jv refcounts are not atomic, so
 * never threads), everything that changes the session's registry in the
 * main process (lib/session/session.h: read, prepare, finish).
 *
 * Ordering: a call's keys are its release and each horizon its plan's
 * groups use (the slot GL_HOME/slots/<release>/<horizon id> of
 * lib/broker/slots.c). A call whose keys meet those of a call in flight
 * or queued before it waits, so each release's calls, and each slot's
 * read, call and commit, keep their input order. Each call has a lane, its
 * input position mod GL_COPY_LANES, and the release's key is release+lane:
 * one germline serves copies of several calls at once, each numbered
 * GL_COPY_PID + lane in its PID namespace, forked under the shared fork
 * lock and known to G1 by the live table (lib/sandbox/live.h; docs/design/
 * run.md). With --pool and the persistent baselines (confined, sigifc,
 * sigpin: one process serves one call) the key is the release alone.
 * The policy's "concurrency" narrows this (lib/plan/policy.h). Records
 * come out in input order (a head that is still running holds the rest,
 * at most GL_JOBS_HELD_PER_JOB × N calls are held: stdin is not read
 * past that), or as they finish with unordered. */
#ifndef GL_JOBS_H
#define GL_JOBS_H

#include <jv.h>
#include <stdbool.h>

#include "session/session.h"

#define GL_JOBS_MAX 64
#define GL_JOBS_HELD_PER_JOB 16 /* calls held (queued, running, done) per job slot */

/* Each record as it is due (consumed), with its elapsed_ms: true when it
 * was written. */
typedef bool (*gl_jobs_emit_fn)(jv rec, void *ctx);

/* The JSON Lines loop of gl-run over stdin with up to n calls at once
 * (n in 1..GL_JOBS_MAX; 1 is gl_session_line call after call). Returns when
 * stdin ends and every call's record is emitted: 0, or 1 when a line was
 * too long (its "too_long" record is written when it is read), or -1 when
 * a worker stopped with exit status 2 (it said why on stderr: a receipt it
 * could not write, out of memory): no further call was started, the
 * records of those that ended were written, and gl-run exits 2 as it does
 * without --jobs. */
int gl_jobs_lines(struct gl_session *s, unsigned n, bool unordered, gl_jobs_emit_fn emit,
		   void *ctx);

#endif
