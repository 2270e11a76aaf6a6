/* gl-exec-host — the host half of an exec copy (SPEC §5, §11; docs/exec.md).
 *
 * Started by the broker's verified launch (lib/runtime/exec.c) as PID 1 of the
 * copy's namespaces, already confined (Landlock, seccomp, no_new_privs):
 *   fd 3  the broker channel (docs/design/run.md: call, effect/reply,
 *         state_put/ok, result; length-prefixed JSON)
 *   fd 4  the HTTP relay's listening socket, 127.0.0.1:80 of the copy's
 *         own network namespace (the declared hosts resolve to it)
 *   fd 5  the retained target, opened and hashed by the broker
 *   argv  gl-exec-host PROTOCOL STATE_DIR|- -- ENTRY…
 * It reads the call message, restores the release's file state into
 * STATE_DIR, starts the target from fd 5 (execveat AT_EMPTY_PATH) with a
 * socketpair on its stdin/stdout, speaks the release's protocol to it
 * ("germline": call JSON in, result JSON out; "mcp-stdio": MCP JSON-RPC 2.0,
 * revision 2025-06-18: initialize, notifications/initialized, tools/call),
 * turns every HTTP request the target makes into an "effect" message, and
 * ends with state_put (the state directory) and result.
 *
 * It runs next to hostile code, so the broker trusts nothing it says (its
 * messages are copy output); its own job is only to not crash on what the
 * target sends: every read is bounded. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/json.h"
#include "json/jsonrpc.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "core/util.h"
#include "workspace.h"

#define CHAN 3
#define RELAY 4
#define TARGET 5
#define OUT_MAX (32u << 20)      /* bytes of the target's output kept */
#define HEAD_MAX (64u << 10)     /* bytes of one HTTP request head */
#define BODY_MAX (16u << 20)     /* bytes of one HTTP request body */
#define MCP_VERSION "2025-06-18"
#define IO_MS 10000              /* one HTTP connection's reads and writes */

static const char *proto;
static pid_t target = -1;
static const char *state_dir; /* the copy's state directory, or NULL */
/* Session mode (a call message with "session":true: gl-run --mode sigpin or
 * sigifc): after each result the next call message is read, and an MCP
 * server keeps running between calls. */
static bool session;
static bool mcp_up;        /* initialize done on the running server */
static int64_t next_id = 1;
static int errfd = -1;        /* the target's stderr (a pipe), or -1 */
static char errtail[1024];    /* its last bytes, for a failure's detail */
static size_t errlen;

static void drain_stderr(void)
{
	char tmp[4096];
	ssize_t n;
	while (errfd >= 0 && (n = read(errfd, tmp, sizeof tmp)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				close(errfd), errfd = -1;
			return;
		}
		size_t k = (size_t)n > sizeof errtail ? sizeof errtail : (size_t)n;
		if (errlen + k > sizeof errtail) {
			size_t drop = errlen + k - sizeof errtail;
			memmove(errtail, errtail + drop, errlen - drop);
			errlen -= drop;
		}
		memcpy(errtail + errlen, tmp + (size_t)n - k, k);
		errlen += k;
	}
	if (errfd >= 0 && n == 0)
		close(errfd), errfd = -1;
}

/* How a call ends (what finish sends): an error (malloc'd) with an
 * optional string value for its detail, or a value. Every step returns it
 * up to the session loop in main, so each call's allocations are released
 * on every path (no non-local exit past a cleanup). */
struct end {
	char *error;
	jv value;
};

/* Fail the call: e->error is msg (copied), e->value v (consumed). -1. */
static int fail(struct end *e, const char *msg, jv v)
{
	free(e->error);
	jv_free(e->value);
	e->error = gl_xstrdup(msg);
	e->value = v;
	return -1;
}

/* ---- the broker channel ---------------------------------------------------- */

static int64_t forever(void) { return gl_mono_ns() + (int64_t)3600 * 1000000000; }

static void send_msg(jv m) /* consumes m */
{
	if (gl_msg_send(CHAN, forever(), m) != GL_MSG_OK)
		_exit(3); /* the broker is gone or killed us: nothing to say */
	jv_free(m);
}

