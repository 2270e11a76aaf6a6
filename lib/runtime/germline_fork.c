/* germline_fork.c — the broker's side of the fork protocol (docs/design/
 * run.md): the control messages, fork requests (Algorithm 1 line 9), the
 * copy check, kill and wait (A1, O3), and stopping a germline. The pool of
 * pre-forked copies is germline_pool.c. See germline.h. */
#define _GNU_SOURCE
#include "runtime/germline.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/germline_impl.h"
#include "json/json.h"
#include "sandbox/live.h"
#include "sandbox/proc.h"
#include "sandbox/sandbox.h"
#include "sandbox/scratch.h"
#include "core/util.h"

#define FORK_TIMEOUT_MS 10000 /* the germline's answer to a fork request */

#ifdef GL_TESTING
struct gl_launch_test gl_launch_test;
#endif

/* ---- control messages ---------------------------------------------------- */

int gl_ctl_ms_left(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : (int)ms;
}

void gl_ctl_deadline_in(struct timespec *d, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, d);
	d->tv_sec += ms / 1000;
	d->tv_nsec += (long)(ms % 1000) * 1000000;
	if (d->tv_nsec >= 1000000000) {
		d->tv_sec++;
		d->tv_nsec -= 1000000000;
	}
}

/* poll one descriptor for input until deadline: 1 ready, 0 timeout, -1 error. */
int gl_ctl_wait_readable(int fd, const struct timespec *deadline)
{
	for (;;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int r = poll(&pf, 1, gl_ctl_ms_left(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r > 0;
	}
}

/* One control message (SOCK_SEQPACKET) within the deadline; fds[] gets the
 * descriptors attached (at most maxfds; more, or a truncated message, is an
 * error and closes them all). Returns the length, 0 on EOF, -1 with f. */
ssize_t gl_ctl_recv(int ctl, char *buf, size_t cap, int *fds, int maxfds, int *nfds,
		    const struct timespec *deadline, struct gl_fail *f)
{
	*nfds = 0;
	int r = gl_ctl_wait_readable(ctl, deadline);
	if (r <= 0)
		return gl_fail(f, GL_E_GERMLINE, "%s",
			       r == 0 ? "no answer from the germline within the time limit"
				      : "control socket: poll failed");
	union {
		char b[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} cm;
	struct iovec iov = {.iov_base = buf, .iov_len = cap - 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			    .msg_controllen = sizeof cm.b};
	ssize_t n;
	do
		n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return gl_fail_errno(f, GL_E_GERMLINE, "control socket");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *in = (int *)CMSG_DATA(c);
		for (size_t i = 0; i < k; i++) {
			if (*nfds < maxfds)
				fds[(*nfds)++] = in[i];
			else
				close(in[i]);
		}
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || *nfds > maxfds) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return gl_fail(f, GL_E_GERMLINE,
			       "oversized or truncated control message from the germline");
	}
	buf[n] = 0;
	return n;
}

/* Parse a control message: an object whose "op" is a string; *op set. */
jv gl_ctl_parse(const char *buf, size_t n, const char **op)
{
	jv v = gl_json_parse(buf, n);
	*op = NULL;
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return jv_invalid();
	}
	*op = gl_json_get_str(v, "op");
	return v;
}

/* The "detail" of an {"op":"error"} message, sanitized and capped. */
char *gl_ctl_detail(jv v)
{
	const char *d = gl_json_get_str(v, "detail");
	if (!d)
		return gl_xstrdup("(no detail)");
	size_t n = strlen(d);
	return gl_sanitize(d, n > 2048 ? 2048 : n);
}


/* ---- fork, kill, stop ------------------------------------------------------ */

/* A germline that broke the protocol is not asked again: killed here,
 * reaped by gl_germline_stop. */
