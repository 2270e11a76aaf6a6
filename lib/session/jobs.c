/* jobs.c — gl-run --jobs N: the dispatcher in the main process and one
 * worker process per call (see jobs.h; docs/design/run.md "Workers"). */
#define _GNU_SOURCE
#include "session/jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/slots.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "json/msg.h"
#include "runtime/receipt.h"
#include "json/log.h"
#include "sandbox/live.h"
#include "sandbox/sandbox.h"
#include "session/session_impl.h"

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
	struct gl_buf msg;
	int64_t t0;
	jv rec; /* J_DONE: the record */
};

struct jobs {
	struct gl_session *s;
	unsigned n;
	bool unordered, nokeys;
	bool fatal; /* a worker stopped as gl-run stops (exit 2): no new call */
	struct job **q; /* every call held, in input order */
	size_t nq;
	unsigned long seq; /* calls read so far */
	unsigned running;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Must calls of one release run one at a time? With one persistent
 * process per release (confined, sigifc, sigpin: it serves one call) and
 * with --pool (the germline's one pooled copy), yes. Otherwise a
 * germline serves copies of several calls at once, each call in its lane:
 * its copies are number GL_COPY_PID + lane in the germline's PID
 * namespace, a number that depends on the call's input position only, so
 * neither the germline nor a copy learns from it what other calls do
 * (docs/sandbox.md "The pid counter"). Two calls of one lane wait for
 * each other like calls of one slot. */
static bool one_per_release(const struct gl_session *s)
{
	return s->broker.pool || s->run == GL_RUN_CONFINED || s->run == GL_RUN_SIGIFC ||
	       s->run == GL_RUN_SIGPIN;
}

/* jb's keys and horizon set from its plan (Algorithm 1: one copy per
 * group, each reading and writing the slot of its horizon). */
static void job_keys(const struct jobs *J, struct job *jb)
{
	const struct gl_session_call *k = &jb->k;
	size_t ng = k->have_plan ? k->plan.ngroup : 0;
	jb->keys = gl_xcalloc(ng + 1, sizeof *jb->keys);
	jb->keys[jb->nkeys++] = one_per_release(J->s)
				    ? gl_xasprintf("r:%s", k->c.release)
				    : gl_xasprintf("r:%s#%u", k->c.release, jb->lane);
	char **ids = gl_xcalloc(ng + 1, sizeof *ids);
	size_t nid = 0;
	for (size_t g = 0; g < ng; g++) {
		char id[65];
		char *err = NULL;
		if (gl_slot_horizon_id(&k->plan.group[g].horizon, id, &err) < 0) {
			free(err); /* the broker refuses it; the release key orders it */
			continue;
		}
		jb->keys[jb->nkeys++] = gl_xasprintf("h:%s/%s", k->c.release, id);
		ids[nid++] = gl_xstrdup(id);
	}
	qsort(ids, nid, sizeof *ids, cmp_str);
	struct gl_buf b = {0};
	for (size_t i = 0; i < nid; i++) {
		if (i == 0 || strcmp(ids[i], ids[i - 1])) {
			gl_buf_adds(&b, ids[i]);
			gl_buf_addc(&b, ',');
			jb->nh++;
		}
		free(ids[i]);
	}
	free(ids);
	gl_buf_addc(&b, 0);
	jb->hset = b.data;
}

static bool keys_meet(const struct job *a, const struct job *b)
{
	for (size_t i = 0; i < a->nkeys; i++)
		for (size_t j = 0; j < b->nkeys; j++)
			if (!strcmp(a->keys[i], b->keys[j]))
				return true;
	return false;
}

/* "same-clearance": copies of one horizon only run beside copies of that
 * horizon (a call of no group runs beside any). */
static bool same_clearance(const struct job *a, const struct job *b)
{
	if (!a->nh || !b->nh)
		return true;
	return a->nh == 1 && b->nh == 1 && !strcmp(a->hset, b->hset);
}

/* May queued call q[i] start now? */
static bool may_start(const struct jobs *J, size_t i)
{
	const struct job *jb = J->q[i];
	if (J->running >= J->n)
		return false;
	enum gl_concurrency cc = J->s->pol->concurrency;
	if (cc == GL_CONCURRENCY_NONE && J->running > 0)
		return false;
	for (size_t e = 0; e < J->nq; e++) {
		const struct job *o = J->q[e];
		if (e == i || o->st == J_DONE)
			continue;
		if (e < i && !J->nokeys && keys_meet(o, jb))
			return false; /* input order per key */
		if (o->st == J_RUNNING && cc == GL_CONCURRENCY_SAME_CLEARANCE && !same_clearance(o, jb))
			return false;
	}
	return true;
}

static void job_done(struct jobs *J, struct job *jb)
{
	jv rec = gl_session_call_finish(J->s, &jb->k);
	double ms = (double)(gl_mono_ns() - jb->t0) / 1e6;
	jb->rec = jv_object_set(rec, jv_string("elapsed_ms"), jv_number(round(ms * 10) / 10));
	jb->st = J_DONE;
}

/* The worker: the call's broker part, its record to the main process,
 * then the end of a retired copy; never returns. */
GL_NORETURN static void worker(struct jobs *J, struct job *jb, int wfd, int kfd, pid_t parent)
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
static int start_worker(struct jobs *J, struct job *jb)
{
	int p[2], kp[2] = {-1, -1};
	const struct gl_receipts *rc = J->s->launcher.rc;
	fflush(NULL); /* nothing buffered is written twice */
	bool piped = pipe2(p, O_CLOEXEC) == 0;
	if (!piped || (rc && rc->key.sk && pipe2(kp, O_CLOEXEC) < 0)) {
		if (piped) {
			close(p[0]);
			close(p[1]);
		}
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
		if (kp[0] >= 0) {
			close(kp[0]);
			close(kp[1]);
		}
		jb->k.out = gl_session_refusal(jb->k.out, "internal",
					       jv_string("cannot fork the call's worker"));
		jb->k.state = GL_CALL_DONE;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (kp[1] >= 0)
			close(kp[1]);
		worker(J, jb, p[1], kp[0], parent);
	}
	close(p[1]);
	if (kp[0] >= 0) {
		close(kp[0]);
		gl_write_all(kp[1], rc->key.sk, 64); /* a pipe holds 64 bytes: no wait */
		close(kp[1]);
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	jb->pid = pid;
	jb->fd = p[0];
	jb->st = J_RUNNING;
	J->running++;
	if (jb->k.r) /* never evicted while a call runs on it (--max-resident) */
		jb->k.r->busy++;
	return 0;
}

/* Start every queued call that may start, in input order. */
static void dispatch(struct jobs *J)
{
	if (J->fatal)
		return;
	for (size_t i = 0; i < J->nq; i++) {
		struct job *jb = J->q[i];
		if (jb->st != J_QUEUED || !may_start(J, i))
			continue;
		jb->t0 = gl_mono_ns();
		gl_session_call_prepare(J->s, &jb->k);
		if (jb->k.state != GL_CALL_READY || start_worker(J, jb) < 0)
			job_done(J, jb);
	}
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
static void reap(struct jobs *J, struct job *jb)
{
	close(jb->fd);
	jb->fd = -1;
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
	job_done(J, jb);
}

/* Read what jb's worker wrote; reap it at its pipe's end. A message past
 * its bound kills the worker (its call is refused). */
static void drain_pipe(struct jobs *J, struct job *jb)
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

static void free_job(struct job *jb)
{
	gl_session_call_free(&jb->k);
	for (size_t i = 0; i < jb->nkeys; i++)
		free(jb->keys[i]);
	free(jb->keys);
	free(jb->hset);
	jv_free(jb->rec);
	free(jb);
}

/* Emit every record that is due: the head's while it is done, or any
 * done one with unordered. */
static void emit_due(struct jobs *J, gl_jobs_emit_fn emit, void *ctx)
{
	size_t w = 0;
	bool blocked = false;
	for (size_t i = 0; i < J->nq; i++) {
		struct job *jb = J->q[i];
		blocked = blocked || (jb->st != J_DONE && !J->unordered);
		if (jb->st == J_DONE && !blocked) {
			emit(jb->rec, ctx);
			jb->rec = jv_invalid();
			free_job(jb);
		} else {
			J->q[w++] = jb;
		}
	}
	J->nq = w;
	if (J->running == 0 && J->s->broker.pool)
		gl_session_idle(J->s); /* no worker holds a germline now */
}

/* Is a whole line already buffered (no read needed)? */
static bool line_buffered(const struct gl_lines *in)
{
	return in->eof || (in->pos < in->end && memchr(in->buf + in->pos, '\n', in->end - in->pos));
}

/* Wait for stdin (when want) or a worker's pipe; drain the pipes that are
 * ready. true when stdin is readable. */
static bool wait_io(struct jobs *J, bool want)
{
	struct pollfd pf[GL_JOBS_MAX + 1];
	struct job *of[GL_JOBS_MAX + 1];
	nfds_t n = 0;
	if (want)
		pf[n++] = (struct pollfd){.fd = 0, .events = POLLIN};
	for (size_t i = 0; i < J->nq && n < GL_JOBS_MAX + 1; i++)
		if (J->q[i]->st == J_RUNNING) {
			of[n] = J->q[i];
			pf[n++] = (struct pollfd){.fd = J->q[i]->fd, .events = POLLIN};
		}
	if (n == 0)
		return false;
	if (poll(pf, n, -1) < 0)
		return false; /* EINTR: look again */
	bool in = false;
	for (nfds_t i = 0; i < n; i++) {
		if (!pf[i].revents)
			continue;
		if (want && i == 0)
			in = true;
		else
			drain_pipe(J, of[i]);
	}
	return in;
}

static void add_line(struct jobs *J, const struct gl_buf *line)
{
	struct job *jb = gl_xcalloc(1, sizeof *jb);
	jb->fd = -1;
	jb->rec = jv_invalid();
	jb->t0 = gl_mono_ns();
	gl_session_call_read(J->s, line, &jb->k);
	J->seq++;
	if (jb->k.state == GL_CALL_READ) {
		jb->lane = (unsigned)((J->seq - 1) % GL_COPY_LANES); /* its input position */
		job_keys(J, jb);
		jb->st = J_QUEUED;
	} else {
		job_done(J, jb);
	}
	J->q[J->nq++] = jb;
}

/* --jobs 1: the calls one after another, as gl-run has always run them. */
static bool sequential(struct gl_session *s, gl_jobs_emit_fn emit, void *ctx)
{
	struct gl_lines in;
	gl_lines_init(&in, 0);
	autobuf struct gl_buf line = {0};
	bool too_long = false;
	while (gl_lines_record(&in, &line, &too_long)) {
		int64_t t0 = gl_mono_ns();
		jv rec = gl_session_line(s, &line);
		double ms = (double)(gl_mono_ns() - t0) / 1e6;
		emit(jv_object_set(rec, jv_string("elapsed_ms"), jv_number(round(ms * 10) / 10)), ctx);
		gl_session_idle(s);
	}
	return !too_long;
}

int gl_jobs_lines(struct gl_session *s, unsigned n, bool unordered, gl_jobs_emit_fn emit,
		  void *ctx)
{
	if (n <= 1)
		return sequential(s, emit, ctx) ? 0 : 1;
	gl_live_open(); /* before any worker (lib/sandbox/live.h) */
	struct jobs J = {.s = s, .n = n > GL_JOBS_MAX ? GL_JOBS_MAX : n, .unordered = unordered};
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_JOBS_NOKEYS");
	J.nokeys = off && !strcmp(off, "1"); /* the damage: calls of one slot at once */
#endif
	size_t held = (size_t)J.n * GL_JOBS_HELD_PER_JOB;
	J.q = gl_xcalloc(held, sizeof *J.q);
	struct gl_lines in;
	gl_lines_init(&in, 0);
	autobuf struct gl_buf line = {0};
	bool too_long = false, eof = false;
	while (!eof || J.nq) {
		dispatch(&J);
		J.unordered = J.unordered || J.fatal; /* what ended is written before the stop */
		emit_due(&J, emit, ctx);
		if (J.fatal && !J.running)
			break; /* the records of the calls that ended are written */
		bool want = !eof && !J.fatal && J.nq < held;
		if (want && (line_buffered(&in) || wait_io(&J, true))) {
			if (gl_lines_record(&in, &line, &too_long))
				add_line(&J, &line);
			else
				eof = true;
		} else if (!want && J.nq) {
			wait_io(&J, false);
		}
	}
	for (size_t i = 0; i < J.nq; i++) /* fatal: calls never started */
		free_job(J.q[i]);
	free(J.q);
	return J.fatal ? -1 : too_long ? 1 : 0;
}
