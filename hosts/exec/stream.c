/* stream.c — gl-exec-host's TCP relay for host:port destinations
 * (docs/streams.md). The launch gave the host one listening socket per
 * declared stream port, on fds GL_EXEC_STREAM_FD… of 127.0.0.1 in the
 * copy's own network namespace (the destination's host resolves there).
 * What the target writes on a connection goes to the broker as "stream"
 * messages on the channel, the copy's only channel (paper A1); what the
 * broker answers is written back. The broker decides everything
 * (lib/broker/stream.c): delivered, answered from the record, or closed.
 *
 * A connection the target leaves idle is asked about again (an empty
 * message) while the broker says more may come ("more"): the destination
 * may speak unasked, and speaks first in some protocols. The target is
 * hostile: every read is bounded, and a connection that will not take
 * what the broker answered within IO_MS is dropped. */
#define _GNU_SOURCE
#include "host_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/json.h"
#include "json/msg.h"
#include "release/manifest.h"
#include "runtime/exec.h"

#define IDLE_MS 2 /* a connection idle this long is asked about */

struct listener {
	int fd;
	unsigned port;
};
struct sconn {
	int fd;
	unsigned port, num;
	bool more;    /* the broker may have more for it unasked */
	int64_t last; /* when it was last relayed (CLOCK_MONOTONIC ns) */
};

static struct listener lis[GL_STREAM_DESTS_MAX];
static size_t nlis;
static struct sconn conns[GL_MSG_STREAM_CONNS_MAX];
static size_t nconns;
static unsigned opened; /* connection numbers given so far (1…) */

void stream_init(void)
{
	for (int fd = GL_EXEC_STREAM_FD; nlis < GL_STREAM_DESTS_MAX; fd++) {
		struct stat st;
		struct sockaddr_in a;
		socklen_t al = sizeof a;
		if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    getsockname(fd, (struct sockaddr *)&a, &al) < 0 || a.sin_family != AF_INET)
			break;
		fcntl(fd, F_SETFD, FD_CLOEXEC); /* the host's, never the target's */
		lis[nlis++] = (struct listener){.fd = fd, .port = ntohs(a.sin_port)};
	}
}

size_t stream_pollfds(struct pollfd *p)
{
	size_t n = 0;
	for (size_t i = 0; i < nlis; i++)
		p[n++] = (struct pollfd){.fd = lis[i].fd, .events = POLLIN};
	for (size_t i = 0; i < nconns; i++)
		p[n++] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
	return n;
}

int stream_timeout(void)
{
	int64_t now = gl_mono_ns(), soonest = -1;
	for (size_t i = 0; i < nconns; i++)
		if (conns[i].more) {
			int64_t left = conns[i].last + (int64_t)IDLE_MS * 1000000 - now;
			left = left < 0 ? 0 : left;
			soonest = soonest < 0 || left < soonest ? left : soonest;
		}
	return soonest < 0 ? -1 : (int)((soonest + 999999) / 1000000);
}

static void drop(size_t i, bool reset)
{
	if (reset) { /* denied: as if refused */
		struct linger lg = {1, 0};
		setsockopt(conns[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	}
	close(conns[i].fd);
	conns[i] = conns[--nconns];
}

/* One message for conns[i] (data, n bytes; close: the target closed), the
 * broker's answer written back. Whether the connection is still open. */
static bool exchange(size_t i, const char *data, size_t n, bool close_it)
{
	struct sconn *c = &conns[i];
	struct gl_buf b64 = {0};
	gl_b64_encode(&b64, (const unsigned char *)(data ? data : ""), n);
	jv m = JV_OBJECT(jv_string("type"), jv_string("stream"), jv_string("port"),
			 jv_number(c->port), jv_string("conn"), jv_number(c->num), jv_string("data"),
			 jv_string_sized(b64.data ? b64.data : "", (int)b64.len));
	free(b64.data);
	if (close_it)
		m = jv_object_set(m, jv_string("close"), jv_true());
	send_msg(m);
	jv reply = recv_msg();
	const char *type = gl_json_get_str(reply, "type");
	if (!type || strcmp(type, "reply"))
		_exit(3); /* the broker broke the protocol */
	bool open = !close_it;
	if (gl_json_get_bool(reply, "denied", 0) == 1) {
		drop(i, true);
		jv_free(reply);
		return false;
	}
	const char *d = gl_json_get_str(reply, "data");
	size_t len = 0;
	unsigned char *bytes = d ? gl_b64_decode(d, strlen(d), &len) : NULL;
	if (open && bytes && len &&
	    !gl_stream_send_all(c->fd, bytes, len, gl_mono_ns() + (int64_t)IO_MS * 1000000))
		open = false;
	free(bytes);
	c->more = gl_json_get_bool(reply, "more", 0) == 1;
	c->last = gl_mono_ns();
	if (gl_json_get_bool(reply, "eof", 0) == 1)
		open = false;
	jv_free(reply);
	if (!open)
		drop(i, false);
	return open;
}

static void accept_on(const struct listener *l)
{
	int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (nconns == GL_MSG_STREAM_CONNS_MAX || opened == GL_MSG_STREAM_CONNS_MAX) {
		close(fd); /* past the bound: refused */
		return;
	}
	/* asked about once idle: the destination may speak first */
	conns[nconns++] = (struct sconn){
	    .fd = fd, .port = l->port, .num = ++opened, .more = true, .last = gl_mono_ns()};
}

void stream_handle(const struct pollfd *p, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < nlis; i++, k++)
		if (p[k].revents & POLLIN)
			accept_on(&lis[i]);
	/* conns as they were polled (p[nlis…]); one may be dropped meanwhile */
	int fds[GL_MSG_STREAM_CONNS_MAX];
	short rev[GL_MSG_STREAM_CONNS_MAX];
	size_t m = 0;
	for (; k < n; k++) {
		fds[m] = p[k].fd;
		rev[m++] = p[k].revents;
	}
	for (size_t j = 0; j < m; j++) {
		size_t i = 0;
		while (i < nconns && conns[i].fd != fds[j])
			i++;
		if (i == nconns)
			continue;
		if (rev[j] & (POLLIN | POLLHUP | POLLERR)) {
			char tmp[65536];
			ssize_t r = recv(conns[i].fd, tmp, sizeof tmp, MSG_DONTWAIT);
			if (r > 0)
				exchange(i, tmp, (size_t)r, false);
			else if (r == 0 || (errno != EAGAIN && errno != EINTR))
				exchange(i, NULL, 0, true);
		}
	}
	/* idle connections the destination may still speak on: asked again */
	int64_t now = gl_mono_ns();
	for (size_t i = 0; i < nconns;) {
		bool ask = conns[i].more && now - conns[i].last >= (int64_t)IDLE_MS * 1000000;
		if (!ask || exchange(i, NULL, 0, false))
			i++; /* else dropped: conns[i] is another one now */
	}
}

void stream_close_all(void)
{
	while (nconns)
		drop(0, false);
}
