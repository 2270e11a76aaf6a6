/* msg.c — copy protocol framing and strict message parsing; see msg.h. */
#define _GNU_SOURCE
#include "json/msg.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <time.h>

#include "json/json.h"

int64_t gl_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const char *gl_msg_status_name(enum gl_msg_status s)
{
	switch (s) {
	case GL_MSG_OK: return "ok";
	case GL_MSG_EOF: return "end of stream";
	case GL_MSG_DEADLINE: return "deadline";
	case GL_MSG_TOO_BIG: return "message larger than the 64 MiB cap";
	case GL_MSG_SHORT: return "stream ended inside a message";
	case GL_MSG_IO: return "socket error";
	}
	return "?";
}

static enum gl_msg_status msg_read(int fd, int64_t deadline, struct gl_buf *buf);

/* Wait until fd is ready for events or the deadline passes: 1 ready,
 * 0 deadline, -1 error. EINTR restarts with the remaining time. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - gl_mono_ns();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = events};
		int64_t ms = (left + 999999) / 1000000;
		int r = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r > 0)
			return 1; /* readable, writable, or hung up: the I/O call tells */
	}
}

/* Read exactly n bytes into p. got counts what arrived (for EOF vs SHORT). */
static enum gl_msg_status read_exact(int fd, void *p, size_t n, int64_t deadline, size_t *got)
{
	*got = 0;
	while (*got < n) {
		ssize_t r = recv(fd, (char *)p + *got, n - *got, MSG_DONTWAIT);
		if (r > 0) {
			*got += (size_t)r;
			continue;
		}
		if (r == 0)
			return *got ? GL_MSG_SHORT : GL_MSG_EOF;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return GL_MSG_IO;
		int w = wait_fd(fd, POLLIN, deadline);
		if (w == 0)
			return GL_MSG_DEADLINE;
		if (w < 0)
			return GL_MSG_IO;
	}
	return GL_MSG_OK;
}

/* ---- GL_TESTING: the broker's own usage (tests/broker-bounds.bats) -------- */

#ifdef GL_TESTING
static int64_t cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
	       ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static int64_t last_msg_cpu = -1; /* CPU when the last message had arrived */
static pid_t report_pid;

static void usage_report(void)
{
	if (getpid() != report_pid)
		return; /* a forked child's exit */
	long hwm = -1;
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			hwm = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	int64_t now = cpu_ns();
	fprintf(stderr, "gl-usage: vmhwm_kb=%ld cpu_ms=%lld cpu_after_last_message_ms=%lld\n", hwm,
		(long long)(now / 1000000),
		(long long)(last_msg_cpu < 0 ? -1 : (now - last_msg_cpu) / 1000000));
}

void gl_msg_test_usage(void)
{
	const char *on = getenv("GL_TEST_USAGE");
	if (!on || strcmp(on, "1"))
		return;
	report_pid = getpid();
	atexit(usage_report);
}
#define MARK() (last_msg_cpu = cpu_ns())
#else
void gl_msg_test_usage(void) {}
#define MARK() ((void)0)
#endif

enum gl_msg_status gl_msg_read(int fd, int64_t deadline, struct gl_buf *buf)
{
	enum gl_msg_status st = msg_read(fd, deadline, buf);
	MARK();
	return st;
}

static enum gl_msg_status msg_read(int fd, int64_t deadline, struct gl_buf *buf)
{
	buf->len = 0;
	unsigned char hdr[4];
	size_t got;
	enum gl_msg_status st = read_exact(fd, hdr, 4, deadline, &got);
	if (st != GL_MSG_OK)
		return st;
	uint32_t n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (n > GL_MSG_MAX)
		return GL_MSG_TOO_BIG;
	/* Grow in steps of at most 1 MiB beyond what has arrived: a length
	 * prefix alone never makes the broker allocate 64 MiB. */
	size_t done = 0;
	while (done < n) {
		size_t step = n - done < (1u << 20) ? n - done : (1u << 20);
		gl_buf_reserve(buf, step + 1);
		st = read_exact(fd, buf->data + done, step, deadline, &got);
		done += got;
		buf->len = done;
		if (st == GL_MSG_EOF)
			return GL_MSG_SHORT;
		if (st != GL_MSG_OK)
			return st;
	}
	gl_buf_reserve(buf, 1);
	buf->data[buf->len] = 0;
	return GL_MSG_OK;
}

