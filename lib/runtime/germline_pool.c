/* germline_pool.c — the pool of gl-run --pool (docs/performance.md "The
 * pool"): one copy forked ahead (Algorithm 1 lines 8–9, G1–G3 before its
 * fork as before any), taken by the next call, and a retired copy awaited
 * before the next one starts, so copies still run one at a time (A1).
 * Split from germline_fork.c; see germline.h. */
#define _GNU_SOURCE
#include "runtime/germline.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/germline_impl.h"
#include "core/util.h"

void gl_germline_pool_drop(struct gl_germline *g)
{
	if (!g->pooled)
		return;
	g->pooled = false;
	close(g->pool_sock);
	gl_copy_kill(g->pool_pidfd);
	close(g->pool_pidfd);
}

int gl_germline_prefork(struct gl_germline *g, bool hold, struct gl_fail *f)
{
	gl_germline_settle(g);
	if (g->pooled || g->ctl < 0) /* full, or no germline (an exec runtime's ctl is -1) */
		return 0;
	if (gl_germline_check(g, f) < 0) /* line 8, before this fork as before any */
		return -1;
	int sp[2], pidfd;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE, "socketpair");
	g->no_register = true; /* the worker that takes it registers it */
	g->hold_next = hold;
	int rc = gl_germline_fork(g, sp[1], sp[0], &pidfd, f);
	g->no_register = false;
	g->hold_next = false;
	if (rc < 0) {
		close(sp[0]);
		return -1;
	}
	g->pool_sock = sp[0];
	g->pool_pidfd = pidfd;
	g->pool_cc = g->cc;
	g->pooled = true;
	g->pool_held = hold;
	return 0;
}

bool gl_germline_take(struct gl_germline *g, int *sock, int *pidfd)
{
	if (!g->pooled)
		return false;
	/* A pidfd is readable once its process has exited: a copy that died
	 * while it waited (its own at-fork code, the OOM killer) is dropped. */
	struct pollfd pf = {.fd = g->pool_pidfd, .events = POLLIN};
	if (poll(&pf, 1, 0) != 0) {
		gl_germline_pool_drop(g);
		return false;
	}
	if (g->pool_held) { /* its start byte: it runs from here on */
		ssize_t w;
		do
			w = write(g->pool_sock, "g", 1);
		while (w < 0 && errno == EINTR);
		if (w != 1) {
			gl_germline_pool_drop(g);
			return false;
		}
	}
	g->pooled = false;
	g->cc = g->pool_cc;
	*sock = g->pool_sock;
	*pidfd = g->pool_pidfd;
	return true;
}

void gl_copy_retire(struct gl_germline *g, int copy_pidfd)
{
	gl_germline_settle(g);
	if (copy_pidfd < 0)
		return;
	if (syscall(SYS_pidfd_send_signal, copy_pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
		gl_warn_errno("cannot kill a copy");
	g->retired_pidfd = copy_pidfd;
	g->retiring = true;
}

void gl_germline_settle(struct gl_germline *g)
{
	if (!g->retiring)
		return;
	g->retiring = false;
	gl_copy_kill(g->retired_pidfd); /* killed already: this is the wait */
	close(g->retired_pidfd);
}
