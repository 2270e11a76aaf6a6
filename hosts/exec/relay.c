/* relay.c — gl-exec-host's HTTP relay (docs/exec.md "HTTP egress"): the
 * declared hosts resolve to 127.0.0.1 of the copy's own network namespace,
 * where fd 4 listens on port 80 and fd 6 on port 443. One request per
 * connection (HTTP/1.1, head and body bounded) becomes one "effect"
 * message on the broker channel, the copy's only channel (paper A1); the
 * broker decides (deliver, placeholder, deny: Algorithm 1 lines 13–22) and
 * its reply goes back as the response. On 443 the connection is TLS,
 * ended here with the session's relay certificate (lib/runtime/exec_tls.h):
 * the request becomes an https:// effect whose host is the one the client
 * named in its handshake (SNI), so a Host header naming another host is
 * the broker's to deny (lib/broker/http.c), and the broker alone speaks
 * TLS to the destination. What the target sends is hostile: every read
 * is bounded and has a deadline, the handshake's too. */
#define _GNU_SOURCE
#include "host_impl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "json/json.h"
#include "json/msg.h"
#include "relay_parse.h"

/* One connection of the target: plain (ssl NULL) or TLS. */
struct rconn {
	int fd;
	SSL *ssl;
};

static int wait_fd(int fd, short ev, int64_t deadline)
{
	for (;;) {
		int64_t ms = (deadline - gl_mono_ns()) / 1000000;
		struct pollfd p = {.fd = fd, .events = ev};
		int r = poll(&p, 1, ms < 0 ? 0 : (int)ms);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

/* After an SSL call on c returned r: wait for what it wants (0: retry),
 * or -1 (an error, the peer's close, or the deadline). */
static int ssl_wait(struct rconn *c, int r, int64_t deadline)
{
	switch (SSL_get_error(c->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		return wait_fd(c->fd, POLLIN, deadline) > 0 ? 0 : -1;
	case SSL_ERROR_WANT_WRITE:
		return wait_fd(c->fd, POLLOUT, deadline) > 0 ? 0 : -1;
	default:
		return -1;
	}
}

/* Append up to want bytes from c; 1 got some, 0 EOF, -1 error/timeout. */
static int read_more(struct rconn *c, struct gl_buf *b, size_t want, int64_t deadline)
{
	char tmp[65536];
	size_t cap = want < sizeof tmp ? want : sizeof tmp;
	if (c->ssl) {
		for (;;) {
			size_t got = 0;
			int r = SSL_read_ex(c->ssl, tmp, cap, &got);
			if (r == 1) {
				gl_buf_add(b, tmp, got);
				return 1;
			}
			if (SSL_get_error(c->ssl, r) == SSL_ERROR_ZERO_RETURN)
				return 0;
			if (ssl_wait(c, r, deadline) < 0)
				return -1;
		}
	}
	if (wait_fd(c->fd, POLLIN, deadline) <= 0)
		return -1;
	ssize_t n;
	do
		n = read(c->fd, tmp, cap);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	gl_buf_add(b, tmp, (size_t)n);
	return 1;
}

static char *find_crlf2(struct gl_buf *b)
{
	return b->len >= 4 ? memmem(b->data, b->len, "\r\n\r\n", 4) : NULL;
}

static void write_all_to(struct rconn *c, const char *p, size_t n, int64_t deadline)
{
	while (n && c->ssl) {
		size_t w = 0;
		int r = SSL_write_ex(c->ssl, p, n, &w);
		if (r == 1) {
			p += w;
			n -= w;
		} else if (ssl_wait(c, r, deadline) < 0) {
			return;
		}
	}
	while (n) {
		if (wait_fd(c->fd, POLLOUT, deadline) <= 0)
			return;
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	}
	return "Status";
}

/* Parse: the head, read within HEAD_MAX bytes, cut into the request line
 * and its header lines (relay_head_cut). -1 when there is no complete head
 * or the request line is not "METHOD TARGET HTTP/1.x". */
static int relay_parse_head(struct rconn *conn, struct relay_req *q, int64_t deadline)
{
	char *eoh;
	while (!(eoh = find_crlf2(&q->buf)))
		if (q->buf.len > HEAD_MAX || read_more(conn, &q->buf, HEAD_MAX, deadline) <= 0)
			return -1;
	return relay_head_cut(q, eoh);
}

/* Validate and read the body: a Host header, a length within BODY_MAX,
 * and the whole body (chunked, or exactly Content-Length bytes). -1
 * otherwise. */
static int relay_read_body(struct rconn *conn, struct relay_req *q, int64_t deadline)
{
	if (!q->host || q->clen < 0 || q->clen > BODY_MAX)
		return -1;
	size_t have = q->buf.len - q->head_len;
	if (q->chunked) {
		struct gl_buf raw = {0};
		gl_buf_add(&raw, q->buf.data + q->head_len, have);
		ssize_t r;
		while ((r = dechunk(raw.data ? raw.data : "", raw.len, &q->body)) == -1)
			if (raw.len > BODY_MAX + HEAD_MAX || read_more(conn, &raw, BODY_MAX, deadline) <= 0)
				break;
		free(raw.data);
		return r < 0 ? -1 : 0;
	}
	gl_buf_add(&q->body, q->buf.data + q->head_len, have);
	while (q->body.len < (size_t)q->clen)
		if (read_more(conn, &q->body, (size_t)q->clen - q->body.len, deadline) <= 0)
			break;
	return q->body.len == (size_t)q->clen ? 0 : -1;
}

/* The broker's reply as an HTTP/1.1 response on conn: its status (502 if
 * out of range), its headers (none that is hop-by-hop or could split the
 * response), its body; a placeholder is a 200 marked X-Germline. */
static void relay_respond(struct rconn *conn, jv reply, bool placeholder, int64_t deadline)
{
	int64_t status = 200;
	struct gl_buf resp = {0}, rbody = {0};
	jv rh = jv_array();
	if (placeholder) {
		rh = jv_array_append(rh, JV_ARRAY(jv_string("X-Germline"), jv_string("placeholder")));
	} else {
		gl_json_get_int(reply, "status", &status);
		jv_free(rh);
		rh = gl_json_get(reply, "headers");
		const char *rb = gl_json_get_str(reply, "body");
		size_t n = 0;
		unsigned char *d = rb ? gl_b64_decode(rb, strlen(rb), &n) : NULL;
		if (d)
			gl_buf_add(&rbody, (char *)d, n);
		free(d);
	}
	if (status < 100 || status > 999)
		status = 502;
	char *sl = gl_xasprintf("HTTP/1.1 %03d %s\r\n", (int)status, reason((int)status));
	gl_buf_adds(&resp, sl);
	free(sl);
	if (jv_get_kind(rh) == JV_KIND_ARRAY) {
		jv_array_foreach(rh, i, pair)
		{
			jv k = jv_array_get(jv_copy(pair), 0), v = jv_array_get(jv_copy(pair), 1);
			if (jv_get_kind(k) == JV_KIND_STRING && jv_get_kind(v) == JV_KIND_STRING &&
			    !hop_header(jv_string_value(k), strlen(jv_string_value(k))) &&
			    !strpbrk(jv_string_value(k), "\r\n:") && !strpbrk(jv_string_value(v), "\r\n")) {
				gl_buf_adds(&resp, jv_string_value(k));
				gl_buf_adds(&resp, ": ");
				gl_buf_adds(&resp, jv_string_value(v));
				gl_buf_adds(&resp, "\r\n");
			}
			jv_free(k);
			jv_free(v);
			jv_free(pair);
			(void)i;
		}
	}
	jv_free(rh);
	char *cl = gl_xasprintf("Content-Length: %zu\r\nConnection: close\r\n\r\n", rbody.len);
	gl_buf_adds(&resp, cl);
	free(cl);
	if (rbody.len)
		gl_buf_add(&resp, rbody.data, rbody.len);
	write_all_to(conn, resp.data, resp.len, deadline);
	free(resp.data);
	free(rbody.data);
}

/* Forward: the request as one effect; the broker decides (deliver,
 * placeholder, deny) and its reply goes back on conn. Anything but a reply
 * ends the host (the broker broke the protocol or is gone). */
static bool relay_forward(struct rconn *conn, struct relay_req *q, const char *sni,
			  int64_t deadline)
{
	char *url = conn->ssl ? gl_xasprintf("https://%s%s", sni ? sni : q->host, q->target)
			      : gl_xasprintf("http://%s%s", q->host, q->target);
	/* The handshake named the host; a Host header that names another goes
	 * with it, for the broker to deny (lib/broker/http.c). */
	if (sni && q->host)
		q->headers = jv_array_append(q->headers, JV_ARRAY(jv_string("Host"), jv_string(q->host)));
	struct gl_buf b64 = {0};
	gl_b64_encode(&b64, (unsigned char *)(q->body.data ? q->body.data : ""), q->body.len);
	jv eff = JV_OBJECT(jv_string("type"), jv_string("effect"), jv_string("method"),
			   jv_string(q->method), jv_string("url"), jv_string(url), jv_string("headers"),
			   q->headers, jv_string("body"),
			   jv_string_sized(b64.data ? b64.data : "", (int)b64.len));
	q->headers = jv_invalid(); /* moved into eff */
	free(b64.data);
	free(url);
	send_msg(eff);
	jv reply = recv_msg();
	const char *type = gl_json_get_str(reply, "type");
	if (!type || strcmp(type, "reply")) {
		jv_free(reply);
		_exit(3);
	}
	jv den = gl_json_get(reply, "denied"), ph = gl_json_get(reply, "placeholder");
	bool denied = jv_get_kind(den) == JV_KIND_TRUE;
	if (denied) {
		/* an undeclared host: the connection is reset, as if refused */
		struct linger lg = {1, 0};
		setsockopt(conn->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	} else {
		relay_respond(conn, reply, jv_get_kind(ph) == JV_KIND_TRUE, deadline);
	}
	jv_free(den);
	jv_free(ph);
	jv_free(reply);
	return denied;
}

/* One request on c: parse, validate, forward (on TLS an https:// effect
 * for the host sni, else the Host header's); a request that fails a step
 * is dropped (nothing sent). Whether it was answered (not dropped, not
 * denied: a denied connection is reset, with no TLS close). */
static bool relay_request(struct rconn *c, const char *sni, int64_t deadline)
{
	struct relay_req q = {.headers = jv_array()};
	bool answered = relay_parse_head(c, &q, deadline) == 0 &&
			relay_read_body(c, &q, deadline) == 0 && !relay_forward(c, &q, sni, deadline);
	relay_req_free(&q);
	return answered;
}

void relay_one(int conn)
{
	int64_t deadline = gl_mono_ns() + (int64_t)IO_MS * 1000000;
	struct rconn c = {.fd = conn};
	relay_request(&c, NULL, deadline);
	close(conn);
}

/* ---- HTTPS on 443 ---------------------------------------------------------- */

/* Offer http/1.1 and nothing else: a client that speaks only h2 fails. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	for (unsigned i = 0; i < inlen; i += 1u + in[i])
		if (in[i] == 8 && i + 9 <= inlen && !memcmp(in + i + 1, "http/1.1", 8)) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
	return SSL_TLSEXT_ERR_NOACK;
}

/* The relay's TLS context, made at the first HTTPS connection from
 * $GERMLINE_TLS_DIR/relay.pem (lib/runtime/exec_tls.h), or NULL when it
 * cannot be: every HTTPS connection is then closed unanswered. */
static SSL_CTX *relay_ctx(void)
{
	static SSL_CTX *ctx;
	static bool tried;
	if (tried)
		return ctx;
	tried = true;
	const char *dir = getenv("GERMLINE_TLS_DIR");
	autofree char *pem = dir ? gl_xasprintf("%s/relay.pem", dir) : NULL;
	SSL_CTX *c = pem ? SSL_CTX_new(TLS_server_method()) : NULL;
	if (c && SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION) &&
	    SSL_CTX_use_certificate_chain_file(c, pem) == 1 &&
	    SSL_CTX_use_PrivateKey_file(c, pem, SSL_FILETYPE_PEM) == 1 &&
	    SSL_CTX_check_private_key(c) == 1) {
		SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
		SSL_CTX_set_alpn_select_cb(c, alpn_select, NULL);
		ctx = c;
	} else {
		SSL_CTX_free(c);
	}
	ERR_clear_error();
	return ctx;
}

/* The host the client named in its handshake, lowercased into out, or
 * NULL (none, or not a possible host name: the Host header then names it). */
static const char *sni_of(SSL *ssl, char out[256])
{
	const char *n = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	size_t len = n ? strlen(n) : 0;
	if (!len || len > 253)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)n[i];
		if (!isalnum(ch) && ch != '-' && ch != '.')
			return NULL;
		out[i] = (char)tolower(ch);
	}
	out[len] = '\0';
	return out;
}

void relay_one_tls(int conn)
{
	int64_t deadline = gl_mono_ns() + (int64_t)IO_MS * 1000000;
	SSL_CTX *ctx = relay_ctx();
	struct rconn c = {.fd = conn, .ssl = ctx ? SSL_new(ctx) : NULL};
	if (c.ssl && fcntl(conn, F_SETFL, O_NONBLOCK) == 0 && SSL_set_fd(c.ssl, conn) == 1) {
		int r;
		while ((r = SSL_accept(c.ssl)) != 1 && ssl_wait(&c, r, deadline) == 0)
			;
		char name[256];
		const char *sni = r == 1 ? sni_of(c.ssl, name) : NULL;
		if (r == 1 && relay_request(&c, sni, deadline))
			SSL_shutdown(c.ssl); /* close_notify, not waited for */
	}
	SSL_free(c.ssl);
	ERR_clear_error();
	close(conn);
}
