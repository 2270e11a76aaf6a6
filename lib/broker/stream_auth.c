/* stream_auth.c — the operator's secrets on a stream destination
 * (broker_impl.h struct stream_auth; docs/streams.md "Passwords").
 *
 * A protocol that carries a password frames it with its length (Redis's
 * "$N") or hashes it in the client (PostgreSQL's SCRAM), so no placeholder
 * can be replaced in the bytes a copy writes. The broker authenticates the
 * connection itself, before or instead of the copy's client: Redis's AUTH
 * as it connects, PostgreSQL's SCRAM-SHA-256 after the copy's
 * StartupMessage (pgauth.c). The copy's client is configured with no
 * password and never holds one; the placeholder is all its environment
 * has (docs/secrets.md).
 *
 * And whatever e sends back, every secret's value is masked in it ('*'
 * for each byte: a stream's framing counts lengths, so the placeholder's
 * text cannot take its place) before a copy, the record or a witness sees
 * it, as gl_secrets_redact does for HTTP replies. A value cut in two by
 * the broker's bounded reads is caught by holding back a tail of e's bytes
 * that could begin one until the next read. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <errno.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "broker/pgauth.h"
#include "core/util.h"
#include "json/msg.h"

#define REDIS_REPLY_MAX 512 /* AUTH's answer line */

/* Up to max bytes of fd within the deadline into buf: 0 when fd closed or
 * the deadline passed, else the count. */
static ssize_t recv_by(int fd, void *buf, size_t max, int64_t deadline)
{
	for (;;) {
		int64_t left = (deadline - gl_mono_ns()) / 1000000;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, (int)(left > 60000 ? 60000 : left)) < 0) {
			if (left > 0 && errno == EINTR)
				continue;
			return 0;
		}
		if (!p.revents)
			continue;
		ssize_t n = recv(fd, buf, max, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		return n > 0 ? n : 0;
	}
}

