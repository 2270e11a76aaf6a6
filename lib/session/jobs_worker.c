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

/* Run k and send its record on wfd: the head (the lengths, the flags), the
 * receipts' ids and the record, each its own JSON text, so that a record
 * as deep as a record may be (GL_JSON_MAX_DEPTH) is read back as it is. A
 * retired copy has ended before it is sent, so the next call of its slot
 * or lane never forks while it dies. false: nothing, or not all of it, was
 * sent (bounded: the main process reads at most MSG_MAX). */
static bool run_call(struct gl_session *s, struct gl_session_call *k, int wfd)
{
	gl_session_call_run(s, k);
	if (k->r && gl_runtime_forks(gl_germline_runtime(&k->r->g)))
		gl_germline_settle(&k->r->g);
	jv out = k->out;
	k->out = jv_invalid();
	if (!gl_jsonl_fits(out))
		out = gl_jsonl_oversized_result(out);
	autobuf struct gl_buf ids = {0}, rec = {0};
	gl_json_dump(&ids, k->ids);
	gl_json_dump(&rec, out);
	jv_free(out);
	struct msg_head h = {.ids_len = ids.len, .out_len = rec.len,
			     .flags = {k->lost, k->sp_down, k->pool_empty}};
	return h.ids_len + h.out_len <= MSG_MAX && gl_write_all(wfd, &h, sizeof h) == 0 &&
	       gl_write_all(wfd, ids.data, ids.len) == 0 && gl_write_all(wfd, rec.data, rec.len) == 0;
}

/* n bytes from fd into b (NUL-terminated): false at EOF or an error. */
static bool read_into(int fd, struct gl_buf *b, size_t n)
{
	gl_buf_reserve(b, n + 1);
	if (gl_read_full(fd, b->data, n) != (ssize_t)n)
		return false;
	b->len = n;
	b->data[n] = 0;
	return true;
}

/* A reused worker (jobs_pool.c) between calls: the next call from req, the
 * line the main process read and prepared, run on this process's copy of
 * the registry (gl_session_call_adopt); the end of req (gl-run ended it,
 * or is gone) ends it. Never returns. Idle, it is named gl-run-idle. */
GL_NORETURN static void serve_calls(struct gl_session *s, int req, int wfd)
{
	for (;;) {
		prctl(PR_SET_NAME, "gl-run-idle");
		struct call_head h;
		ssize_t got = gl_read_full(req, &h, sizeof h);
		if (got == 0)
			_exit(0);
		if (got != (ssize_t)sizeof h || h.line_len > GL_JSON_LINE_MAX || h.ids_len > MSG_MAX ||
		    h.lane >= GL_COPY_LANES)
			_exit(1);
		autobuf struct gl_buf line = {0}, idt = {0};
		if (!read_into(req, &line, h.line_len) || !read_into(req, &idt, h.ids_len))
			_exit(1);
		prctl(PR_SET_NAME, "gl-run-job");
		jv ids = gl_json_parse(idt.data, idt.len);
		if (jv_get_kind(ids) != JV_KIND_ARRAY)
			_exit(1);
		struct gl_session_call k;
		gl_session_call_adopt(s, &line, ids, &k);
		s->broker.lane = h.lane; /* this call's copies' number (germline.h) */
		if (!run_call(s, &k, wfd))
			_exit(0); /* the main process refuses the call */
		gl_session_call_free(&k);
	}
}

/* The worker: the call's broker part, its record to the main process,
 * then (req >= 0) further calls; never returns. */
GL_NORETURN static void worker(struct gl_jobs *J, struct job *jb, int wfd, int kfd, int cfd,
				 int req, pid_t parent)
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
	J->s->broker.lane = jb->lane; /* this call's copies' number (germline.h) */
	if (!run_call(J->s, &jb->k, wfd) || req < 0)
		_exit(0);
	/* J's other calls are the main process's: not this one's to free */
	serve_calls(J->s, req, wfd);
}

static void close_pipes(int (*pp)[2], size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < 2; j++)
			if (pp[i][j] >= 0)
				close(gl_steal_fd(&pp[i][j]));
}

static int refuse_start(struct job *jb, const char *why)
{
	jb->k.out = gl_session_refusal(jb->k.out, "internal", jv_string(why));
	jb->k.state = GL_CALL_DONE;
	return -1;
}

static void running(struct gl_jobs *J, struct job *jb)
{
	jb->st = J_RUNNING;
	J->running++;
	if (jb->k.r) /* never evicted while a call runs on it (--max-resident) */
		jb->k.r->busy++;
	gl_buf_free(&jb->line);
}

/* Start jb on an idle worker (jobs_pool.c), or fork its worker: 0, or -1
 * (jb is then done with a refusal). A worker of a python germline's call
 * gets a call pipe and serves further calls; any other is one call's. */
