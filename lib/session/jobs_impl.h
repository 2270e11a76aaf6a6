/* jobs_impl.h — the dispatcher's insides, shared by jobs.c (the queue, its
 * keys, the API of jobs.h), jobs_worker.c (a worker process, its pipes)
 * and jobs_pool.c (workers kept for further calls). Not for other files. */
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

/* A call given to a reused worker: this head, the envelope's line, the
 * receipts' ids prepare gave it (JSON). */
struct call_head {
	uint64_t line_len, ids_len;
	uint32_t lane;
	uint32_t pad;
};

/* A worker process (jobs_worker.c): forked for a call; a worker of a
 * python germline's call then waits for the next call (jobs_pool.c). */
#define GL_JOBS_WORKER_CALLS 1000 /* calls one worker serves before it ends */
struct worker {
	pid_t pid;
	int fd;  /* the read end of its record pipe (nonblocking), or -1 */
	int req; /* the write end of its call pipe; -1: a worker of one call */
	int cfd; /* the write end of its cancel pipe, or -1 */
	uint64_t print; /* gl_session_fingerprint when it was forked */
	unsigned calls; /* calls given to it */
	bool spent;     /* given no further call: a cancel was sent to it */
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
	struct worker w; /* J_RUNNING: its worker */
	struct gl_buf line; /* the envelope, kept for a reused worker until it starts */
	struct gl_buf msg;
	int64_t t0;
	jv rec; /* J_DONE: the record */
	jv tag; /* the caller's (gl_jobs_add), or null */
	bool cancelled; /* gl_jobs_cancel killed its worker: no record */
	bool in_order;  /* uncleared under by_clearance: after every call before it */
	bool told;      /* J->finished was told its record arrived */
};

struct gl_jobs {
	struct gl_session *s;
	unsigned n;
	bool unordered, nokeys;
	bool by_clearance; /* gl_jobs_by_clearance: uncleared calls in order */
	gl_jobs_finished_fn finished;
	void *finished_ctx;
	bool fatal; /* a worker stopped as gl-run stops (exit 2): no new call */
	char public_hset[67]; /* a job's hset when its copies are all public */
	bool launch_rule;     /* launches and discoveries beside public copies only */
	struct job **q; /* every call held, in input order */
	size_t nq;
	unsigned long seq; /* calls read so far */
	unsigned running;
	size_t held; /* the bound on nq */
	bool reuse; /* workers of python germlines' calls serve further calls */
	struct worker idle[GL_JOBS_MAX]; /* reused workers waiting for a call */
	size_t nidle;
};

/* Fork jb's worker: 0, or -1 (jb is then done with a refusal). */
int gl_job_start(struct gl_jobs *J, struct job *jb);
/* Read what jb's worker wrote; at its pipe's end reap it (gl_job_done). */
void gl_job_drain(struct gl_jobs *J, struct job *jb);
/* Cancel jb's running call: a byte on its cancel pipe (the worker fires
 * the call's lib/core/cancel.h control), or SIGKILL when it has none. */
void gl_job_cancel(struct job *jb);
/* Give jb to an idle worker forked when the session's registry was what it
 * is now (jobs_pool.c): 0, or -1 (none: fork one). */
int gl_job_reuse(struct gl_jobs *J, struct job *jb);
/* jb's worker is done with its call: keep it for the next (idle) or end
 * it (jobs_pool.c). */
void gl_job_release(struct gl_jobs *J, struct job *jb);
/* End worker w (jobs_pool.c): SIGKILLed when kill_it, its pipes closed,
 * reaped; with killed, each copy still registered to it is killed (their
 * count in *killed) and its cgroup slots drained. Its wait status. */
int gl_worker_end(struct gl_jobs *J, struct worker *w, bool kill_it, unsigned *killed);
/* End every idle worker (gl_jobs_close). */
void gl_jobs_end_idle(struct gl_jobs *J);
/* jb's record from its call (jobs.c). */
void gl_job_done(struct gl_jobs *J, struct job *jb);

#endif