/* Redis: AUTH <value>, and its answer "+OK". */
static bool redis_auth(int fd, const struct gl_secret *s, const char *dest, int64_t deadline)
{
	autofree char *cmd = gl_xasprintf("*2\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n", s->value_len,
					  s->value);
	bool sent = gl_stream_send_all(fd, (const unsigned char *)cmd, strlen(cmd), deadline);
	sodium_memzero(cmd, strlen(cmd));
	char line[REDIS_REPLY_MAX];
	size_t n = 0;
	while (sent && n < REDIS_REPLY_MAX && !memmem(line, n, "\r\n", 2)) {
		ssize_t k = recv_by(fd, line + n, REDIS_REPLY_MAX - n, deadline);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	if (n == 5 && !memcmp(line, "+OK\r\n", 5))
		return true;
	/* the server's answer: the printable bytes of its first line only */
	size_t shown = 0;
	while (shown < n && shown < 200 && line[shown] >= ' ' && line[shown] < 127)
		shown++;
	gl_warn("%s: the server refused AUTH with the operator's secret %s: %.*s", dest, s->name,
		(int)(n ? shown : 11), n ? line : "(no answer)");
	return false;
}

bool gl_stream_auth_open(struct stream_auth *a, const struct gl_config *cfg, const char *dest,
			 int fd, int64_t deadline)
{
	*a = (struct stream_auth){.s = gl_config_stream_auth(cfg, dest)};
	a->done = !a->s || !a->s->value || a->s->auth != GL_SECRET_AUTH_POSTGRES;
	if (a->s && a->s->value && a->s->auth == GL_SECRET_AUTH_REDIS && fd >= 0)
		return redis_auth(fd, a->s, dest, deadline);
	return true;
}

/* PostgreSQL: the server's side of SCRAM, after the StartupMessage went. */
static bool pg_exchange(struct stream_auth *a, int fd, struct gl_buf *reply, int64_t deadline)
{
	struct gl_pgauth x;
	gl_pgauth_init(&x, a->s->value);
	struct gl_buf out = {0};
	enum gl_pgauth_status st = GL_PGAUTH_MORE;
	while (st == GL_PGAUTH_MORE) {
		if (out.len && !gl_stream_send_all(fd, (const unsigned char *)out.data, out.len,
						   deadline)) {
			gl_pg_error(reply, "the server closed the connection during authentication");
			st = GL_PGAUTH_FAIL;
			break;
		}
		out.len = 0;
		char tmp[4096];
		ssize_t n = recv_by(fd, tmp, sizeof tmp, deadline);
		if (n <= 0) {
			gl_pg_error(reply, "the server closed the connection during authentication");
			st = GL_PGAUTH_FAIL;
			break;
		}
		st = gl_pgauth_feed(&x, tmp, (size_t)n, &out, reply);
	}
	gl_pgauth_free(&x);
	gl_buf_free(&out);
	return st == GL_PGAUTH_OK;
}

static void drop_front(struct gl_buf *b, size_t n)
{
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

bool gl_stream_auth_send(struct stream_auth *a, int fd, const unsigned char *p, size_t n,
			 struct gl_buf *reply, int64_t deadline)
{
	if (a->done)
		return gl_stream_send_all(fd, p, n, deadline);
	gl_buf_add(&a->pre, p, n);
	for (;;) {
		size_t len = 0;
		const unsigned char *pre = (const unsigned char *)a->pre.data;
		enum gl_pg_startup k = gl_pg_startup_kind(pre, a->pre.len, &len);
		if (k == GL_PG_NEED)
			return true;
		if (k == GL_PG_BAD) {
			gl_pg_error(reply, "the client's first message is not a PostgreSQL 3 startup");
			return false;
		}
		if (k == GL_PG_SSL) { /* no TLS inside the relay: the client goes on in the clear */
			gl_buf_addc(reply, 'N');
			drop_front(&a->pre, len);
			if (!a->pre.len)
				return true;
			continue;
		}
		/* a StartupMessage (authenticated here), or a CancelRequest (none) */
		a->done = true;
		bool ok = gl_stream_send_all(fd, pre, a->pre.len, deadline);
		gl_buf_free(&a->pre);
		return ok && k == GL_PG_STARTUP ? pg_exchange(a, fd, reply, deadline) : ok;
	}
}

/* The length of got's longest tail that begins a form of a secret (and is
 * not a whole one): what may be the first part of a value cut in two. */
static size_t tail_of_form(const struct gl_config *cfg, const struct gl_buf *got)
{
	size_t best = 0;
	for (size_t i = 0; i < cfg->nforms; i++) {
		const struct gl_secret_form *w = &cfg->forms[i];
		size_t k = w->len - 1 < got->len ? w->len - 1 : got->len;
		for (; k > best; k--)
			if (got->data[got->len - k] == w->from[0] &&
			    !memcmp(got->data + got->len - k, w->from, k))
				best = k;
	}
	return best;
}

void gl_stream_mask(struct stream_auth *a, const struct gl_config *cfg, struct gl_buf *got,
		    bool hold)
{
	if (a->held.len) { /* what was held back comes first */
		gl_buf_add(&a->held, got->data, got->len);
		gl_buf_free(got);
		*got = a->held;
		a->held = (struct gl_buf){0};
	}
	if (!cfg || !cfg->nforms || !got->len || GL_TEST_SWITCH("GL_TEST_SECRETS_NO_REDACT"))
		return;
	for (size_t i = 0; i < cfg->nforms; i++) {
		const struct gl_secret_form *w = &cfg->forms[i];
		char *p = got->data, *end = got->data + got->len, *hit;
		while ((hit = memmem(p, (size_t)(end - p), w->from, w->len))) {
			memset(hit, '*', w->len);
			p = hit + w->len;
		}
	}
	size_t h = hold ? tail_of_form(cfg, got) : 0;
	if (h) {
		gl_buf_add(&a->held, got->data + got->len - h, h);
		got->len -= h;
	}
}

void gl_stream_auth_free(struct stream_auth *a)
{
	gl_buf_free(&a->pre);
	gl_buf_free(&a->held);
}