/* The broker's next message (owned object), or jv_invalid(): it is gone,
 * closed the channel or sent no object. */
static jv try_recv_msg(void)
{
	struct gl_buf b = {0};
	enum gl_msg_status st = gl_msg_read(CHAN, forever(), &b);
	jv v = st == GL_MSG_OK ? gl_json_parse(b.data, b.len) : jv_invalid();
	free(b.data);
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return jv_invalid();
	}
	return v;
}

static jv recv_msg(void) /* the broker's answer (owned object) */
{
	jv v = try_recv_msg();
	if (!jv_is_valid(v))
		_exit(3);
	return v;
}

/* ---- the HTTP relay: one request per connection -> one effect -------------- */

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

/* Append up to want bytes from fd; 1 got some, 0 EOF, -1 error/timeout. */
static int read_more(int fd, struct gl_buf *b, size_t want, int64_t deadline)
{
	if (wait_fd(fd, POLLIN, deadline) <= 0)
		return -1;
	char tmp[65536];
	ssize_t n;
	do
		n = read(fd, tmp, want < sizeof tmp ? want : sizeof tmp);
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

/* Decode a complete chunked body at p[0..n); -1 incomplete, -2 bad. */
static ssize_t dechunk(const char *p, size_t n, struct gl_buf *out)
{
	size_t pos = 0;
	out->len = 0;
	for (;;) {
		const char *eol = memmem(p + pos, n - pos, "\r\n", 2);
		if (!eol)
			return -1;
		char *end;
		unsigned long size = strtoul(p + pos, &end, 16);
		if (end == p + pos || size > BODY_MAX)
			return -2;
		size_t data = (size_t)(eol - p) + 2;
		if (size == 0)
			return memmem(p + data, n - data, "\r\n", 2) ? (ssize_t)out->len : -1;
		if (n < data + size + 2)
			return -1;
		gl_buf_add(out, p + data, size);
		if (out->len > BODY_MAX)
			return -2;
		pos = data + size + 2;
	}
}

static void write_all_to(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n) {
		if (wait_fd(fd, POLLOUT, deadline) <= 0)
			return;
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
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

static bool hop_header(const char *k, size_t n)
{
	static const char *const hop[] = {"host", "connection", "content-length", "transfer-encoding",
					  "keep-alive", "proxy-connection", NULL};
	for (size_t i = 0; hop[i]; i++)
		if (strlen(hop[i]) == n && !strncasecmp(k, hop[i], n))
			return true;
	return false;
}

/* One request as the target sent it: parsed from its head (the buffer's
 * request line and header lines, cut in place), its body read in full. */
struct relay_req {
	struct gl_buf buf; /* the bytes read: the head (cut), then what followed */
	size_t head_len;   /* bytes of the head, with its blank line */
	const char *method, *target, *host;
	jv headers; /* [[name, value]…] without hop-by-hop headers (owned) */
	long long clen;
	bool chunked;
	struct gl_buf body;
};

static void relay_req_free(struct relay_req *q)
{
	free(q->buf.data);
	free(q->body.data);
	jv_free(q->headers);
}

/* Parse: the head, read within HEAD_MAX bytes, cut into the request line
 * and its header lines. -1 when there is no complete head or the request
 * line is not "METHOD TARGET HTTP/1.x". */
static int relay_parse_head(int conn, struct relay_req *q, int64_t deadline)
{
	char *eoh;
	while (!(eoh = find_crlf2(&q->buf)))
		if (q->buf.len > HEAD_MAX || read_more(conn, &q->buf, HEAD_MAX, deadline) <= 0)
			return -1;
	*eoh = 0;
	q->head_len = (size_t)(eoh - q->buf.data) + 4;
	char *line_end = strstr(q->buf.data, "\r\n");
	char *rl = q->buf.data;
	if (line_end)
		*line_end = 0;
	char *sp1 = strchr(rl, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7))
		return -1;
	*sp1 = *sp2 = 0;
	q->method = rl;
	q->target = sp1 + 1;
	for (char *h = line_end ? line_end + 2 : NULL; h && *h;) {
		char *e = strstr(h, "\r\n");
		if (e)
			*e = 0;
		char *colon = strchr(h, ':');
		if (colon) {
			size_t kn = (size_t)(colon - h);
			char *v = colon + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if (kn == 4 && !strncasecmp(h, "host", 4))
				q->host = v;
			else if (kn == 14 && !strncasecmp(h, "content-length", 14))
				q->clen = atoll(v);
			else if (kn == 17 && !strncasecmp(h, "transfer-encoding", 17))
				q->chunked = strcasestr(v, "chunked") != NULL;
			if (!hop_header(h, kn))
				q->headers = jv_array_append(
				    q->headers, JV_ARRAY(jv_string_sized(h, (int)kn), jv_string(v)));
		}
		h = e ? e + 2 : NULL;
	}
	return 0;
}

/* Validate and read the body: a Host header, a length within BODY_MAX,
 * and the whole body (chunked, or exactly Content-Length bytes). -1
 * otherwise. */
static int relay_read_body(int conn, struct relay_req *q, int64_t deadline)
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
static void relay_respond(int conn, jv reply, bool placeholder, int64_t deadline)
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
static void relay_forward(int conn, struct relay_req *q, int64_t deadline)
{
	char *url = gl_xasprintf("http://%s%s", q->host, q->target);
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
	if (jv_get_kind(den) == JV_KIND_TRUE) {
		/* an undeclared host: the connection is reset, as if refused */
		struct linger lg = {1, 0};
		setsockopt(conn, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	} else {
		relay_respond(conn, reply, jv_get_kind(ph) == JV_KIND_TRUE, deadline);
	}
	jv_free(den);
	jv_free(ph);
	jv_free(reply);
}

/* One connection of the target: parse, validate, forward; a request that
 * fails a step is dropped (the connection closed, nothing sent). */
static void relay_one(int conn)
{
	int64_t deadline = gl_mono_ns() + (int64_t)IO_MS * 1000000;
	struct relay_req q = {.headers = jv_array()};
	if (relay_parse_head(conn, &q, deadline) == 0 && relay_read_body(conn, &q, deadline) == 0)
		relay_forward(conn, &q, deadline);
	relay_req_free(&q);
	close(conn);
}

/* ---- the target ------------------------------------------------------------- */

/* "${GL_STATE_DIR}" in s replaced by dir (malloc'd). */
static char *subst(const char *s, const char *dir)
{
	const char *tok = "${GL_STATE_DIR}";
	struct gl_buf b = {0};
	const char *p;
	while ((p = strstr(s, tok))) {
		gl_buf_add(&b, s, (size_t)(p - s));
		gl_buf_adds(&b, dir);
		s = p + strlen(tok);
	}
	gl_buf_adds(&b, s);
	gl_buf_addc(&b, 0);
	return b.data;
}

/* The call's twin inputs for the target (hosts/exec/twin.cjs reads them,
 * loaded through the NODE_OPTIONS lib/runtime/exec.c sets; paper §IV-F, A4):
 * "GL_TWIN_TIME=…" and "GL_TWIN_SEED=…", or NULL (a session: real clocks). */
static char *twin_env[2];

static void twin_from(jv call)
{
	jv tw = gl_json_get(call, "twin");
	jv tm = gl_json_get(tw, "time");
	const char *seed = gl_json_get_str(tw, "seed");
	if (jv_get_kind(tm) == JV_KIND_NUMBER && isfinite(jv_number_value(tm)) && seed &&
	    gl_sha256_hex_ok(seed, strlen(seed))) {
		twin_env[0] = gl_xasprintf("GL_TWIN_TIME=%.6f", jv_number_value(tm));
		twin_env[1] = gl_xasprintf("GL_TWIN_SEED=%s", seed);
	}
	jv_free(tm);
	jv_free(tw);
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Start the target; its end of the socketpair in *tfd. 0, or -1 with e. */
static int start_target(char **targv, const char *dir, int *tfd, struct end *e)
{
	int sv[2], ep[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fail(e, "host: socketpair failed", jv_invalid());
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(sv[0]);
		close(sv[1]);
		return fail(e, "host: socketpair failed", jv_invalid());
	}
	extern char **environ;
	size_t ne = 0;
	while (environ[ne])
		ne++;
	char **envp = gl_xcalloc(ne + 3, sizeof *envp);
	for (size_t i = 0; i < ne; i++)
		envp[i] = subst(environ[i], dir);
	size_t nsub = ne; /* envp[0..nsub) are ours; twin_env's stay */
	for (size_t i = 0; i < 2 && twin_env[i]; i++)
		envp[ne++] = twin_env[i];
	size_t na = 0;
	while (targv[na])
		na++;
	char **av = gl_xcalloc(na + 1, sizeof *av);
	for (size_t i = 0; i < na; i++)
		av[i] = subst(targv[i], dir);
	target = fork();
	if (target == 0) {
		if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0 || dup2(ep[1], 2) < 0)
			_exit(127);
		close(CHAN);
		close(RELAY);
		syscall(SYS_execveat, TARGET, "", av, envp, AT_EMPTY_PATH);
		_exit(127);
	}
	free_strv(envp, nsub);
	free_strv(av, na);
	close(sv[1]);
	close(ep[1]);
	if (target < 0) {
		close(sv[0]);
		close(ep[0]);
		return fail(e, "host: fork failed", jv_invalid());
	}
	if (errfd >= 0)
		close(errfd);
	errfd = ep[0];
	errlen = 0;
	fcntl(errfd, F_SETFL, O_NONBLOCK);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	*tfd = sv[0];
	return 0;
}

/* ---- the loop: the target's output and the relay ----------------------------- */

struct io {
	int tfd;
	struct gl_buf out; /* the target's output not consumed yet */
	bool eof;
};

/* Serve the relay and read the target until a complete line (want_line)
 * or EOF. 0, or -1 with e. */
static int pump(struct io *io, bool want_line, struct end *e)
{
	for (;;) {
		if (want_line && io->out.len && memchr(io->out.data, '\n', io->out.len))
			return 0;
		if (io->eof)
			return 0;
		struct pollfd p[3] = {{.fd = io->tfd, .events = POLLIN}, {.fd = RELAY, .events = POLLIN},
				      {.fd = errfd, .events = POLLIN}};
		int r = poll(p, 3, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail(e, "host: poll failed", jv_invalid());
		if (p[2].revents)
			drain_stderr();
		if (p[1].revents & POLLIN) {
			int c = accept4(RELAY, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				relay_one(c);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char tmp[65536];
			ssize_t n = read(io->tfd, tmp, sizeof tmp);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				io->eof = true;
				continue;
			}
			if (io->out.len + (size_t)n > OUT_MAX)
				return fail(e, "host: the server's output is too large", jv_invalid());
			gl_buf_add(&io->out, tmp, (size_t)n);
		}
	}
}

static int send_line(int fd, jv m, struct end *e) /* consumes m; 0, or -1 with e */
{
	int rc = gl_rpc_write(fd, gl_mono_ns() + (int64_t)IO_MS * 1000000 * 3, m);
	jv_free(m);
	if (rc < 0)
		return fail(e, "mcp: cannot write to the server (it exited?)", jv_invalid());
	return 0;
}

/* The next message from the server that answers id; requests from the
 * server are answered (ping) or refused; notifications dropped.
 * jv_invalid() with e on failure. */
static jv await_response(struct io *io, int64_t id, struct end *e)
{
	for (;;) {
		if (pump(io, true, e) < 0)
			return jv_invalid();
		char *nl = io->out.len ? memchr(io->out.data, '\n', io->out.len) : NULL;
		if (!nl) {
			fail(e, "mcp: the server closed its stdout before answering", jv_invalid());
			return jv_invalid();
		}
		size_t n = (size_t)(nl - io->out.data);
		jv v = gl_json_parse(io->out.data, n && io->out.data[n - 1] == '\r' ? n - 1 : n);
		memmove(io->out.data, nl + 1, io->out.len - n - 1);
		io->out.len -= n + 1;
		enum gl_rpc_kind kind;
		char *err = NULL;
		if (!jv_is_valid(v) || gl_rpc_validate(v, &kind, &err) < 0) {
			free(err);
			jv_free(v);
			continue; /* not JSON-RPC: e.g. a stray log line; skipped */
		}
		if (kind == GL_RPC_REQUEST) {
			const char *method = gl_json_get_str(v, "method");
			jv rid = gl_json_get(v, "id");
			int rc = method && !strcmp(method, "ping")
				     ? send_line(io->tfd, gl_rpc_result(rid, jv_object()), e)
				     : send_line(io->tfd,
						 gl_rpc_error(rid, GL_RPC_METHOD_NOT_FOUND,
							      "method not offered by germline's client",
							      jv_null()),
						 e);
			jv_free(v);
			if (rc < 0)
				return jv_invalid();
			continue;
		}
		int64_t got;
		if ((kind == GL_RPC_RESULT || kind == GL_RPC_ERROR) && gl_json_get_int(v, "id", &got) == 0 &&
		    got == id)
			return v;
		jv_free(v);
	}
}

static char *rpc_error_text(jv resp)
{
	jv e = gl_json_get(resp, "error");
	int64_t code = 0;
	gl_json_get_int(e, "code", &code);
	const char *m = gl_json_get_str(e, "message");
	char *s = gl_xasprintf("mcp error %lld: %s", (long long)code, m ? m : "");
	jv_free(e);
	return s;
}

/* initialize and notifications/initialized, once per server. 0, or -1 with e. */
static int mcp_init(struct io *io, struct end *e)
{
	jv init = JV_OBJECT(jv_string("protocolVersion"), jv_string(MCP_VERSION),
			    jv_string("capabilities"), jv_object(), jv_string("clientInfo"),
			    JV_OBJECT(jv_string("name"), jv_string("germline"), jv_string("version"),
				      jv_string("1")));
	int64_t id = next_id++;
	if (send_line(io->tfd, gl_rpc_request(jv_number((double)id), "initialize", init), e) < 0)
		return -1;
	jv r = await_response(io, id, e);
	if (!jv_is_valid(r))
		return -1;
	if (jv_object_has(jv_copy(r), jv_string("error"))) {
		autofree char *t = rpc_error_text(r);
		jv_free(r);
		return fail(e, t, jv_invalid());
	}
	jv_free(r);
	if (send_line(io->tfd, gl_rpc_notification("notifications/initialized", jv_null()), e) < 0)
		return -1;
	mcp_up = true;
	return 0;
}

/* gl-run's discovery check (lib/broker/mcp.h): the server's own list, every
 * page, and nothing else (no state write). */
static void mcp_tools_list(struct io *io, struct end *e)
{
	jv all = jv_array(), cursor = jv_null();
	for (int page = 0; page < 64; page++) {
		jv params = jv_get_kind(cursor) == JV_KIND_STRING ? JV_OBJECT(jv_string("cursor"), cursor)
								   : (jv_free(cursor), jv_null());
		cursor = jv_null();
		int64_t id = next_id++;
		if (send_line(io->tfd, gl_rpc_request(jv_number((double)id), "tools/list", params), e) < 0)
			break;
		jv r = await_response(io, id, e);
		if (!jv_is_valid(r))
			break;
		jv res = gl_json_get(r, "result");
		jv t = jv_get_kind(res) == JV_KIND_OBJECT ? gl_json_get(res, "tools") : jv_invalid();
		jv_free(cursor);
		cursor = jv_get_kind(res) == JV_KIND_OBJECT ? gl_json_get(res, "nextCursor") : jv_null();
		if (jv_get_kind(t) == JV_KIND_ARRAY)
			all = jv_array_concat(all, t);
		else
			jv_free(t);
		jv_free(res);
		jv_free(r);
		if (jv_get_kind(cursor) != JV_KIND_STRING)
			break;
	}
	jv_free(cursor);
	if (e->error) {
		jv_free(all);
		return;
	}
	state_dir = NULL;
	e->value = JV_OBJECT(jv_string("tools"), all);
}

/* One MCP call (args consumed) into e. */
static void run_mcp(struct io *io, const char *function, jv args, struct end *e)
{
	if (!mcp_up && mcp_init(io, e) < 0) {
		jv_free(args);
		return;
	}
	if (!strcmp(function, "tools/list")) {
		jv_free(args);
		mcp_tools_list(io, e);
		return;
	}
	int64_t id = next_id++;
	if (send_line(io->tfd, gl_rpc_request(jv_number((double)id), "tools/call",
					      JV_OBJECT(jv_string("name"), jv_string(function),
							jv_string("arguments"), args)),
		      e) < 0)
		return;
	jv r = await_response(io, id, e);
	if (!jv_is_valid(r))
		return;
	if (jv_object_has(jv_copy(r), jv_string("error"))) {
		autofree char *t = rpc_error_text(r);
		jv_free(r);
		fail(e, t, jv_invalid());
		return;
	}
	e->value = gl_json_get(r, "result");
	jv_free(r);
}

/* One "germline"-protocol call (call consumed) into e: the target reads
 * the call, writes one JSON value and exits. */
static void run_germline(struct io *io, jv call, struct end *e)
{
	jv in = jv_object_delete(call, jv_string("type"));
	in = jv_object_delete(in, jv_string("twin"));
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, in);
	jv_free(in);
	/* write while serving the relay: the input may be larger than the
	 * socket buffer */
	size_t off = 0;
	while (off < b.len) {
		ssize_t w = send(io->tfd, b.data + off, b.len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			break;
		struct pollfd p = {.fd = io->tfd, .events = POLLOUT};
		poll(&p, 1, 100);
	}
	shutdown(io->tfd, SHUT_WR);
	if (pump(io, false, e) < 0)
		return;
	int st = 0;
	while (waitpid(target, &st, 0) < 0 && errno == EINTR)
		;
	target = -1;
	jv v = gl_json_parse(io->out.data ? io->out.data : "", io->out.len);
	if (!jv_is_valid(v)) {
		jv_free(v);
		jv why = WIFEXITED(st) ? jv_string_fmt("exit status %d", WEXITSTATUS(st))
				       : jv_string_fmt("signal %d", WTERMSIG(st));
		fail(e, io->out.len ? "the tool's output is not one JSON value" : "the tool wrote no result",
		     why);
		return;
	}
	e->value = v;
}

/* ---- the end: state_put, then result (the last message) ------------------------ */

/* The workspace's tmpfs (limits.workspace_mb; lib/runtime/exec.c) is full: a page
 * cannot be written (or an inode made) there. statfs is denied to a copy,
 * so an unnamed file is the probe; it is gone when closed. */
static bool workspace_full(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ENOSPC;
	static const char page[4096];
	ssize_t w = write(fd, page, sizeof page);
	int e = errno;
	close(fd);
	return w < 0 && e == ENOSPC;
}

/* The call's end (e consumed): the target is killed unless a session's
 * server runs on, the workspace is stored (state_put), then the result.
 * true: the copy is done (main returns); false: the session's next call. */
static bool finish(struct end *e)
{
	bool keep = session && mcp_up && !e->error; /* a session's server runs on */
	if (target > 0 && !keep) {
		kill(target, SIGKILL);
		while (waitpid(target, NULL, 0) < 0 && errno == EINTR)
			;
		target = -1;
		mcp_up = false;
	}
	if (state_dir && !session && workspace_full(state_dir)) {
		/* over its quota: the call fails "disk", nothing is stored and
		 * the slot keeps what it had (issue 15) */
		send_msg(JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("error"),
				   jv_string("workspace: limits.workspace_mb reached (no space left)"),
				   jv_string("limit"), jv_string("disk")));
		return true;
	}
	autofree char *ws_err = NULL;
	jv files = state_dir && !e->error && !session ? gl_ws_collect(state_dir, &ws_err) : jv_invalid();
	if (ws_err) {
		/* out of bounds: the call fails and nothing is stored */
		autofree char *m = gl_xasprintf("workspace not stored: %s", ws_err);
		send_msg(JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("error"), jv_string(m)));
		return !session;
	}
	if (jv_is_valid(files)) {
		send_msg(JV_OBJECT(jv_string("type"), jv_string("state_put"), jv_string("key"),
				   jv_string(GL_WS_KEY), jv_string("value"), files));
		jv ok = recv_msg();
		jv_free(ok);
	} else {
		jv_free(files);
	}
	if (e->error) {
		drain_stderr();
		autofree char *tail = errlen ? gl_sanitize(errtail, errlen) : gl_xstrdup("");
		autofree char *m = jv_get_kind(e->value) == JV_KIND_STRING
				       ? gl_xasprintf("%s (%s)%s%s", e->error, jv_string_value(e->value),
						      errlen ? "; stderr: " : "", tail)
				       : gl_xasprintf("%s%s%s", e->error, errlen ? "; stderr: " : "", tail);
		send_msg(JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("error"), jv_string(m)));
	} else {
		send_msg(JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("value"),
				   jv_copy(e->value)));
	}
	return !session;
}