static void germline_kill(struct gl_germline *g)
{
	if (g->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
	if (g->ctl >= 0) {
		close(g->ctl);
		g->ctl = -1;
	}
}

static int send_fork_request(int ctl, int sock, unsigned lane)
{
	const char *req = "{\"op\":\"fork\"}";
	char lbuf[48];
	if (lane) { /* gl-run --jobs: this call's copy number (hosts/common/fork_server.c) */
		snprintf(lbuf, sizeof lbuf, "{\"op\":\"fork\",\"lane\":%u}", lane);
		req = lbuf;
	}
#ifdef GL_TESTING
	char tbuf[64];
	if (gl_launch_test.copy_off) {
		snprintf(tbuf, sizeof tbuf, "{\"op\":\"fork\",\"off\":%u}", gl_launch_test.copy_off);
		req = tbuf;
	}
#endif
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	memset(&cm, 0, sizeof cm);
	struct iovec iov = {.iov_base = (void *)req, .iov_len = strlen(req)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			    .msg_controllen = sizeof cm.b};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sock, sizeof sock);
	ssize_t n;
	do
		n = sendmsg(ctl, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)iov.iov_len ? 0 : -1;
}

/* fd is a pidfd of the process the germline calls pid (its number in the
 * germline's PID namespace, the next-to-last of the pidfd's NSpid list, or
 * the last when the copy shares that namespace); *host is its number here,
 * *fixed whether the list is exactly [host, number, 1] (a copy in its
 * own namespace under a germline under its init: the pid counter of the
 * germline's namespace says nothing). */
static int pidfd_is(int fd, pid_t pid, pid_t number, pid_t *host, bool *fixed)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	autofree char *info = NULL;
	size_t len;
	if (gl_read_file_capped(path, 64 * 1024, &info, &len) < 0)
		return 0;
	const char *p = strstr(info, "\nNSpid:");
	if (!p)
		return 0;
	p += 7;
	long lv[8];
	int n = 0, used;
	while (n < 8 && sscanf(p, " %ld%n", &lv[n], &used) == 1) {
		p += used;
		n++;
	}
	if (n < 1 || lv[0] <= 0 || lv[0] > INT32_MAX)
		return 0;
	*host = (pid_t)lv[0];
	*fixed = n == 3 && lv[1] == number && lv[2] == 1;
	return (n >= 2 && lv[n - 2] == (long)pid) || lv[n - 1] == (long)pid;
}

/* The copy's private scratch /tmp (lib/sandbox/scratch.h, SPEC §5), mounted before
 * it runs any release code. A failure kills the copy and the germline
 * (a copy in the germline's mount namespace is the germline's doing). */
static int copy_scratch(struct gl_germline *g, int pidfd, pid_t host, struct gl_fail *f)
{
	if (!g->scratch)
		return 0;
	autofail struct gl_fail sf = {0};
	long owner = g->uids.fd >= 0 ? (long)gl_uids_copy_id(g->lane) : -1;
	if (gl_scratch_mount(&g->mounter, pidfd, host, g->gpid, g->tmp_mb, owner, &sf) == 0)
		return 0;
	gl_fail(f, GL_E_GERMLINE, "fork: %s", gl_fail_detail(&sf));
	gl_copy_kill(pidfd);
	germline_kill(g);
	return -1;
}

/* The copy host joins its bound; its mechanisms go to g->enf. The failure
 * keeps gl_cg_bound_copy's words (gl_germline_fork sets the code). */
static int bound_copy(struct gl_germline *g, pid_t host, struct gl_fail *f)
{
	if (gl_cg_bound_copy(g->cg, &g->lim, host, false, &g->cc, f) < 0)
		return -1;
	if (g->uids.fd >= 0 && gl_cg_nproc_own_uid(&g->cc, host) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE, "limits: RLIMIT_NPROC of the copy");
	g->enf.limits_memory = g->cc.mem;
	g->enf.limits_pids = g->cc.pids;
	g->enf.limits_cpu = g->cc.cpu;
	return 0;
}

/* Line 9's request: the copy's channel sent to the germline (consumed,
 * *sock closed). 0, or -1 with *f; *chan_ino the channel's inode for the
 * copy check. */
static int request_fork(struct gl_germline *g, int *sock, uint64_t *chan_ino, struct gl_fail *f)
{
	*chan_ino = gl_proc_socket_ino(*sock);
	if (!*chan_ino)
		return gl_fail(f, GL_E_GERMLINE, "fork: the copy's channel is not a socket");
	if (g->ctl < 0)
		return gl_fail(f, GL_E_GERMLINE, "fork: the germline is not running");
	if (send_fork_request(g->ctl, *sock, g->lane) < 0) {
		gl_fail_errno(f, GL_E_GERMLINE, "fork: cannot reach the germline");
		germline_kill(g);
		return -1;
	}
	close(gl_steal_fd(sock));
	return 0;
}

