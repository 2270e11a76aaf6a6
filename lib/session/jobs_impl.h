/* jobs_impl.h — the dispatcher's insides, shared by jobs.c (the queue, its
 * keys, the API of jobs.h) and jobs_worker.c (one worker process per call
 * and its pipe). Not for other files. */
#ifndef GL_JOBS_IMPL_H
#define GL_JOBS_IMPL_H

#include <stdint.h>
#include <sys/types.h>

#include "json/json.h"
#include "session/jobs.h"

/* The worker's message: this head, the receipts' ids (JSON), the record
 * (JSON); both at most MSG_MAX bytes together. */
#define MSG_MAX ((size_t)GL_JSON_LINE_MAX + (1u << 20))
struct msg_head {
	uint64_t ids_len, out_len;
	uint8_t flags[8]; /* lost, sp_down, pool_empty */
};

enum job_state { J_QUEUED, J_RUNNING, J_DONE };

struct job {
	struct gl_session_call k;
	enum job_state st;
	char **keys; /* "r:<release>[#lane]", "h:<release>/<horizon id>" */
	unsigned lane; /* input position mod GL_COPY_LANES (the copies' number) */
	size_t nkeys;
	char *hset; /* the horizon ids, sorted, joined; NULL: none */
	size_t nh;
	pid_t pid;
	int fd;
	int cfd; /* the write end of its cancel pipe, or -1 */
	struct gl_buf msg;
	int64_t t0;
	jv rec; /* J_DONE: the record */
	jv tag; /* the caller's (gl_jobs_add), or null */
	bool cancelled; /* gl_jobs_cancel killed its worker: no record */
};

struct gl_jobs {
	struct gl_session *s;
	unsigned n;
	bool unordered, nokeys;
	bool fatal; /* a worker stopped as gl-run stops (exit 2): no new call */
	struct job **q; /* every call held, in input order */
	size_t nq;
	unsigned long seq; /* calls read so far */
	unsigned running;
	size_t held; /* the bound on nq */
};

/* Fork jb's worker: 0, or -1 (jb is then done with a refusal). */
int gl_job_start(struct gl_jobs *J, struct job *jb);
/* Read what jb's worker wrote; at its pipe's end reap it (gl_job_done). */
void gl_job_drain(struct gl_jobs *J, struct job *jb);
/* Cancel jb's running call: a byte on its cancel pipe (the worker fires
 * the call's lib/core/cancel.h control), or SIGKILL when it has none. */
void gl_job_cancel(struct job *jb);
/* jb's record from its call (jobs.c). */
void gl_job_done(struct gl_jobs *J, struct job *jb);

#endif

