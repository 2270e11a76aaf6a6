/* jobs.c — gl-run --jobs N: the dispatcher in the main process and one
 * worker process per call (see jobs.h; docs/design/run.md "Workers"). */
#define _GNU_SOURCE
#include "session/jobs_impl.h"

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
#include "release/manifest.h"
#include "runtime/receipt.h"
#include "json/log.h"
#include "sandbox/live.h"
#include "sandbox/sandbox.h"
#include "session/session_impl.h"

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
 * group, each reading and writing the slot of its horizon). A function
 * whose signed manifest says "state": "none" reads and writes no slot
 * (the broker enforces it: lib/broker/broker.c keeps_no_state), so its
 * call takes no slot key and runs beside calls of the same slots; its
 * horizon set still counts for the policy's "concurrency" (a timing
 * channel between copies does not care whether they keep state). */
static void job_keys(const struct gl_jobs *J, struct job *jb)
{
	const struct gl_session_call *k = &jb->k;
	size_t ng = k->have_plan ? k->plan.ngroup : 0;
	bool slots = !gl_manifest_stateless(k->c.fn);
	jb->keys = gl_xcalloc(ng + 1, sizeof *jb->keys);
	jb->keys[jb->nkeys++] = one_per_release(J->s)
				    ? gl_xasprintf("r:%s", k->c.release)
				    : gl_xasprintf("r:%s#%u", k->c.release, jb->lane);
	char **ids = gl_xcalloc(ng + 1, sizeof *ids);
	size_t nid = 0;
	for (size_t g = 0; g < ng; g++) {
		char id[65];
		autofail struct gl_fail f = {0};
		if (gl_slot_horizon_id(&k->plan.group[g].horizon, id, &f) < 0)
			continue; /* the broker refuses it; the release key orders it */
		if (slots)
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
	}
	for (size_t i = 0; i < nid; i++) /* after: each is compared with the one before */
		free(ids[i]);
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

/* Are the copies of every running call public (horizon ∅), if any? */
static bool running_public(const struct gl_jobs *J)
{
	for (size_t e = 0; e < J->nq; e++) {
		const struct job *o = J->q[e];
		if (o->st == J_RUNNING && o->nh && strcmp(o->hset, J->public_hset))
			return false;
	}
	return true;
}

/* May queued call q[i] start now? *starts: it waits only because its
 * release's germline would start beside copies holding data. */
static bool may_start(const struct gl_jobs *J, size_t i, bool *starts)
{
	const struct job *jb = J->q[i];
	*starts = false;
	if (J->running >= J->n)
		return false;
	enum gl_concurrency cc = J->s->pol->concurrency;
	if (cc == GL_CONCURRENCY_NONE && J->running > 0)
		return false;
	/* "same-clearance" (paper A2): a germline's import, or its mcp-stdio
	 * discovery copy, runs release code that every later copy of every
	 * horizon inherits (its tool list: every consumer's); beside an hr
	 * copy it could learn what the copy modulates (CPU, caches) and keep
	 * it, so it starts as a copy of horizon ∅ would: beside public copies
	 * only */
	if (cc == GL_CONCURRENCY_SAME_CLEARANCE && J->launch_rule && J->running > 0 &&
	    gl_session_starts_release(J->s, jb->k.c.release) && !running_public(J)) {
		*starts = true;
		return false;
	}
	if (J->running > 0 && gl_session_room_waits(J->s, jb->k.c.release))
		return false; /* --max-resident: every resident busy; it waits, never refused */
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

void gl_job_done(struct gl_jobs *J, struct job *jb)
{
	jv rec = gl_session_call_finish(J->s, &jb->k);
	double ms = (double)(gl_mono_ns() - jb->t0) / 1e6;
	jb->rec = jv_object_set(rec, jv_string("elapsed_ms"), jv_number(round(ms * 10) / 10));
	jb->st = J_DONE;
}

/* Start every queued call that may start, in input order. */
static void dispatch(struct gl_jobs *J)
{
	if (J->fatal)
		return; /* a worker stopped where gl-run stops: no new call */
	for (size_t i = 0; i < J->nq; i++) {
		struct job *jb = J->q[i];
		bool starts = false;
		if (jb->st != J_QUEUED)
			continue;
		if (!may_start(J, i, &starts)) {
			if (starts)
				break; /* no later call passes it: the launch waits for no more */
			continue;
		}
		jb->t0 = gl_mono_ns();
		gl_session_call_prepare(J->s, &jb->k);
		if (jb->k.state != GL_CALL_READY || gl_job_start(J, jb) < 0)
			gl_job_done(J, jb);
	}
}

static void free_job(struct job *jb)
{
	gl_session_call_free(&jb->k);
	for (size_t i = 0; i < jb->nkeys; i++)
		free(jb->keys[i]);
	free(jb->keys);
	free(jb->hset);
	jv_free(jb->rec);
	jv_free(jb->tag);
	gl_buf_free(&jb->line);
	free(jb);
}

/* Hand every record that is due to done: the head's while it is done, or
 * any done one with unordered, where an in_order call (gl_jobs_by_clearance)
 * waits for every call before it and every call after it waits for it. A
 * cancelled call's record is dropped. */
static void emit_due(struct gl_jobs *J, gl_jobs_done_fn done, void *ctx)
{
	size_t w = 0;
	bool before = false, barrier = false; /* a call before is held; an in_order one */
	for (size_t i = 0; i < J->nq; i++) {
		struct job *jb = J->q[i];
		bool due = jb->st == J_DONE &&
			   (jb->cancelled || ((!J->unordered || jb->in_order) ? !before : !barrier));
		if (due) {
			if (!jb->cancelled) { /* handed out; a cancelled one's freed here */
				done(jb->rec, jb->tag, ctx);
				jb->rec = jb->tag = jv_invalid();
			}
			free_job(jb);
			continue;
		}
		if (jb->st == J_DONE && !jb->told && J->finished) {
			jb->told = true;
			J->finished(&jb->tag, J->finished_ctx);
		}
		J->q[w++] = jb;
		if (!jb->cancelled) {
			before = true;
			barrier = barrier || jb->in_order;
		}
	}
	J->nq = w;
	if (J->running == 0 && J->s->broker.pool)
		gl_session_idle(J->s); /* no worker holds a germline now */
}

struct gl_jobs *gl_jobs_open(struct gl_session *s, unsigned n, bool unordered)
{
	gl_live_open(); /* before any worker (lib/sandbox/live.h) */
	struct gl_jobs *J = gl_xcalloc(1, sizeof *J);
	J->s = s;
	J->n = n < 1 ? 1 : n > GL_JOBS_MAX ? GL_JOBS_MAX : n;
	J->unordered = unordered;
	struct gl_labels none = {0};
	autofail struct gl_fail f = {0};
	J->launch_rule = true;
	if (gl_slot_horizon_id(&none, J->public_hset, &f) == 0)
		strcat(J->public_hset, ","); /* as job_keys joins them */
	else
		J->public_hset[0] = '\0'; /* no running call counts as public: launches wait */
#ifdef GL_TESTING
	const char *lr = getenv("GL_TEST_LAUNCH_RULE_OFF");
	J->launch_rule = J->launch_rule && !(lr && !strcmp(lr, "1")); /* launches beside any */
	const char *off = getenv("GL_TEST_JOBS_NOKEYS");
	J->nokeys = off && !strcmp(off, "1"); /* the damage: calls of one slot at once */
#endif
	J->held = (size_t)J->n * GL_JOBS_HELD_PER_JOB;
	/* a worker serves further calls of python germlines; not with --pool
	 * (the pooled copy is the main process's) nor in the baselines, whose
	 * processes a call may stop (jobs_pool.c) */
	J->reuse = !gl_session_baseline(s) && !s->broker.pool;
#ifdef GL_TESTING
	const char *one = getenv("GL_TEST_JOBS_NOREUSE");
	J->reuse = J->reuse && !(one && !strcmp(one, "1")); /* a fork per call, as before */
#endif
	J->q = gl_xcalloc(J->held, sizeof *J->q);
	return J;
}

void gl_jobs_by_clearance(struct gl_jobs *J, gl_jobs_finished_fn finished, void *ctx)
{
	J->by_clearance = true;
	J->finished = finished;
	J->finished_ctx = ctx;
}

bool gl_jobs_room(const struct gl_jobs *J)
{
	return J->nq < J->held;
}

size_t gl_jobs_pending(const struct gl_jobs *J)
{
	return J->nq;
}

bool gl_jobs_add(struct gl_jobs *J, const struct gl_buf *line, jv tag)
{
	if (J->nq >= J->held) { /* the caller asked gl_jobs_room: never */
		jv_free(tag);
		return false;
	}
	struct job *jb = gl_xcalloc(1, sizeof *jb);
	jb->w = (struct worker){.pid = -1, .fd = -1, .req = -1, .cfd = -1};
	jb->rec = jv_invalid();
	jb->tag = tag;
	jb->t0 = gl_mono_ns();
	gl_session_call_read(J->s, line, &jb->k);
	if (J->reuse && jb->k.state == GL_CALL_READ) /* what a reused worker reads again */
		gl_buf_add(&jb->line, line->data, line->len);
	J->seq++;
	jb->in_order = J->by_clearance && !gl_session_call_cleared(J->s, &jb->k);
	if (jb->k.state == GL_CALL_READ) {
		jb->lane = (unsigned)((J->seq - 1) % GL_COPY_LANES); /* its input position */
		job_keys(J, jb);
		jb->st = J_QUEUED;
	} else {
		gl_job_done(J, jb);
	}
	J->q[J->nq++] = jb;
	return J->unordered && !jb->in_order;
}

size_t gl_jobs_fds(const struct gl_jobs *J, struct pollfd *pf, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < J->nq && n < max; i++)
		if (J->q[i]->st == J_RUNNING)
			pf[n++] = (struct pollfd){.fd = J->q[i]->w.fd, .events = POLLIN};
	return n;
}

void gl_jobs_step(struct gl_jobs *J, const struct pollfd *pf, size_t n, gl_jobs_done_fn done,
		  void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (!pf[i].revents)
			continue;
		for (size_t e = 0; e < J->nq; e++) /* by descriptor: the queue may have moved */
			if (J->q[e]->st == J_RUNNING && J->q[e]->w.fd == pf[i].fd) {
				gl_job_drain(J, J->q[e]);
				break;
			}
	}
	dispatch(J);
	emit_due(J, done, ctx);
}