enum gl_msg_status gl_msg_write(int fd, int64_t deadline, const char *json, size_t len)
{
	if (len > GL_MSG_MAX)
		return GL_MSG_TOO_BIG;
	unsigned char hdr[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
				(unsigned char)(len >> 8), (unsigned char)len};
	const char *part[2] = {(const char *)hdr, json};
	size_t plen[2] = {4, len};
	for (int i = 0; i < 2; i++) {
		size_t off = 0;
		while (off < plen[i]) {
			ssize_t r = send(fd, part[i] + off, plen[i] - off, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (r > 0) {
				off += (size_t)r;
				continue;
			}
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
				return GL_MSG_IO;
			int w = wait_fd(fd, POLLOUT, deadline);
			if (w == 0)
				return GL_MSG_DEADLINE;
			if (w < 0)
				return GL_MSG_IO;
		}
	}
	return GL_MSG_OK;
}

enum gl_msg_status gl_msg_send(int fd, int64_t deadline, jv v)
{
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, v);
	return gl_msg_write(fd, deadline, b.data, b.len);
}

unsigned char *gl_b64_decode(const char *s, size_t len, size_t *out_len)
{
	size_t cap = len / 4 * 3 + 3;
	unsigned char *out = gl_xmalloc(cap);
	const char *end = NULL;
	if (sodium_base642bin(out, cap, s, len, NULL, out_len, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    end != s + len) {
		free(out);
		return NULL;
	}
	return out;
}

void gl_b64_encode(struct gl_buf *b, const unsigned char *p, size_t n)
{
	size_t need = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	gl_buf_reserve(b, need);
	sodium_bin2base64(b->data + b->len, need, p, n, sodium_base64_VARIANT_ORIGINAL);
	b->len += need - 1; /* without the NUL */
}

/* ---- strict parsing ------------------------------------------------------ */

/* A string field of o (borrowed); NULL if not a string. *len its bytes. */
static const char *str_of(jv v, size_t *len)
{
	if (jv_get_kind(v) != JV_KIND_STRING)
		return NULL;
	*len = (size_t)jv_string_length_bytes(jv_copy(v));
	return jv_string_value(v);
}

/* RFC 9110 token characters (method and header names). */
static bool token_ok(const char *s, size_t len, size_t max)
{
	if (len == 0 || len > max || strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f || strchr("\"(),/:;<=>?@[\\]{}", c))
			return false;
	}
	return true;
}

/* A header value: no CR, LF or NUL (no header injection), bounded. */
static bool value_ok(const char *s, size_t len)
{
	if (len > GL_MSG_HEADER_MAX || strlen(s) != len)
		return false;
	return !strpbrk(s, "\r\n");
}

static int parse_headers(struct gl_msg *m, jv h, struct gl_fail *f)
{
	if (jv_get_kind(h) != JV_KIND_ARRAY)
		return gl_fail(f, GL_E_PROTOCOL,
			       "effect: headers is not an array of [name, value] pairs");
	int n = jv_array_length(jv_copy(h));
	if (n > GL_MSG_HEADERS_MAX)
		return gl_fail(f, GL_E_PROTOCOL, "effect: %d headers (at most %d)", n,
			       GL_MSG_HEADERS_MAX);
	m->header = gl_xcalloc((size_t)n + 1, sizeof *m->header);
	for (int i = 0; i < n; i++) {
		jv pair = jv_array_get(jv_copy(h), i);
		bool shape = jv_get_kind(pair) == JV_KIND_ARRAY &&
			     jv_array_length(jv_copy(pair)) == 2;
		jv nm = shape ? jv_array_get(jv_copy(pair), 0) : jv_invalid();
		jv val = shape ? jv_array_get(jv_copy(pair), 1) : jv_invalid();
		size_t nl = 0, vl = 0;
		const char *ns = str_of(nm, &nl), *vs = str_of(val, &vl);
		/* m->doc holds the strings; these are borrowed views into it. */
		jv_free(nm);
		jv_free(val);
		jv_free(pair);
		if (!shape || !ns || !vs)
			return gl_fail(f, GL_E_PROTOCOL,
				       "effect: headers[%d] is not a [name, value] pair of strings",
				       i);
		if (!token_ok(ns, nl, 256))
			return gl_fail(f, GL_E_PROTOCOL,
				       "effect: headers[%d]: name is not an HTTP token", i);
		if (!value_ok(vs, vl))
			return gl_fail(f, GL_E_PROTOCOL,
				       "effect: headers[%d]: value holds CR, LF or NUL, or is "
				       "longer than %d bytes",
				       i, GL_MSG_HEADER_MAX);
		m->header[m->nheader++] = (struct gl_msg_header){ns, vs};
	}
	return 0;
}

