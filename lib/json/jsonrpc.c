/* jsonrpc.c — newline-delimited JSON-RPC 2.0 over a byte stream; see
 * jsonrpc.h. */
#define _GNU_SOURCE
#include "json/jsonrpc.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "json/json.h"
#include "json/msg.h"

const char *gl_rpc_status_name(enum gl_rpc_status s)
{
	switch (s) {
	case GL_RPC_OK: return "ok";
	case GL_RPC_EOF: return "end of stream";
	case GL_RPC_DEADLINE: return "deadline";
	case GL_RPC_TOO_LONG: return "line too long";
	case GL_RPC_PARSE: return "not JSON";
	case GL_RPC_INVALID: return "not a JSON-RPC 2.0 message";
	case GL_RPC_IO: return "read error";
	}
	return "?";
}

void gl_rpc_reader_init(struct gl_rpc_reader *r, int fd)
{
	r->fd = fd;
	r->pos = r->end = 0;
	r->eof = 0;
}

/* Wait for fd until the deadline (-1: for ever): 1 ready, 0 deadline,
 * -1 error. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int ms = -1;
		if (deadline >= 0) {
			int64_t left = deadline - gl_mono_ns();
			if (left <= 0)
				return 0;
			int64_t m = (left + 999999) / 1000000;
			ms = m > 60000 ? 60000 : (int)m;
		}
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r > 0)
			return 1;
	}
}

/* Refill the buffer: 1 bytes arrived, 0 end of stream, or a status. */
static int fill(struct gl_rpc_reader *r, int64_t deadline, enum gl_rpc_status *st)
{
	if (r->pos == r->end)
		r->pos = r->end = 0;
	for (;;) {
		ssize_t n = read(r->fd, r->buf + r->end, sizeof r->buf - r->end);
		if (n > 0) {
			r->end += (size_t)n;
			return 1;
		}
		if (n == 0) {
			r->eof = 1;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			*st = GL_RPC_IO;
			return -1;
		}
		int w = wait_fd(r->fd, POLLIN, deadline);
		if (w == 0) {
			*st = GL_RPC_DEADLINE;
			return -1;
		}
		if (w < 0) {
			*st = GL_RPC_IO;
			return -1;
		}
	}
}

/* The next line into out (without '\n'), skipping one above cap. */
static enum gl_rpc_status next_line(struct gl_rpc_reader *r, int64_t deadline, size_t cap,
				    struct gl_buf *out)
{
	out->len = 0;
	int skipping = 0;
	for (;;) {
		char *nl = memchr(r->buf + r->pos, '\n', r->end - r->pos);
		size_t take = nl ? (size_t)(nl - (r->buf + r->pos)) : r->end - r->pos;
		if (!skipping && out->len + take > cap) {
			skipping = 1;
			out->len = 0;
		}
		if (!skipping)
			gl_buf_add(out, r->buf + r->pos, take);
		r->pos += take;
		if (nl) {
			r->pos++; /* the '\n' */
			return skipping ? GL_RPC_TOO_LONG : GL_RPC_OK;
		}
		if (r->eof)
			return GL_RPC_EOF; /* a partial last line is not a message */
		/* Keep the buffer compact so a refill always has room. */
		r->pos = r->end = 0;
		enum gl_rpc_status st = GL_RPC_IO;
		int f = fill(r, deadline, &st);
		if (f < 0)
			return st;
		if (f == 0)
			return GL_RPC_EOF;
	}
}

static int valid_id(jv id, int allow_null)
{
	jv_kind k = jv_get_kind(id);
	if (k == JV_KIND_STRING)
		return 1;
	if (k == JV_KIND_NULL)
		return allow_null;
	if (k != JV_KIND_NUMBER)
		return 0;
	double d = jv_number_value(id);
	return d == floor(d) && fabs(d) <= 9007199254740991.0;
}

/* Every member of v (borrowed) is one a message of kind k may have: 0, or
 * -1 with f naming the first other one (quoted: the peer chose it). */