/* Serve one call message (consumed) into e; sd: the STATE_DIR argument. */
static void serve(struct io *io, jv call, const char *sd, char **targv, struct end *e)
{
	autofree char *function = gl_xstrdup(gl_json_get_str(call, "function"));
	jv sess = gl_json_get(call, "session");
	session = jv_get_kind(sess) == JV_KIND_TRUE;
	jv_free(sess);
	if (!session && !twin_env[0])
		twin_from(call);
	state_dir = NULL; /* nothing to store until the workspace is restored */
	if (sd && !session) {
		jv st = gl_json_get(call, "state");
		autofree char *why = gl_ws_restore(sd, st);
		jv_free(st);
		if (why) {
			jv_free(call);
			autofree char *m = gl_xasprintf("workspace not restored: the slot's %s is refused: %s",
							GL_WS_KEY, why);
			fail(e, m, jv_invalid());
			return;
		}
	}
	state_dir = sd;
	if (target <= 0) {
		if (io->tfd >= 0)
			close(io->tfd);
		free(io->out.data);
		*io = (struct io){.tfd = -1};
		if (start_target(targv, sd ? sd : "/nonexistent", &io->tfd, e) < 0) {
			jv_free(call);
			return;
		}
	}
	if (!strcmp(proto, "mcp-stdio")) {
		jv args = gl_json_get(call, "args");
		jv_free(call);
		run_mcp(io, function, jv_is_valid(args) ? args : jv_object(), e);
		return;
	}
	run_germline(io, call, e);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: gl-exec-host PROTOCOL STATE_DIR|- -- ENTRY...\n"
				"(started by gl-run for a runtime \"exec\" release; docs/exec.md)\n");
		return 2;
	}
	proto = argv[1];
	const char *sd = strcmp(argv[2], "-") ? argv[2] : NULL;
	for (int fd = CHAN; fd <= TARGET; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(CHAN, F_SETFL, O_NONBLOCK);
	fcntl(RELAY, F_SETFL, O_NONBLOCK);

	/* One call, or in session mode one after another until the broker
	 * ends the session (EOF on the channel: exit 3). */
	struct io io = {.tfd = -1};
	int status = 0;
	for (bool done = false; !done;) {
		jv call = try_recv_msg();
		const char *type = jv_is_valid(call) ? gl_json_get_str(call, "type") : NULL;
		if (!type || strcmp(type, "call") || !gl_json_get_str(call, "function")) {
			jv_free(call);
			status = 3;
			break;
		}
		struct end e = {.value = jv_invalid()};
		serve(&io, call, sd, argv + 4, &e);
		done = finish(&e);
		free(e.error);
		jv_free(e.value);
	}
	if (target > 0) { /* a session's server, still running */
		kill(target, SIGKILL);
		while (waitpid(target, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (io.tfd >= 0)
		close(io.tfd);
	free(io.out.data);
	free(twin_env[0]);
	free(twin_env[1]);
#if defined(__SANITIZE_ADDRESS__)
	/* LeakSanitizer stops the process with ptrace, which a copy's seccomp
	 * filter denies (lib/sandbox/sandbox.c): confined, the host ends as
	 * it always has; unconfined (tests/exec-host.bats drives it
	 * directly) it returns, and the leak check runs at exit. */
	if (prctl(PR_GET_SECCOMP) != 0)
		_exit(status);
#endif
	return status;
}