/* The germline's answer: {"op":"forked","pid":N} with the copy's pidfd
 * (into *pidfd, the caller's to close), then {"op":"idle"}: the germline
 * closed its pidfd of the copy, so the next G2 check sees it at rest
 * (docs/design/run.md). *host is the copy's pid here, *fixed as pidfd_is.
 * 0, or -1 with *f (the germline killed, unless it only could not fork). */
static int read_forked(struct gl_germline *g, int *pidfd, pid_t *host, bool *fixed,
		       struct gl_fail *f)
{
	struct timespec deadline;
	gl_ctl_deadline_in(&deadline, FORK_TIMEOUT_MS);
	autofree char *buf = gl_xmalloc(GL_CTL_MSG_MAX);
	int fd = -1, nfds = 0;
	autofail struct gl_fail rf = {0};
	ssize_t n = gl_ctl_recv(g->ctl, buf, GL_CTL_MSG_MAX, &fd, 1, &nfds, &deadline, &rf);
	if (n <= 0) {
		if (n < 0)
			gl_fail(f, GL_E_GERMLINE, "fork: %s", gl_fail_detail(&rf));
		else
			gl_fail(f, GL_E_GERMLINE, "fork: the germline exited");
		germline_kill(g);
		return -1;
	}
	*pidfd = nfds == 1 ? fd : -1;
	const char *op;
	jv v = gl_ctl_parse(buf, (size_t)n, &op);
	int64_t pid = 0;
	if (op && !strcmp(op, "error") && nfds == 0) {
		autofree char *d = gl_ctl_detail(v);
		jv_free(v);
		gl_fail(f, GL_E_GERMLINE, "fork: the germline could not fork: %s", d);
		return -1; /* e.g. out of memory or pids; the germline itself is fine */
	}
	int ok = op && !strcmp(op, "forked") && jv_object_length(jv_copy(v)) == 2 &&
		 gl_json_get_int(v, "pid", &pid) == 0 && pid > 0 && pid <= INT32_MAX && *pidfd >= 0 &&
		 pidfd_is(*pidfd, (pid_t)pid, (pid_t)(GL_COPY_PID + g->lane), host, fixed);
	jv_free(v);
	if (ok) {
		int fd2 = -1, nfds2 = 0;
		n = gl_ctl_recv(g->ctl, buf, GL_CTL_MSG_MAX, &fd2, 1, &nfds2, &deadline, &rf);
		if (fd2 >= 0)
			close(fd2);
		jv w = n > 0 ? gl_ctl_parse(buf, (size_t)n, &op) : jv_invalid();
		ok = n > 0 && nfds2 == 0 && op && !strcmp(op, "idle") && jv_object_length(jv_copy(w)) == 1;
		jv_free(w);
	}
	if (ok)
		return 0;
	gl_fail(f, GL_E_GERMLINE,
		"fork: malformed answer from the germline (expected "
		"{\"op\":\"forked\",\"pid\":N} with the copy's pidfd, then {\"op\":\"idle\"})");
	germline_kill(g);
	return -1;
}

/* The host uid or gid (base: the block's first) the copy must run as:
 * its lane's of the germline's block (lib/sandbox/uids.h), or -1: without
 * a block, the germline's own, not checked here. */
static long copy_id(const struct gl_germline *g, unsigned long base)
{
	return g->uids.fd >= 0 ? (long)(base + gl_uids_copy_id(g->lane)) : -1;
}

/* G1–G3 of g's runtime (lib/sandbox/proc.h). */
static int germline_checks(const struct gl_germline *g, struct gl_fail *f)
{
	return (g->node ? gl_proc_check_node_germline : gl_proc_check_germline)(g->pid, g->gpid,
										g->ctl_ino, f);
}

/* The germline's own code confined the copy; the broker checks it from
 * outside before the copy receives anything (docs/sandbox.md): its number
 * in the germline's PID namespace, then the copy and the germline through
 * /proc. A failure kills both. 0, or -1 with *f. */