static int members_known(jv v, enum gl_rpc_kind k, struct gl_fail *f)
{
	jv_object_keys_foreach(v, key)
	{
		const char *s = jv_string_value(key);
		int ok = !strcmp(s, "jsonrpc") || !strcmp(s, "id") ||
			 (k <= GL_RPC_NOTIFICATION && (!strcmp(s, "method") || !strcmp(s, "params"))) ||
			 (k == GL_RPC_RESULT && !strcmp(s, "result")) ||
			 (k == GL_RPC_ERROR && !strcmp(s, "error"));
		if (!ok) {
			autofree char *q = gl_quote(s, (size_t)jv_string_length_bytes(jv_copy(key)));
			int r = gl_fail(f, GL_E_BAD_RECORD, "unknown member %s", q);
			jv_free(key);
			return r;
		}
		jv_free(key);
	}
	return 0;
}

int gl_rpc_validate(jv v, enum gl_rpc_kind *kind, struct gl_fail *f)
{
	if (jv_get_kind(v) == JV_KIND_ARRAY)
		return gl_fail(f, GL_E_BAD_RECORD,
			       "a batch (array); MCP 2025-06-18 has no batches");
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_BAD_RECORD, "a message must be an object");
	const char *ver = gl_json_get_str(v, "jsonrpc");
	if (!ver || strcmp(ver, "2.0") != 0)
		return gl_fail(f, GL_E_BAD_RECORD, "\"jsonrpc\" must be \"2.0\"");
	int has_id = jv_object_has(jv_copy(v), jv_string("id"));
	int has_method = jv_object_has(jv_copy(v), jv_string("method"));
	int has_result = jv_object_has(jv_copy(v), jv_string("result"));
	int has_error = jv_object_has(jv_copy(v), jv_string("error"));
	enum gl_rpc_kind k;
	if (has_method) {
		if (has_result || has_error)
			return gl_fail(f, GL_E_BAD_RECORD,
				       "a request carries \"result\" or \"error\"");
		k = has_id ? GL_RPC_REQUEST : GL_RPC_NOTIFICATION;
	} else if (has_result && has_error) {
		return gl_fail(f, GL_E_BAD_RECORD,
			       "a response carries both \"result\" and \"error\"");
	} else if (has_result) {
		k = GL_RPC_RESULT;
	} else if (has_error) {
		k = GL_RPC_ERROR;
	} else {
		return gl_fail(f, GL_E_BAD_RECORD,
			       "neither \"method\" nor \"result\" nor \"error\"");
	}
	if ((k == GL_RPC_RESULT || k == GL_RPC_ERROR) && !has_id)
		return gl_fail(f, GL_E_BAD_RECORD, "a response without \"id\"");
	if (members_known(v, k, f) < 0)
		return -1;
	if (has_id) {
		jv id = jv_object_get(jv_copy(v), jv_string("id"));
		int ok = valid_id(id, k == GL_RPC_ERROR);
		jv_free(id);
		if (!ok)
			return gl_fail(f, GL_E_BAD_RECORD, "\"id\" must be a string or an integer");
	}
	if (k <= GL_RPC_NOTIFICATION) {
		const char *m = gl_json_get_str(v, "method");
		if (!m || !*m || strlen(m) > GL_RPC_METHOD_MAX)
			return gl_fail(f, GL_E_BAD_RECORD,
				       "\"method\" must be a non-empty string of at most %d bytes",
				       GL_RPC_METHOD_MAX);
		jv p = jv_object_get(jv_copy(v), jv_string("params"));
		jv_kind pk = jv_get_kind(p);
		jv_free(p);
		if (pk != JV_KIND_INVALID && pk != JV_KIND_OBJECT && pk != JV_KIND_ARRAY)
			return gl_fail(f, GL_E_BAD_RECORD,
				       "\"params\" must be an object or an array");
	}
	if (k == GL_RPC_ERROR) {
		jv e = jv_object_get(jv_copy(v), jv_string("error"));
		int64_t code;
		int ok = jv_get_kind(e) == JV_KIND_OBJECT && gl_json_get_int(e, "code", &code) == 0 &&
			 gl_json_get_str(e, "message") != NULL;
		jv_free(e);
		if (!ok)
			return gl_fail(f, GL_E_BAD_RECORD,
				       "\"error\" must hold an integer \"code\" and a string \"message\"");
	}
	*kind = k;
	return 0;
}

