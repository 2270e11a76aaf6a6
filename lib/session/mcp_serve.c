/* mcp_serve.c — the stdio side of gl-run --serve-mcp; see mcp_serve.h. */
#define _GNU_SOURCE
#include "session/mcp_serve.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json/json.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "plan/policy.h"
#include "plan/readpaths.h"
#include "core/util.h"

struct queued {
	struct gl_mcp_in in;
	char *key; /* a request's id as JSON text, else NULL */
};

/* A call in flight with a progress token (the ticker's). */
struct tracked {
	char *key;                        /* its id as JSON text */
	char token[GL_MCP_TOKEN_MAX + 1]; /* its token's JSON text */
	int64_t due;                      /* the next notification (CLOCK_MONOTONIC ns) */
	long tick;
};

struct gl_mcp_io {
	int out_fd;
	int wake_fd;              /* an eventfd: the reader queued a message or ended */
	bool concurrent;          /* cancellations of started calls go to the main loop */
	struct tracked tr[GL_MCP_TRACK_MAX];
	unsigned ntr;
	struct gl_cancel *cancel;
	struct gl_rpc_reader rd;
	pthread_t reader, ticker;
	pthread_mutex_t mu, out_mu;
	pthread_cond_t cv;        /* the queue changed, the call began or ended, stop */
	struct queued q[GL_MCP_QUEUE_MAX];
	unsigned head, n;
	bool eof, stop;
	/* the running call */
	bool busy;
	char *key;                /* its id as JSON text */
	bool cancelled;
};

/* The JSON text of id (borrowed), malloc'd; NULL when it is no id. */
static char *id_key(jv id)
{
	jv_kind k = jv_get_kind(id);
	if (k != JV_KIND_STRING && k != JV_KIND_NUMBER)
		return NULL;
	struct gl_buf b = {0};
	gl_json_dump(&b, id);
	return b.data;
}

static long untrack(struct gl_mcp_io *io, const char *key);

/* A notifications/cancelled (msg borrowed): the running call's control is
 * fired, or a queued request with that id is dropped. Under io->mu. true
 * when the main loop is to see it (concurrent: a call it started). */
static bool on_cancel(struct gl_mcp_io *io, jv msg)
{
	jv p = gl_json_get(msg, "params");
	jv rid = jv_get_kind(p) == JV_KIND_OBJECT ? gl_json_get(p, "requestId") : jv_invalid();
	autofree char *key = id_key(rid);
	jv_free(rid);
	jv_free(p);
	if (!key)
		return false; /* malformed: ignored, as any notification we do not know */
	if (io->busy && io->key && !strcmp(key, io->key)) {
		io->cancelled = true;
		untrack(io, key); /* no progress after the cancellation */
		gl_cancel_fire(io->cancel);
		return false;
	}
	for (unsigned i = 0; i < io->n; i++) {
		struct queued *x = &io->q[(io->head + i) % GL_MCP_QUEUE_MAX];
		if (!x->key || strcmp(x->key, key))
			continue;
		/* not started: it never runs, and gets no answer */
		jv_free(x->in.msg);
		free(x->in.err);
		free(x->key);
		for (unsigned j = i; j + 1 < io->n; j++)
			io->q[(io->head + j) % GL_MCP_QUEUE_MAX] =
			    io->q[(io->head + j + 1) % GL_MCP_QUEUE_MAX];
		io->n--;
		return false;
	}
	return io->concurrent;
}

/* The test build's switch (GL_TEST_CANCEL_OFF, tests/serve-mcp-ops.bats):
 * cancellations are ignored like any notification, as before issue 17. */
static bool cancel_off(void)
{
#ifdef GL_TESTING
	return getenv("GL_TEST_CANCEL_OFF") != NULL;
#else
	return false;
#endif
}

