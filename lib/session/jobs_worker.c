/* jobs_worker.c — gl-run --jobs N: a call's worker process and its pipe
 * (see jobs.h, jobs_impl.h; docs/design/run.md "Workers"). */
#define _GNU_SOURCE
#include "session/jobs_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/jsonl.h"
#include "json/log.h"
#include "json/msg.h"
#include "runtime/receipt.h"
#include "sandbox/live.h"
#include "sandbox/sandbox.h"
#include "core/cancel.h"
#include "session/session_impl.h"

/* The worker's cancel thread: a byte on its pipe (gl_job_cancel) fires the
 * call's control, as the stdin reader does for a call gl-run --serve-mcp
 * runs itself (lib/core/cancel.h): the armed copy is killed, no further
 * copy is forked, and the broker's protocol with the germline ends
 * cleanly, so the copies of other calls that germline serves go on. The
 * end of the pipe (gl-run gone) only ends the thread. */
struct cancel_arg {
	int fd;
	struct gl_cancel *c;
};
static struct cancel_arg cancel_arg;

static void *cancel_main(void *arg)
{
	struct cancel_arg *a = arg;
	char b;
	ssize_t n;
	while ((n = read(a->fd, &b, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		gl_cancel_fire(a->c);
	return NULL;
}

/* In the worker: the cancel thread on cfd (-1: no control). */
static void cancel_start(struct gl_session *s, int cfd)
{
	struct gl_cancel *c = s->broker.cancel;
	if (cfd < 0 || !c)
		return;
	gl_cancel_init(c); /* the main process's copy: a fresh mutex, nothing armed */
	cancel_arg = (struct cancel_arg){.fd = cfd, .c = c};
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, cancel_main, &cancel_arg))
		_exit(1); /* fail closed: its call is refused (no record) */
	pthread_attr_destroy(&at);
}

/* The worker: the call's broker part, its record to the main process,
 * then the end of a retired copy; never returns. */
GL_NORETURN static void worker(struct gl_jobs *J, struct job *jb, int wfd, int kfd, int cfd,
				 pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* gl-run gone: its calls too */
	prctl(PR_SET_NAME, "gl-run-job");  /* what ps shows (tests/jobs.bats finds it) */
	if (getppid() != parent)
		_exit(1);
	/* The host key is MADV_WIPEONFORK (lib/runtime/receipt.c): zeros here.
	 * A worker is the broker's own code and writes receipts (an exec
	 * copy's, a fresh launch's), so the main process sends it the key
	 * back; the flag stays on the pages, so the worker's own children
	 * (launch children) still get zeros. */
	const struct gl_receipts *rc = J->s->launcher.rc;
	if (kfd >= 0 && gl_read_full(kfd, rc->key.sk, 64) != 64)
		_exit(1);
	if (kfd >= 0)
		close(kfd);
	cancel_start(J->s, cfd);
	struct gl_session_call *k = &jb->k;
	J->s->broker.lane = jb->lane; /* this call's copies' number (germline.h) */
	gl_session_call_run(J->s, k);
	jv out = k->out;
	k->out = jv_invalid();
	if (!gl_jsonl_fits(out)) /* bounded: the main process reads at most MSG_MAX */
		out = gl_jsonl_oversized_result(out);
	/* the record is sent as its own JSON text, so that one as deep as a
	 * record may be (GL_JSON_MAX_DEPTH) is read back as it is */
	autobuf struct gl_buf ids = {0}, rec = {0};
	gl_json_dump(&ids, k->ids);
	gl_json_dump(&rec, out);
	jv_free(out);
	struct msg_head h = {.ids_len = ids.len, .out_len = rec.len,
			     .flags = {k->lost, k->sp_down, k->pool_empty}};
	if (h.ids_len + h.out_len <= MSG_MAX && gl_write_all(wfd, &h, sizeof h) == 0 &&
	    gl_write_all(wfd, ids.data, ids.len) == 0)
		gl_write_all(wfd, rec.data, rec.len);
	close(wfd);
	if (k->r && gl_runtime_forks(gl_germline_runtime(&k->r->g)))
		gl_germline_settle(&k->r->g); /* a retired copy ends before the next call forks */
	_exit(0);
}

/* Fork jb's worker: 0, or -1 (jb is then done with a refusal). */
int gl_job_start(struct gl_jobs *J, struct job *jb)
{
	int p[2], kp[2] = {-1, -1}, cp[2] = {-1, -1};
	const struct gl_receipts *rc = J->s->launcher.rc;
	fflush(NULL); /* nothing buffered is written twice */
	bool piped = pipe2(p, O_CLOEXEC) == 0;
	bool keyed = !rc || !rc->key.sk || pipe2(kp, O_CLOEXEC) == 0;
	bool cancels = !J->s->broker.cancel || pipe2(cp, O_CLOEXEC) == 0;
	if (!piped || !keyed || !cancels) {
		int *fds[] = {p, kp, cp};
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 2; j++)
				if ((i > 0 || piped) && fds[i][j] >= 0)
					close(fds[i][j]);
		jb->k.out = gl_session_refusal(jb->k.out, "internal",
					       jv_string("cannot make the worker's pipe"));
		jb->k.state = GL_CALL_DONE;
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		int *fds[] = {kp, cp};
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				if (fds[i][j] >= 0)
					close(fds[i][j]);
		jb->k.out = gl_session_refusal(jb->k.out, "internal",
					       jv_string("cannot fork the call's worker"));
		jb->k.state = GL_CALL_DONE;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (kp[1] >= 0)
			close(kp[1]);
		if (cp[1] >= 0)
			close(cp[1]);
		worker(J, jb, p[1], kp[0], cp[0], parent);
	}
	close(p[1]);
	if (kp[0] >= 0) {
		close(kp[0]);
		gl_write_all(kp[1], rc->key.sk, 64); /* a pipe holds 64 bytes: no wait */
		close(kp[1]);
	}
	if (cp[0] >= 0)
		close(cp[0]);
	jb->cfd = cp[1];
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	jb->pid = pid;
	jb->fd = p[0];
	jb->st = J_RUNNING;
	J->running++;
	if (jb->k.r) /* never evicted while a call runs on it (--max-resident) */
		jb->k.r->busy++;
	return 0;
}