enum gl_rpc_status gl_rpc_read(struct gl_rpc_reader *r, int64_t deadline, size_t cap, jv *msg,
			       enum gl_rpc_kind *kind, struct gl_fail *f)
{
	*msg = jv_invalid();
	if (!cap)
		cap = GL_RPC_LINE_MAX;
	struct gl_buf line = {0};
	enum gl_rpc_status st;
	for (;;) {
		st = next_line(r, deadline, cap, &line);
		if (st != GL_RPC_OK)
			break;
		if (line.len && line.data[line.len - 1] == '\r')
			line.len--;
		size_t i = 0;
		while (i < line.len && (line.data[i] == ' ' || line.data[i] == '\t'))
			i++;
		if (i < line.len)
			break; /* not blank */
	}
	if (st == GL_RPC_TOO_LONG)
		gl_fail_set(f, GL_E_TOO_LONG, "a line above %zu bytes", cap);
	if (st != GL_RPC_OK) {
		free(line.data);
		return st;
	}
	jv v = gl_json_parse(line.data, line.len);
	free(line.data);
	if (!jv_is_valid(v)) {
		jv m = jv_invalid_get_msg(v);
		gl_fail_set(f, GL_E_BAD_JSON, "%s",
			    jv_get_kind(m) == JV_KIND_STRING ? jv_string_value(m) : "invalid JSON");
		jv_free(m);
		return GL_RPC_PARSE;
	}
	if (gl_rpc_validate(v, kind, f) != 0) {
		*msg = v;
		return GL_RPC_INVALID;
	}
	*msg = v;
	return GL_RPC_OK;
}

static jv base(void)
{
	return jv_object_set(jv_object(), jv_string("jsonrpc"), jv_string("2.0"));
}

jv gl_rpc_request(jv id, const char *method, jv params)
{
	jv m = jv_object_set(base(), jv_string("id"), id);
	m = jv_object_set(m, jv_string("method"), jv_string(method));
	if (jv_get_kind(params) == JV_KIND_NULL)
		jv_free(params);
	else
		m = jv_object_set(m, jv_string("params"), params);
	return m;
}

jv gl_rpc_notification(const char *method, jv params)
{
	jv m = jv_object_set(base(), jv_string("method"), jv_string(method));
	if (jv_get_kind(params) == JV_KIND_NULL)
		jv_free(params);
	else
		m = jv_object_set(m, jv_string("params"), params);
	return m;
}

jv gl_rpc_result(jv id, jv result)
{
	jv m = jv_object_set(base(), jv_string("id"), id);
	return jv_object_set(m, jv_string("result"), result);
}

jv gl_rpc_error(jv id, int code, const char *message, jv data)
{
	jv e = jv_object_set(jv_object(), jv_string("code"), jv_number(code));
	e = jv_object_set(e, jv_string("message"), jv_string(message));
	if (jv_get_kind(data) == JV_KIND_NULL)
		jv_free(data);
	else
		e = jv_object_set(e, jv_string("data"), data);
	jv m = jv_object_set(base(), jv_string("id"), id);
	return jv_object_set(m, jv_string("error"), e);
}

int gl_rpc_write(int fd, int64_t deadline, jv msg)
{
	struct gl_buf b = {0};
	gl_json_dump(&b, msg);
	if (b.len > GL_RPC_LINE_MAX) {
		free(b.data);
		errno = EMSGSIZE;
		return -1;
	}
	gl_buf_addc(&b, '\n');
	size_t off = 0;
	int is_sock = 1;
	while (off < b.len) {
		ssize_t n = is_sock ? send(fd, b.data + off, b.len - off, MSG_NOSIGNAL)
				    : write(fd, b.data + off, b.len - off);
		if (n < 0 && is_sock && errno == ENOTSOCK) {
			is_sock = 0;
			continue;
		}
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n == 0)
			errno = EIO;
		else if (errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int w = wait_fd(fd, POLLOUT, deadline);
			if (w == 0)
				errno = ETIMEDOUT;
			if (w > 0)
				continue;
		}
		int e = errno;
		free(b.data);
		errno = e;
		return -1;
	}
	free(b.data);
	return 0;
}