int gl_job_start(struct gl_jobs *J, struct job *jb)
{
	bool reusable = J->reuse && jb->k.r && !jb->k.r->g.exec;
	if (reusable && gl_job_reuse(J, jb) == 0) {
		running(J, jb);
		return 0;
	}
	enum { REC, KEY, CANCEL, REQ, NPIPE };
	int pp[NPIPE][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
	const struct gl_receipts *rc = J->s->launcher.rc;
	fflush(NULL); /* nothing buffered is written twice */
	bool want[NPIPE] = {true, rc && rc->key.sk, J->s->broker.cancel != NULL, reusable};
	for (int i = 0; i < NPIPE; i++)
		if (want[i] && pipe2(pp[i], O_CLOEXEC) < 0) {
			close_pipes(pp, NPIPE);
			return refuse_start(jb, "cannot make the worker's pipe");
		}
	/* what a kept worker inherits (jobs_pool.c) */
	uint64_t print = reusable ? gl_session_fingerprint(J->s) : 0;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close_pipes(pp, NPIPE);
		return refuse_start(jb, "cannot fork the call's worker");
	}
	if (pid == 0) {
		for (int i = 0; i < NPIPE; i++) /* the worker's ends: the write end of REC */
			if (pp[i][i == REC ? 0 : 1] >= 0)
				close(gl_steal_fd(&pp[i][i == REC ? 0 : 1]));
		worker(J, jb, pp[REC][1], pp[KEY][0], pp[CANCEL][0], pp[REQ][0], parent);
	}
	close(gl_steal_fd(&pp[REC][1]));
	if (pp[KEY][1] >= 0) /* a pipe holds 64 bytes: no wait */
		gl_write_all(pp[KEY][1], rc->key.sk, 64);
	for (int i = KEY; i < NPIPE; i++)
		if (pp[i][0] >= 0)
			close(gl_steal_fd(&pp[i][0]));
	if (pp[KEY][1] >= 0)
		close(gl_steal_fd(&pp[KEY][1]));
	fcntl(pp[REC][0], F_SETFL, O_NONBLOCK);
	jb->w = (struct worker){.pid = pid, .fd = pp[REC][0], .req = pp[REQ][1],
				.cfd = pp[CANCEL][1], .print = print, .calls = 1};
	running(J, jb);
	return 0;
}

/* How far jb's worker's message is: 1 whole, 0 not yet, -1 longer than
 * its head says or malformed. */
static int msg_state(const struct job *jb)
{
	struct msg_head h;
	if (jb->msg.len < sizeof h)
		return 0;
	memcpy(&h, jb->msg.data, sizeof h);
	if (h.ids_len > MSG_MAX || h.out_len > MSG_MAX - h.ids_len)
		return -1;
	size_t want = sizeof h + h.ids_len + h.out_len;
	return jb->msg.len == want ? 1 : jb->msg.len < want ? 0 : -1;
}

/* The worker's message into jb's call: true when it was whole and well
 * formed. */
static bool take_msg(struct job *jb)
{
	if (msg_state(jb) != 1)
		return false;
	struct msg_head h;
	memcpy(&h, jb->msg.data, sizeof h);
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

/* jb's call has its record, or its worker ended without one. */
static void call_ended(struct gl_jobs *J, struct job *jb)
{
	J->running--;
	struct gl_session_call *k = &jb->k;
	if (k->r && k->r->busy)
		k->r->busy--;
	gl_buf_free(&jb->msg);
	pool_sync(k);
	gl_job_done(J, jb);
}

/* jb's worker has closed its pipe: reap it; kill what it left (its live
 * copies, its cgroup slots); a worker that died without a whole record
 * gives its call a refusal, and its germline or baseline process, whose
 * protocol state is unknown, is stopped (relaunched at the next call). */
static void reap(struct gl_jobs *J, struct job *jb)
{
	bool noreap = false;
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_JOBS_NOREAP");
	noreap = off && !strcmp(off, "1"); /* the damage: a dead worker's copy runs on */
#endif
	unsigned killed = 0;
	int ws = gl_worker_end(J, &jb->w, false, noreap ? NULL : &killed);
	struct gl_session_call *k = &jb->k;
	if (!take_msg(jb)) {
		char why[64];
		if (WIFSIGNALED(ws))
			snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(ws));
		else
			snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(ws));
		/* How and when the worker ended may follow what its copies did:
		 * labelled with everything they could see (SPEC §6) */
		k->out = gl_session_refusal(
		    k->out, "internal",
		    jv_string_fmt("the call's worker process ended without a record (%s); "
				  "%u of its copies killed",
				  why, killed));
		k->out = jv_object_set(k->out, jv_string("labels"),
				       JV_OBJECT(jv_string("call"), gl_session_call_bound(J->s, k)));
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
	call_ended(J, jb);
}

/* Read what jb's worker wrote. A worker of one call is reaped at its
 * pipe's end; a reused one's call ends with its whole message (the worker
 * then waits for the next: gl_job_release). A message past its bound, or
 * one that does not parse, kills the worker (its call is refused). */
void gl_job_drain(struct gl_jobs *J, struct job *jb)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(jb->w.fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (jb->w.req < 0 || msg_state(jb) == 0)
				return;
			if (take_msg(jb)) {
				gl_job_release(J, jb);
				call_ended(J, jb);
				return;
			}
			kill(jb->w.pid, SIGKILL); /* malformed: refused when reaped */
			break;
		}
		if (n <= 0)
			break;
		if (jb->msg.len + (size_t)n > MSG_MAX + sizeof(struct msg_head)) {
			kill(jb->w.pid, SIGKILL);
			gl_buf_free(&jb->msg);
			break;
		}
		gl_buf_add(&jb->msg, buf, (size_t)n);
	}
	reap(J, jb);
}

void gl_job_cancel(struct job *jb)
{
	jb->w.spent = true; /* its cancel pipe may hold the byte: no further call */
	if (jb->w.cfd >= 0 && write(jb->w.cfd, "c", 1) == 1)
		return; /* the worker ends its call (cancel_main) */
	kill(jb->w.pid, SIGKILL); /* no control: the worker dies; reap() cleans up */
}