/* The worker's message into jb's call: true when it was whole and well
 * formed. */
static bool take_msg(struct job *jb)
{
	struct msg_head h;
	if (jb->msg.len < sizeof h)
		return false;
	memcpy(&h, jb->msg.data, sizeof h);
	if (h.ids_len > MSG_MAX || h.out_len > MSG_MAX - h.ids_len ||
	    jb->msg.len != sizeof h + h.ids_len + h.out_len)
		return false;
	const char *p = jb->msg.data + sizeof h;
	jv ids = gl_json_parse(p, (size_t)h.ids_len);
	jv out = gl_json_parse(p + h.ids_len, (size_t)h.out_len);
	if (jv_get_kind(out) != JV_KIND_OBJECT || jv_get_kind(ids) != JV_KIND_ARRAY) {
		jv_free(out);
		jv_free(ids);
		return false;
	}
	struct gl_session_call *k = &jb->k;
	jv_free(k->out);
	k->out = out;
	jv_free(k->ids);
	k->ids = ids;
	k->lost = h.flags[0];
	k->sp_down = h.flags[1];
	k->pool_empty = h.flags[2];
	k->state = GL_CALL_RAN;
	return true;
}

/* What the main process must know of the germline after a worker used it:
 * a pooled copy the worker took is dropped here too (killed, awaited). */
static void pool_sync(struct gl_session_call *k)
{
	struct gl_germline *g = k->r ? &k->r->g : NULL;
	int sock, pidfd;
	if (g && k->pool_empty && g->pooled && gl_germline_take(g, &sock, &pidfd)) {
		close(sock);
		gl_copy_kill(pidfd);
		close(pidfd);
	}
}

/* jb's worker has closed its pipe: reap it; kill what it left (its live
 * copies, its cgroup slots); a worker that died without a whole record
 * gives its call a refusal, and its germline or baseline process, whose
 * protocol state is unknown, is stopped (relaunched at the next call). */
static void reap(struct gl_jobs *J, struct job *jb)
{
	close(jb->fd);
	jb->fd = -1;
	if (jb->cfd >= 0)
		close(jb->cfd);
	jb->cfd = -1;
	int ws = 0;
	while (waitpid(jb->pid, &ws, 0) < 0 && errno == EINTR)
		;
	bool noreap = false;
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_JOBS_NOREAP");
	noreap = off && !strcmp(off, "1"); /* the damage: a dead worker's copy runs on */
#endif
	unsigned killed = noreap ? 0 : gl_live_reap(jb->pid);
	if (!noreap)
		gl_cg_reclaim(&J->s->cg, jb->pid);
	J->running--;
	struct gl_session_call *k = &jb->k;
	if (k->r && k->r->busy)
		k->r->busy--;
	if (!take_msg(jb)) {
		char why[64];
		if (WIFSIGNALED(ws))
			snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(ws));
		else
			snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(ws));
		k->out = gl_session_refusal(
		    k->out, "internal",
		    jv_string_fmt("the call's worker process ended without a record (%s); "
				  "%u of its copies killed",
				  why, killed));
		k->state = GL_CALL_RAN;
		k->lost = !noreap && !gl_session_baseline(J->s);
		k->sp_down = gl_session_baseline(J->s) && J->s->run != GL_RUN_FRESH;
		k->pool_empty = true;
		/* a worker that stopped where gl-run stops (gl_die: a receipt not
		 * written, out of memory) stops the session as one call would */
		J->fatal = J->fatal || (WIFEXITED(ws) && WEXITSTATUS(ws) == GL_EXIT_USAGE);
		gl_log_event("worker_lost", JV_OBJECT(jv_string("release"), jv_string(k->c.release),
						      jv_string("detail"), jv_string(why)));
	}
	gl_buf_free(&jb->msg);
	pool_sync(k);
	gl_job_done(J, jb);
}

/* Read what jb's worker wrote; reap it at its pipe's end. A message past
 * its bound kills the worker (its call is refused). */
void gl_job_drain(struct gl_jobs *J, struct job *jb)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(jb->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		if (jb->msg.len + (size_t)n > MSG_MAX + sizeof(struct msg_head)) {
			kill(jb->pid, SIGKILL);
			gl_buf_free(&jb->msg);
			break;
		}
		gl_buf_add(&jb->msg, buf, (size_t)n);
	}
	reap(J, jb);
}


void gl_job_cancel(struct job *jb)
{
	if (jb->cfd >= 0 && write(jb->cfd, "c", 1) == 1)
		return; /* the worker ends its call (cancel_main) */
	kill(jb->pid, SIGKILL); /* no control: the worker dies; reap() cleans up */
}