static int check_copy(struct gl_germline *g, int pidfd, pid_t host, bool fixed, uint64_t chan_ino,
		      struct gl_fail *f)
{
	int check = 1;
#ifdef GL_TESTING
	check = !gl_launch_test.no_copy_check;
#endif
	autofail struct gl_fail cf = {0};
	if (check && g->has_init && !fixed) {
		gl_fail(f, GL_E_GERMLINE,
			"fork: copy: its number in the germline's PID namespace is not %d "
			"(a growing number would count earlier copies' processes)",
			GL_COPY_PID + (int)g->lane);
	} else if (check && ((g->node ? gl_proc_check_node_copy : gl_proc_check_copy)(
				     host, g->gpid, g->pid, chan_ino, copy_id(g, g->uids.uid),
				     copy_id(g, g->uids.gid), &cf) < 0 ||
			     gl_proc_check_quiet(g->gpid, &cf) < 0)) {
		gl_fail(f, GL_E_GERMLINE, "fork: %s", gl_fail_detail(&cf));
	} else {
		return 0;
	}
	gl_copy_kill(pidfd);
	germline_kill(g);
	return -1;
}

/* gl-run --jobs (lib/sandbox/live.h): under the fork lock, G1–G3 again
 * (line 8 ran before the slot was read, while other workers could fork),
 * so the check that lets this fork go sees every live copy registered. */
static int check_again(struct gl_germline *g, struct gl_fail *f)
{
	if (!gl_live_on())
		return 0;
	autofail struct gl_fail cf = {0};
	if (germline_checks(g, &cf) == 0)
		return 0;
	return gl_fail(f, GL_E_GERMLINE, "germline_check: %s", gl_fail_detail(&cf));
}

/* Line 9 from the fork request to the copy's bound (gl_germline_fork). */
static int fork_checked(struct gl_germline *g, int *sock, int *pidfd_out, struct gl_fail *f)
{
	uint64_t chan_ino;
	if (check_again(g, f) < 0 || request_fork(g, sock, &chan_ino, f) < 0)
		return -1;
	autoclose int pidfd = -1;
	pid_t host = -1;
	bool fixed = false;
	if (read_forked(g, &pidfd, &host, &fixed, f) < 0)
		return -1;
	if (check_copy(g, pidfd, host, fixed, chan_ino, f) < 0)
		return -1;
	if (copy_scratch(g, pidfd, host, f) < 0)
		return -1;
	/* Bounded (SPEC §4 limits) while it still runs only our code: the copy
	 * waits for the byte below before any Python code (A1: a copy never
	 * runs unbounded; fail closed when nothing can bound it). */
	if (g->cg && bound_copy(g, host, f) < 0) {
		gl_copy_kill(pidfd);
		return -1;
	}
	/* In the shared table before the lock is let go: the next check sees
	 * it, and the main process kills it should this worker die. */
	if (!g->no_register && gl_live_add(pidfd) < 0) {
		gl_fail(f, GL_E_GERMLINE, "fork: the table of live copies is full (%d)",
			GL_LIVE_COPIES_MAX);
		gl_copy_kill(pidfd);
		return -1;
	}
	*pidfd_out = gl_steal_fd(&pidfd);
	return 0;
}

/* Line 9 (the caller checked G1–G3 first, line 8): one copy forked by the
 * germline, checked, given its scratch and bound, then let run. */
static int fork_copy(struct gl_germline *g, int copy_sock, int broker_sock, int *copy_pidfd,
		     struct gl_fail *f)
{
	*copy_pidfd = -1;
	autoclose int sock = copy_sock; /* closed here whatever happens */
	/* One copy of this call at a time (A1): the last one has ended, and a
	 * pooled copy nobody took is not left beside this one. */
	gl_germline_settle(g);
	gl_germline_pool_drop(g);
	autoclose int pidfd = -1;
	gl_live_fork_lock();
	int rc = fork_checked(g, &sock, &pidfd, f);
	gl_live_fork_unlock();
	if (rc < 0)
		return -1;
	/* Checked: the copy may now run (it waits in hosts/common/fork_server.c
	 * for this byte before any of the release's code, its at-fork hooks
	 * included); a held pooled copy gets it when it is taken
	 * (gl_germline_take). */
	ssize_t w = 1;
	while (!g->hold_next && (w = write(broker_sock, "g", 1)) < 0 && errno == EINTR)
		;
	if (w != 1) {
		gl_fail_errno(f, GL_E_GERMLINE, "fork: cannot start the copy");
		gl_copy_kill(pidfd);
		gl_live_remove(pidfd); /* once gone: never a live copy G1 does not know */
		return -1;
	}
	*copy_pidfd = gl_steal_fd(&pidfd);
	return 0;
}