/* Is jb's tag id (borrowed), or an object whose "id" is id? */
static bool tag_is(const struct job *jb, jv id)
{
	if (jv_equal(jv_copy(jb->tag), jv_copy(id)))
		return true;
	return jv_get_kind(jb->tag) == JV_KIND_OBJECT &&
	       jv_equal(gl_json_get(jb->tag, "id"), jv_copy(id));
}

jv gl_jobs_cancel(struct gl_jobs *J, jv id)
{
	for (size_t i = 0; i < J->nq; i++) {
		struct job *jb = J->q[i];
		if (jb->cancelled || !tag_is(jb, id))
			continue;
		jb->cancelled = true;
		if (jb->st == J_QUEUED) { /* never started: it never runs */
			jb->st = J_DONE;
		} else if (jb->st == J_RUNNING) {
			gl_job_cancel(jb);
		}
		return jv_copy(jb->tag);
	}
	return jv_invalid();
}

void gl_jobs_close(struct gl_jobs *J, gl_jobs_done_fn done, void *ctx)
{
	struct pollfd pf[GL_JOBS_MAX];
	for (;;) {
		gl_jobs_step(J, NULL, 0, done, ctx);
		size_t n = gl_jobs_fds(J, pf, GL_JOBS_MAX);
		if (n == 0)
			break; /* nothing runs: nothing is held either (gl_jobs_step) */
		if (poll(pf, n, -1) >= 0)
			gl_jobs_step(J, pf, n, done, ctx);
	}
	gl_jobs_end_idle(J);
	for (size_t i = 0; i < J->nq; i++)
		free_job(J->q[i]);
	free(J->q);
	free(J);
}