static int parse_effect(struct gl_msg *m, struct gl_fail *f)
{
	jv method = jv_invalid(), url = jv_invalid(), headers = jv_invalid(), body = jv_invalid();
	int r = 0;
	jv_object_foreach(m->doc, k, v)
	{
		const char *key = jv_string_value(k);
		jv *slot = !strcmp(key, "method")    ? &method
			   : !strcmp(key, "url")     ? &url
			   : !strcmp(key, "headers") ? &headers
			   : !strcmp(key, "body")    ? &body
						     : NULL;
		if (slot) {
			*slot = jv_copy(v);
		} else if (strcmp(key, "type") && r == 0) {
			autofree char *q = gl_quote(key, strlen(key));
			r = gl_fail(f, GL_E_PROTOCOL, "effect: unknown field %s", q);
		}
		jv_free(k);
		jv_free(v);
	}
	size_t len = 0;
	if (r == 0) {
		m->method = str_of(method, &len);
		if (!m->method || !token_ok(m->method, len, GL_MSG_METHOD_MAX))
			r = gl_fail(f, GL_E_PROTOCOL,
				    "effect: method is not an HTTP token of 1..%d bytes",
				    GL_MSG_METHOD_MAX);
	}
	if (r == 0) {
		m->url = str_of(url, &len);
		if (!m->url || len == 0 || len > GL_MSG_URL_MAX || strlen(m->url) != len)
			r = gl_fail(f, GL_E_PROTOCOL, "effect: url is not a string of 1..%d bytes",
				    GL_MSG_URL_MAX);
	}
	if (r == 0 && jv_is_valid(headers))
		r = parse_headers(m, headers, f);
	if (r == 0 && jv_is_valid(body)) {
		const char *b = str_of(body, &len);
		if (!b || !(m->body = gl_b64_decode(b, len, &m->body_len)))
			r = gl_fail(f, GL_E_PROTOCOL,
				    "effect: body is not a standard base64 string");
	}
	/* m->doc holds every string these borrowed views point into. */
	jv_free(method);
	jv_free(url);
	jv_free(headers);
	jv_free(body);
	return r;
}

int gl_msg_log_level(const char *name)
{
	static const char *const levels[] = {"debug",	 "info",  "notice", "warning", "error",
					     "critical", "alert", "emergency", NULL};
	for (int i = 0; name && levels[i]; i++)
		if (!strcmp(name, levels[i]))
			return i;
	return -1;
}

/* One log entry (borrowed) as the broker keeps it: {"level","logger"?,
 * "data"} (the server's _meta dropped), or jv_invalid() when it is not one. */
static jv log_entry(jv e)
{
	if (jv_get_kind(e) != JV_KIND_OBJECT)
		return jv_invalid();
	const char *level = gl_json_get_str(e, "level");
	bool ok = gl_msg_log_level(level) >= 0;
	jv logger = gl_json_get(e, "logger"), data = gl_json_get(e, "data");
	if (jv_is_valid(logger) && (jv_get_kind(logger) != JV_KIND_STRING ||
				    jv_string_length_bytes(jv_copy(logger)) > 128 ||
				    strlen(jv_string_value(logger)) !=
					(size_t)jv_string_length_bytes(jv_copy(logger))))
		ok = false;
	autobuf struct gl_buf b = {0};
	if (ok && jv_is_valid(data))
		gl_json_dump(&b, data);
	if (!ok || !jv_is_valid(data) || b.len > GL_MSG_LOG_ENTRY_MAX) {
		jv_free(logger);
		jv_free(data);
		return jv_invalid();
	}
	jv out = JV_OBJECT(jv_string("level"), jv_string(level), jv_string("data"), data);
	if (jv_is_valid(logger))
		return jv_object_set(out, jv_string("logger"), logger);
	jv_free(logger);
	return out;
}

/* A result's field name (v, borrowed): an array of at most max entries,
 * each made by entry (jv_invalid(): not one, which shape describes),
 * kept as *out; 0, or -1 with f naming the first bad entry. */