int gl_germline_fork(struct gl_germline *g, int copy_sock, int broker_sock, int *copy_pidfd,
		     struct gl_fail *f)
{
	if (fork_copy(g, copy_sock, broker_sock, copy_pidfd, f) == 0)
		return 0;
	f->code = GL_E_GERMLINE; /* bound_copy keeps gl_cg_bound_copy's code */
	return -1;
}

void gl_germline_end(struct gl_germline *g, int *code, bool *stopped)
{
	*code = 0;
	*stopped = false;
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (g->pidfd >= 0) {
		/* Already gone? Look without reaping (WNOWAIT). */
		if (waitid(P_PIDFD, (id_t)g->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == 0) {
			syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
			*stopped = true;
			while (waitid(P_PIDFD, (id_t)g->pidfd, &si, WEXITED | WNOWAIT) < 0 &&
			       errno == EINTR)
				;
		}
		*code = si.si_code == CLD_EXITED ? si.si_status : -si.si_status;
		/* the init's 128 + N: the germline was killed by signal N */
		if (g->has_init && *code > 128 && *code < 128 + 65)
			*code = -(*code - 128);
	}
	gl_germline_stop(g);
}

/* ---- the python runtime's seam (lib/runtime/runtime.h) ---------------------- */

static struct gl_germline *germline_of(struct gl_runtime *rt)
{
	return (struct gl_germline *)((char *)rt - offsetof(struct gl_germline, rt));
}

/* Algorithm 1 line 8, G1–G3 (paper §IV-D, A2). */
/* G1–G3 (line 8). With gl-run --jobs under the fork lock: a copy another
 * worker forks is in the shared table before G1 can see it. */
static int germline_check(struct gl_runtime *rt, struct gl_fail *f)
{
	const struct gl_germline *g = germline_of(rt);
	gl_live_fork_lock();
	int rc = germline_checks(g, f);
	gl_live_fork_unlock();
	return rc;
}

/* Line 9: a fork from the germline; its scratch dies with it. */
static int germline_spawn(struct gl_runtime *rt, const struct gl_spawn *s, struct gl_copy *c,
			  struct gl_fail *f)
{
	c->scratch = NULL;
	return gl_germline_fork(germline_of(rt), s->chan, s->broker_sock, &c->pidfd, f);
}

/* Line 27: the copy with its descendants (A1, O3); the germline's init
 * reaps it, not this process. */
static int germline_end_copy(struct gl_runtime *rt, struct gl_copy *c)
{
	(void)rt;
	gl_copy_kill(c->pidfd);
	return -1;
}

static void germline_stop(struct gl_runtime *rt)
{
	struct gl_germline *g = germline_of(rt);
	gl_germline_settle(g);
	gl_germline_pool_drop(g);
	if (g->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
	else if (g->pid > 0)
		kill(g->pid, SIGKILL);
	if (g->pid > 0)
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
	if (g->pidfd >= 0)
		close(g->pidfd);
	if (g->ctl >= 0)
		close(g->ctl);
	g->pid = -1;
	g->pidfd = g->ctl = -1;
	if (g->launch_cg) /* its launch's group, empty now (lib/sandbox/cgroup.h) */
		gl_cg_germline_end(g->launch_cg, g->launch_cg_pid);
	g->launch_cg = NULL;
	/* the init reaped, and with it every process of its namespace: the
	 * block's uids run nothing now (lib/sandbox/uids.h) */
	gl_uids_release(&g->uids);
	if (g->mounter.pid > 0)
		gl_scratch_stop(&g->mounter);
	for (size_t i = 0; g->scratch_under && g->scratch_under[i]; i++)
		free(g->scratch_under[i]);
	free(g->scratch_under);
	g->scratch_under = NULL;
}

const struct gl_runtime_ops gl_germline_ops = {
    .name = "python",
    .check = germline_check,
    .spawn = germline_spawn,
    .end = germline_end_copy,
    .stop = germline_stop,
};
