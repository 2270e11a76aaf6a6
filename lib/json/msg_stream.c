/* msg_stream.c — the copy protocol's stream message (msg.h; docs/streams.md):
 * what an exec copy's relay sends for a TCP connection of its target to a
 * declared host:port destination. Parsed as strictly as every message:
 * exactly these fields, each bounded. */
#include "json/msg.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "json/json.h"

/* An integer of [lo, hi] in v (borrowed), else 0. */
static unsigned bounded_uint(jv v, unsigned lo, unsigned hi)
{
	if (jv_get_kind(v) != JV_KIND_NUMBER)
		return 0;
	double d = jv_number_value(v);
	return d >= lo && d <= hi && d == (double)(unsigned)d ? (unsigned)d : 0;
}

int gl_msg_parse_stream(struct gl_msg *m, struct gl_fail *f)
{
	int r = 0;
	bool have_data = false;
	jv_object_foreach(m->doc, k, v)
	{
		const char *name = jv_string_value(k);
		if (r != 0 || !strcmp(name, "type")) {
		} else if (!strcmp(name, "port")) {
			if (!(m->port = bounded_uint(v, 1, 65535)))
				r = gl_fail(f, GL_E_PROTOCOL, "stream: port is not 1..65535");
		} else if (!strcmp(name, "conn")) {
			if (!(m->conn = bounded_uint(v, 1, GL_MSG_STREAM_CONNS_MAX)))
				r = gl_fail(f, GL_E_PROTOCOL, "stream: conn is not 1..%d",
					    GL_MSG_STREAM_CONNS_MAX);
		} else if (!strcmp(name, "close")) {
			if (jv_get_kind(v) != JV_KIND_TRUE && jv_get_kind(v) != JV_KIND_FALSE)
				r = gl_fail(f, GL_E_PROTOCOL, "stream: close is not a boolean");
			m->close = jv_get_kind(v) == JV_KIND_TRUE;
		} else if (!strcmp(name, "data")) {
			size_t len = jv_get_kind(v) == JV_KIND_STRING
					 ? (size_t)jv_string_length_bytes(jv_copy(v))
					 : 0;
			/* the body holds the data: a view into m->doc is not needed */
			if (jv_get_kind(v) != JV_KIND_STRING || len > GL_MSG_STREAM_DATA_MAX / 3 * 4 + 4 ||
			    !(m->body = gl_b64_decode(jv_string_value(v), len, &m->body_len)) ||
			    m->body_len > GL_MSG_STREAM_DATA_MAX)
				r = gl_fail(f, GL_E_PROTOCOL,
					    "stream: data is not standard base64 of at most %d bytes",
					    GL_MSG_STREAM_DATA_MAX);
			have_data = true;
		} else {
			autofree char *q = gl_quote(name, strlen(name));
			r = gl_fail(f, GL_E_PROTOCOL, "stream: unknown field %s", q);
		}
		jv_free(k);
		jv_free(v);
	}
	if (r == 0 && (!m->port || !m->conn || !have_data))
		r = gl_fail(f, GL_E_PROTOCOL, "stream: needs port, conn and data");
	return r;
}

bool gl_stream_send_all(int fd, const unsigned char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		int64_t ms = (deadline - gl_mono_ns()) / 1000000;
		struct pollfd q = {.fd = fd, .events = POLLOUT};
		if (ms <= 0 || poll(&q, 1, ms > 60000 ? 60000 : (int)ms) < 0)
			return false;
	}
	return true;
}