static int entries_in(jv v, const char *name, int max, jv (*entry)(jv), const char *shape,
		      jv *out, struct gl_fail *f)
{
	if (jv_get_kind(v) != JV_KIND_ARRAY || jv_array_length(jv_copy(v)) > max)
		return gl_fail(f, GL_E_PROTOCOL, "result: %s is not an array of at most %d entries",
			       name, max);
	*out = jv_array();
	int r = 0;
	jv_array_foreach(v, i, e)
	{
		jv k = r == 0 ? entry(e) : jv_invalid();
		if (jv_is_valid(k))
			*out = jv_array_append(*out, k);
		else if (r == 0)
			r = gl_fail(f, GL_E_PROTOCOL, "result: %s[%d] is not %s", name, i, shape);
		jv_free(e);
	}
	return r;
}

/* A result's "log" (borrowed): at most GL_MSG_LOG_MAX log_entry's. */
static int log_in(jv v, jv *out, struct gl_fail *f)
{
	char shape[128];
	snprintf(shape, sizeof shape,
		 "{\"level\" (an MCP logging level), \"logger\"?, \"data\"} of at most %d bytes",
		 GL_MSG_LOG_ENTRY_MAX);
	return entries_in(v, "log", GL_MSG_LOG_MAX, log_entry, shape, out, f);
}

/* One progress entry (borrowed) as the broker keeps it: {"progress",
 * "total"?, "message"?} (the server's token and _meta dropped: the host
 * kept only its own token's), or jv_invalid() when it is not one. */
static jv progress_entry(jv e)
{
	if (jv_get_kind(e) != JV_KIND_OBJECT)
		return jv_invalid();
	jv out = jv_object();
	bool ok = true;
	jv_object_foreach(e, k, v)
	{
		const char *n = jv_string_value(k);
		jv_kind kind = jv_get_kind(v);
		if (!strcmp(n, "progress") || !strcmp(n, "total"))
			ok = ok && kind == JV_KIND_NUMBER && isfinite(jv_number_value(v));
		else if (!strcmp(n, "message"))
			ok = ok && kind == JV_KIND_STRING &&
			     jv_string_length_bytes(jv_copy(v)) <= GL_MSG_PROGRESS_TEXT_MAX &&
			     strlen(jv_string_value(v)) == (size_t)jv_string_length_bytes(jv_copy(v));
		else
			ok = false;
		out = ok ? jv_object_set(out, jv_copy(k), jv_copy(v)) : out;
		jv_free(k);
		jv_free(v);
	}
	if (ok && jv_object_has(jv_copy(out), jv_string("progress")))
		return out;
	jv_free(out);
	return jv_invalid();
}

/* A result's "progress" (borrowed): at most GL_MSG_PROGRESS_MAX
 * progress_entry's. */
static int progress_in(jv v, jv *out, struct gl_fail *f)
{
	char shape[128];
	snprintf(shape, sizeof shape,
		 "{\"progress\", \"total\"?, \"message\"?} (finite numbers, a message of at most "
		 "%d bytes)",
		 GL_MSG_PROGRESS_TEXT_MAX);
	return entries_in(v, "progress", GL_MSG_PROGRESS_MAX, progress_entry, shape, out, f);
}

