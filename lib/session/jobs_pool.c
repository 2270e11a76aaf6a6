/* jobs_pool.c — gl-run --jobs N: workers kept for further calls (issue 19;
 * docs/design/run.md "Workers").
 *
 * A worker forked for a python germline's call (jobs_worker.c) waits on its
 * call pipe once its record is sent. The next call goes to it rather than
 * to a new fork when the session's registry is still the one it was forked
 * with (gl_session_fingerprint: no launch, loss, eviction, discovery or
 * pool change since); it then reads the call's line again and takes the
 * germline from its own copy of the registry (gl_session_call_adopt). What
 * this saves per call is the fork of gl-run, the copy-on-write and
 * file-page faults of a fresh address space on both sides, and an exit
 * (docs/performance.md "Kept workers").
 *
 * A reused worker holds nothing a copy reaches: copies are forked by the
 * germline, not by it, and talk to it over their own channels; what is left
 * of an earlier call in its memory is what gl-run --jobs 1 keeps in its one
 * process (the broker is trusted: A3). A worker a cancel was sent to is
 * never given another call: its control stays cancelled, its cancel thread
 * has ended, or the byte is still in its pipe. */
#define _GNU_SOURCE
#include "session/jobs_impl.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/live.h"
#include "sandbox/sandbox.h"
#include "session/session_impl.h"

int gl_worker_end(struct gl_jobs *J, struct worker *w, bool kill_it, unsigned *killed)
{
	if (w->pid <= 0)
		return -1;
	if (kill_it) /* an idle worker holds no lock, no copy: nothing is lost */
		kill(w->pid, SIGKILL);
	int *fds[] = {&w->fd, &w->req, &w->cfd};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] >= 0)
			close(gl_steal_fd(fds[i]));
	int ws = 0;
	while (waitpid(w->pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (killed) { /* what it left: its live copies, its cgroup slots */
		*killed = gl_live_reap(w->pid);
		gl_cg_reclaim(&J->s->cg, w->pid);
	}
	w->pid = -1;
	return ws;
}

/* Send jb's call to idle worker w: true when all of it was written. */
static bool give(const struct job *jb, const struct worker *w)
{
	autobuf struct gl_buf ids = {0};
	gl_json_dump(&ids, jb->k.ids);
	struct call_head h = {.line_len = jb->line.len, .ids_len = ids.len, .lane = jb->lane};
	/* SIGPIPE is ignored (gl_stdio_init): a dead worker is EPIPE here */
	return gl_write_all(w->req, &h, sizeof h) == 0 &&
	       gl_write_all(w->req, jb->line.data, jb->line.len) == 0 &&
	       gl_write_all(w->req, ids.data, ids.len) == 0;
}

/* A GL_TESTING build's switch NAME=1, the damage of tests/jobs-reuse.bats
 * and tests/serve-mcp-jobs.bats: GL_TEST_JOBS_STALE, a worker given calls
 * whatever became of the germlines it was forked with;
 * GL_TEST_JOBS_KEEP_CANCELLED, a worker kept after a cancel (its control
 * still says cancelled, its cancel thread is gone). Never on in gl-run. */
static bool switched_off(const char *name)
{
#ifdef GL_TESTING
	const char *off = getenv(name);
	return off && !strcmp(off, "1");
#else
	(void)name;
	return false;
#endif
}

int gl_job_reuse(struct gl_jobs *J, struct job *jb)
{
	uint64_t print = gl_session_fingerprint(J->s);
	while (J->nidle > 0) {
		struct worker w = J->idle[--J->nidle]; /* the last idle: its pages the warmest */
		unsigned killed;
		if ((w.print != print && !switched_off("GL_TEST_JOBS_STALE")) || !give(jb, &w)) {
			gl_worker_end(J, &w, true, &killed);
			continue;
		}
		w.calls++;
		jb->w = w;
		return 0;
	}
	return -1;
}

void gl_job_release(struct gl_jobs *J, struct job *jb)
{
	struct worker w = jb->w;
	jb->w = (struct worker){.pid = -1, .fd = -1, .req = -1, .cfd = -1};
	unsigned killed;
	bool spent = w.spent && !switched_off("GL_TEST_JOBS_KEEP_CANCELLED");
	if (w.req < 0 || spent || w.calls >= GL_JOBS_WORKER_CALLS || J->nidle >= J->n)
		gl_worker_end(J, &w, true, &killed);
	else
		J->idle[J->nidle++] = w;
}

void gl_jobs_end_idle(struct gl_jobs *J)
{
	unsigned killed;
	while (J->nidle > 0)
		gl_worker_end(J, &J->idle[--J->nidle], true, &killed);
}