/* Is a whole line already buffered (no read needed)? */
static bool line_buffered(const struct gl_lines *in)
{
	return in->eof || (in->pos < in->end && memchr(in->buf + in->pos, '\n', in->end - in->pos));
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

struct lines_emit {
	gl_jobs_emit_fn emit;
	void *ctx;
};

static void lines_done(jv rec, jv tag, void *ctx)
{
	struct lines_emit *le = ctx;
	jv_free(tag);
	le->emit(rec, le->ctx);
}

int gl_jobs_lines(struct gl_session *s, unsigned n, bool unordered, gl_jobs_emit_fn emit,
		  void *ctx)
{
	if (n <= 1)
		return sequential(s, emit, ctx) ? 0 : 1;
	struct gl_jobs *J = gl_jobs_open(s, n, unordered);
	struct lines_emit le = {emit, ctx};
	struct gl_lines in;
	gl_lines_init(&in, 0);
	autobuf struct gl_buf line = {0};
	bool too_long = false, eof = false;
	struct pollfd pf[GL_JOBS_MAX + 1];
	while (!eof || gl_jobs_pending(J)) {
		gl_jobs_step(J, NULL, 0, lines_done, &le);
		J->unordered = J->unordered || J->fatal; /* what ended is written before the stop */
		if (J->fatal && !J->running)
			break; /* the records of the calls that ended are written */
		bool want = !eof && !J->fatal && gl_jobs_room(J);
		bool in_ready = want && line_buffered(&in);
		if (!in_ready) {
			nfds_t np = 0;
			if (want)
				pf[np++] = (struct pollfd){.fd = 0, .events = POLLIN};
			np += gl_jobs_fds(J, pf + np, GL_JOBS_MAX);
			if (np == 0 || poll(pf, np, -1) < 0)
				continue; /* EINTR: look again */
			in_ready = want && pf[0].revents;
			gl_jobs_step(J, pf + (want ? 1 : 0), np - (want ? 1 : 0), lines_done, &le);
		}
		if (in_ready) {
			if (gl_lines_record(&in, &line, &too_long))
				gl_jobs_add(J, &line, jv_null());
			else
				eof = true;
		}
	}
	bool fatal = J->fatal;
	gl_jobs_close(J, lines_done, &le);
	return fatal ? -1 : too_long ? 1 : 0;
}