/* state_put and result: the fields each allows, exactly. */
static int parse_simple(struct gl_msg *m, const char *type, struct gl_fail *f)
{
	bool put = m->type == GL_MSG_STATE_PUT;
	int r = 0;
	jv key = jv_invalid(), error = jv_invalid();
	jv_object_foreach(m->doc, k, v)
	{
		const char *name = jv_string_value(k);
		if (!strcmp(name, "type")) {
		} else if (!strcmp(name, "value")) {
			m->value = jv_copy(v);
		} else if (put && !strcmp(name, "key")) {
			key = jv_copy(v);
		} else if (!put && !strcmp(name, "error")) {
			error = jv_copy(v);
		} else if (!put && !strcmp(name, "log")) {
			if (r == 0)
				r = log_in(v, &m->log, f);
		} else if (!put && !strcmp(name, "progress")) {
			if (r == 0 && !jv_is_valid(m->progress))
				r = progress_in(v, &m->progress, f);
		} else if (!put && !strcmp(name, "limit") && r == 0) {
			/* which bound the copy reached (SPEC §6): "disk" only */
			if (jv_get_kind(v) == JV_KIND_STRING && !strcmp(jv_string_value(v), "disk"))
				m->limit = "disk";
			else
				r = gl_fail(f, GL_E_PROTOCOL, "result: limit is not \"disk\"");
		} else if (r == 0) {
			/* e.g. a state write naming a horizon: the broker picks
			 * the slot, always the copy's own (Definition 3). */
			autofree char *q = gl_quote(name, strlen(name));
			r = gl_fail(f, GL_E_PROTOCOL, "%s: unknown field %s", type, q);
		}
		jv_free(k);
		jv_free(v);
	}
	size_t len = 0;
	if (r == 0 && put) {
		m->key = str_of(key, &len);
		if (!m->key || len == 0 || len > GL_MSG_KEY_MAX || strlen(m->key) != len)
			r = gl_fail(f, GL_E_PROTOCOL,
				    "state_put: key is not a string of 1..%d bytes",
				    GL_MSG_KEY_MAX);
		else if (!jv_is_valid(m->value))
			r = gl_fail(f, GL_E_PROTOCOL, "state_put: no value");
	}
	if (r == 0 && !put) {
		m->error = jv_is_valid(error) ? str_of(error, &len) : NULL;
		if (jv_is_valid(error) && !m->error)
			r = gl_fail(f, GL_E_PROTOCOL, "result: error is not a string");
		else if (jv_is_valid(error) == jv_is_valid(m->value))
			r = gl_fail(f, GL_E_PROTOCOL,
				    "result: needs exactly one of \"value\" or \"error\"");
		else if (m->limit && !m->error)
			r = gl_fail(f, GL_E_PROTOCOL, "result: a limit without an error");
	}
	jv_free(key); /* m->doc holds the strings */
	jv_free(error);
	return r;
}

int gl_msg_parse(struct gl_msg *m, const char *buf, size_t len, struct gl_fail *f)
{
	memset(m, 0, sizeof *m);
	m->value = jv_invalid();
	m->doc = jv_invalid();
	m->log = jv_invalid();
	m->progress = jv_invalid();
	/* Bounded by construction (msg.h): the weighted nodes are counted
	 * before any jv is built, so the jv of one message costs O(the
	 * limit), whatever the copy sent (paper §III-A: the release, and so
	 * every byte a copy sends, is the adversary's). */
	if (!gl_json_nodes_off() && gl_json_nodes(buf, len, GL_MSG_NODES_MAX) > GL_MSG_NODES_MAX)
		return gl_fail(f, GL_E_PROTOCOL,
			       "more than %u JSON nodes in one message (an array or object "
			       "weighs %d; lib/json/msg.h)",
			       GL_MSG_NODES_MAX, GL_JSON_CONTAINER_WEIGHT);
	m->doc = gl_json_parse_unbounded(buf, len);
	if (!jv_is_valid(m->doc)) {
		jv msg = jv_invalid_get_msg(m->doc);
		m->doc = jv_invalid();
		int r = gl_fail(f, GL_E_PROTOCOL, "not JSON: %s", jv_string_value(msg));
		jv_free(msg);
		return r;
	}
	if (jv_get_kind(m->doc) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_PROTOCOL, "not a JSON object");
	const char *type = gl_json_get_str(m->doc, "type");
	if (!type)
		return gl_fail(f, GL_E_PROTOCOL, "no \"type\"");
	if (!strcmp(type, "effect")) {
		m->type = GL_MSG_EFFECT;
		return parse_effect(m, f);
	}
	if (!strcmp(type, "state_put")) {
		m->type = GL_MSG_STATE_PUT;
		return parse_simple(m, type, f);
	}
	if (!strcmp(type, "result")) {
		m->type = GL_MSG_RESULT;
		return parse_simple(m, type, f);
	}
	if (!strcmp(type, "stream")) {
		m->type = GL_MSG_STREAM;
		return gl_msg_parse_stream(m, f);
	}
	autofree char *q = gl_quote(type, strlen(type));
	return gl_fail(f, GL_E_PROTOCOL, "unknown type %s (effect, stream, state_put, result)",
		       q);
}

void gl_msg_free(struct gl_msg *m)
{
	free(m->header);
	free(m->body);
	jv_free(m->value);
	jv_free(m->doc);
	jv_free(m->log);
	jv_free(m->progress);
	memset(m, 0, sizeof *m);
	m->value = jv_invalid();
	m->doc = jv_invalid();
	m->log = jv_invalid();
	m->progress = jv_invalid();
}