static void wake(struct gl_mcp_io *io)
{
	uint64_t one = 1;
	while (write(io->wake_fd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

static void *reader_main(void *arg)
{
	struct gl_mcp_io *io = arg;
	for (;;) {
		struct queued x = {.in = {.msg = jv_invalid()}};
		struct gl_fail f = {0};
		x.in.st = gl_rpc_read(&io->rd, -1, GL_RPC_LINE_MAX, &x.in.msg, &x.in.kind, &f);
		x.in.err = f.detail; /* NULL when the line was read; x owns it */
		if (x.in.st == GL_RPC_EOF || x.in.st == GL_RPC_IO || x.in.st == GL_RPC_DEADLINE) {
			jv_free(x.in.msg);
			free(x.in.err);
			break;
		}
		pthread_mutex_lock(&io->mu);
		if (x.in.st == GL_RPC_OK && x.in.kind == GL_RPC_NOTIFICATION &&
		    !strcmp(gl_json_get_str(x.in.msg, "method"), "notifications/cancelled") &&
		    (cancel_off() || !on_cancel(io, x.in.msg))) { /* else: for the main loop */
			pthread_mutex_unlock(&io->mu);
			jv_free(x.in.msg);
			continue;
		}
		if (x.in.st == GL_RPC_OK && x.in.kind == GL_RPC_REQUEST) {
			jv id = gl_json_get(x.in.msg, "id");
			x.key = id_key(id);
			jv_free(id);
		}
		while (io->n == GL_MCP_QUEUE_MAX && !io->stop)
			pthread_cond_wait(&io->cv, &io->mu);
		if (io->stop) { /* never: the main loop stops after the end of input */
			pthread_mutex_unlock(&io->mu);
			jv_free(x.in.msg);
			free(x.in.err);
			free(x.key);
			break;
		}
		io->q[(io->head + io->n++) % GL_MCP_QUEUE_MAX] = x;
		pthread_cond_broadcast(&io->cv);
		pthread_mutex_unlock(&io->mu);
		wake(io);
	}
	pthread_mutex_lock(&io->mu);
	io->eof = true;
	pthread_cond_broadcast(&io->cv);
	pthread_mutex_unlock(&io->mu);
	wake(io);
	return NULL;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One notifications/progress line for t. Under mu: the call cannot end
 * (and answer) before this line is out. */
static void send_progress(struct gl_mcp_io *io, struct tracked *t)
{
	char line[GL_MCP_TOKEN_MAX + 200];
	t->tick++;
	int n = snprintf(line, sizeof line,
			 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
			 "\"params\":{\"progressToken\":%s,\"progress\":%ld,"
			 "\"message\":\"running in germline copies (%ld s)\"}}\n",
			 t->token, t->tick, t->tick);
	pthread_mutex_lock(&io->out_mu);
	for (int off = 0; off < n;) {
		ssize_t w = write(io->out_fd, line + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the main loop meets the error on its next write */
		off += (int)w;
	}
	pthread_mutex_unlock(&io->out_mu);
}

/* notifications/progress once a second for each call in flight with a
 * token (the first one second after it began). */
static void *ticker_main(void *arg)
{
	struct gl_mcp_io *io = arg;
	pthread_mutex_lock(&io->mu);
	while (!io->stop) {
		if (!io->ntr) {
			pthread_cond_wait(&io->cv, &io->mu);
			continue;
		}
		int64_t due = io->tr[0].due, now = mono_ns();
		for (unsigned i = 1; i < io->ntr; i++)
			due = io->tr[i].due < due ? io->tr[i].due : due;
		if (now < due) {
			struct timespec ts = {.tv_sec = due / 1000000000LL,
					      .tv_nsec = due % 1000000000LL};
			pthread_cond_timedwait(&io->cv, &io->mu, &ts);
			continue; /* the set may have changed: look again */
		}
		for (unsigned i = 0; i < io->ntr; i++)
			if (io->tr[i].due <= now) {
				send_progress(io, &io->tr[i]);
				io->tr[i].due += 1000000000LL;
			}
	}
	pthread_mutex_unlock(&io->mu);
	return NULL;
}

/* Under mu: track the call key (owned) with token (JSON text). */
static void track(struct gl_mcp_io *io, char *key, const char *tok)
{
	if (!key || !tok || strlen(tok) > GL_MCP_TOKEN_MAX || io->ntr == GL_MCP_TRACK_MAX) {
		free(key);
		return; /* no token, or past the bound: no progress (it is optional) */
	}
	struct tracked *t = &io->tr[io->ntr++];
	t->key = key;
	memcpy(t->token, tok, strlen(tok) + 1);
	t->due = mono_ns() + 1000000000LL;
	t->tick = 0;
	pthread_cond_broadcast(&io->cv);
}

/* Under mu: stop the progress of the call key; the notifications it got
 * (0: none, or it was not tracked). */
static long untrack(struct gl_mcp_io *io, const char *key)
{
	for (unsigned i = 0; key && i < io->ntr; i++)
		if (!strcmp(io->tr[i].key, key)) {
			long sent = io->tr[i].tick;
			free(io->tr[i].key);
			io->tr[i] = io->tr[--io->ntr];
			pthread_cond_broadcast(&io->cv);
			return sent;
		}
	return 0;
}

void gl_mcp_io_track(struct gl_mcp_io *io, jv id, jv token)
{
	char *key = id_key(id);
	autofree char *tok = id_key(token); /* a string or a number, as MCP's ProgressToken */
	pthread_mutex_lock(&io->mu);
	track(io, key, tok);
	pthread_mutex_unlock(&io->mu);
}

long gl_mcp_io_untrack(struct gl_mcp_io *io, jv id)
{
	autofree char *key = id_key(id);
	pthread_mutex_lock(&io->mu);
	long sent = untrack(io, key);
	pthread_mutex_unlock(&io->mu);
	return sent;
}

int gl_mcp_io_wake_fd(const struct gl_mcp_io *io)
{
	return io->wake_fd;
}

/* The queue's head message into *m (io->mu held, the queue not empty). */
static void dequeue(struct gl_mcp_io *io, struct gl_mcp_in *m)
{
	struct queued *x = &io->q[io->head];
	*m = x->in;
	free(x->key);
	io->head = (io->head + 1) % GL_MCP_QUEUE_MAX;
	io->n--;
	pthread_cond_broadcast(&io->cv);
}

int gl_mcp_io_try_next(struct gl_mcp_io *io, struct gl_mcp_in *m)
{
	uint64_t v;
	while (read(io->wake_fd, &v, sizeof v) < 0 && errno == EINTR)
		; /* before the queue is looked at: a later message wakes again */
	pthread_mutex_lock(&io->mu);
	int got = io->n > 0 ? 1 : io->eof ? -1 : 0;
	if (got == 1)
		dequeue(io, m);
	pthread_mutex_unlock(&io->mu);
	return got;
}

struct gl_mcp_io *gl_mcp_io_start(int in_fd, int out_fd, struct gl_cancel *cancel,
				  bool concurrent)
{
	struct gl_mcp_io *io = gl_xcalloc(1, sizeof *io);
	io->out_fd = out_fd;
	io->concurrent = concurrent;
	io->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (io->wake_fd < 0)
		return NULL;
	io->cancel = cancel;
	gl_rpc_reader_init(&io->rd, in_fd);
	pthread_mutex_init(&io->mu, NULL);
	pthread_mutex_init(&io->out_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&io->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&io->reader, NULL, reader_main, io) ||
	    pthread_create(&io->ticker, NULL, ticker_main, io))
		return NULL; /* the caller exits 2: nothing has been read yet */
	return io;
}

bool gl_mcp_io_next(struct gl_mcp_io *io, struct gl_mcp_in *m)
{
	pthread_mutex_lock(&io->mu);
	while (!io->n && !io->eof)
		pthread_cond_wait(&io->cv, &io->mu);
	bool got = io->n > 0;
	if (got)
		dequeue(io, m);
	pthread_mutex_unlock(&io->mu);
	return got;
}

int gl_mcp_io_send(struct gl_mcp_io *io, jv m)
{
	pthread_mutex_lock(&io->out_mu);
	int r = gl_rpc_write(io->out_fd, -1, m);
	int e = errno;
	pthread_mutex_unlock(&io->out_mu);
	errno = e;
	return r;
}

void gl_mcp_io_call_begin(struct gl_mcp_io *io, jv id, jv token)
{
	char *key = id_key(id);
	autofree char *tok = id_key(token);
	pthread_mutex_lock(&io->mu);
	gl_cancel_reset(io->cancel);
	free(io->key);
	io->key = key;
	track(io, key ? gl_xstrdup(key) : NULL, tok);
	io->busy = true;
	io->cancelled = false;
	pthread_cond_broadcast(&io->cv);
	pthread_mutex_unlock(&io->mu);
}

bool gl_mcp_io_call_end(struct gl_mcp_io *io)
{
	pthread_mutex_lock(&io->mu);
	io->busy = false;
	bool c = io->cancelled;
	untrack(io, io->key);
	free(io->key);
	io->key = NULL;
	pthread_cond_broadcast(&io->cv);
	pthread_mutex_unlock(&io->mu);
	return c;
}

void gl_mcp_io_stop(struct gl_mcp_io *io)
{
	pthread_mutex_lock(&io->mu);
	io->stop = true;
	pthread_cond_broadcast(&io->cv);
	pthread_mutex_unlock(&io->mu);
	pthread_join(io->ticker, NULL);
	pthread_join(io->reader, NULL); /* it ended: gl_mcp_io_next saw eof */
	for (unsigned i = 0; i < io->n; i++) {
		struct queued *x = &io->q[(io->head + i) % GL_MCP_QUEUE_MAX];
		jv_free(x->in.msg);
		free(x->in.err);
		free(x->key);
	}
	free(io->key);
	for (unsigned i = 0; i < io->ntr; i++)
		free(io->tr[i].key);
	close(io->wake_fd);
	pthread_cond_destroy(&io->cv);
	pthread_mutex_destroy(&io->mu);
	pthread_mutex_destroy(&io->out_mu);
	free(io);
}

/* NULL when path is a directory, else why not. */
static const char *not_dir(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return strerror(errno);
	return S_ISDIR(st.st_mode) ? NULL : "not a directory";
}

int gl_mcp_serve_check(const char *home, const char *releases_dir, struct gl_releases *rel,
		       const struct gl_policy *pol, const char *const *state,
		       bool check_read_paths, const char *release, struct gl_fail *f)
{
	const char *no;
	if (home && (no = not_dir(home)))
		return gl_fail(f, GL_E_USAGE, "GL_HOME %s: %s", home, no);
	if (home && (no = not_dir(releases_dir)))
		return gl_fail(f, GL_E_USAGE, "GL_HOME %s holds no releases directory: %s: %s",
			       home, releases_dir, no);
	autofree char *dir = gl_xasprintf("%s/%s", releases_dir, release);
	autofree char *rec = gl_xasprintf("%s.json", dir);
	if ((no = not_dir(dir)))
		return gl_fail(f, GL_E_USAGE,
			       "--serve-mcp: release %s is not installed: %s: %s (gl-verify install)",
			       release, dir, no);
	if (access(rec, R_OK) < 0)
		return gl_fail(f, GL_E_USAGE,
			       "--serve-mcp: release %s has no verified install record: %s: %s",
			       release, rec, strerror(errno));
	jv m = jv_invalid();
	autofail struct gl_fail rf = {0};
	if (gl_releases_get(rel, release, &m, &rf) != GL_E_OK)
		return gl_fail(f, GL_E_USAGE, "--serve-mcp: release %s: %s/manifest.json: %s",
			       release, dir, gl_fail_detail(&rf));
	if (gl_manifest_runtime(m) == GL_RT_UNKNOWN || gl_manifest_protocol(m) == GL_PROTO_UNKNOWN)
		return gl_fail(f, GL_E_USAGE,
			       "--serve-mcp: release %s: %s/manifest.json: a runtime or protocol "
			       "gl-run does not run",
			       release, dir);
	if (check_read_paths && gl_readpaths_check(pol, state, m, &rf) < 0)
		return gl_fail(f, GL_E_USAGE, "--serve-mcp: release %s: %s", release,
			       gl_fail_detail(&rf));
	return 0;
}
