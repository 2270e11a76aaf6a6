/* fork_server.c — the fork server inside a germline (fork_server.h). */
#define _GNU_SOURCE
#include "fork_server.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <linux/sched.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/uids.h"

#define REQ_MAX 256       /* a fork request is 13 bytes */
#define DETAIL_MAX 8000   /* bytes of an error text sent to the broker */

static int send_msg(int fd, const char *s, size_t n, int pass_fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	memset(&cm, 0, sizeof cm);
	struct iovec iov = {.iov_base = (void *)s, .iov_len = n};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (pass_fd >= 0) {
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof cm.b;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof pass_fd);
	}
	ssize_t w;
	do
		w = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)n ? 0 : -1;
}

/* {"op":"error","detail":"..."}: JSON-escaped, capped at a UTF-8 boundary. */
int gl_fork_send_error(int fd, const char *text, size_t n)
{
	if (n > DETAIL_MAX) {
		n = DETAIL_MAX;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	size_t cap = 64 + n * 6;
	char *out = malloc(cap);
	if (!out)
		return -1;
	size_t o = (size_t)snprintf(out, cap, "{\"op\":\"error\",\"detail\":\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o++] = '"';
	out[o++] = '}';
	int rc = send_msg(fd, out, o, -1);
	free(out);
	return rc;
}

/* One fork request: exactly {"op":"fork"} (a GL_TESTING build also takes
 * {"op":"fork","off":N}) with exactly one descriptor, a socket.
 * Returns 1 with *chan, 0 on EOF, -1 with *why for a bad request. */
static int recv_request(int ctl, int *chan, unsigned *off, unsigned *lane, const char **why)
{
	char buf[REQ_MAX + 1];
	union {
		char b[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cm;
	struct iovec iov = {.iov_base = buf, .iov_len = REQ_MAX};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			    .msg_controllen = sizeof cm.b};
	ssize_t n;
	do
		n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n < 0) {
		*why = "recvmsg failed";
		return errno == EBADF || errno == ENOTSOCK || errno == ENOTCONN ? 0 : -1;
	}
	int fds[8], nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && nfds < 8; i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	*why = NULL;
	buf[n] = 0;
	static const char req[] = "{\"op\":\"fork\"}";
	*off = 0;
	*lane = 0;
	int ok = n == (ssize_t)sizeof req - 1 && !memcmp(buf, req, sizeof req - 1);
	/* gl-run --jobs: {"op":"fork","lane":K}, the copy's number
	 * GL_COPY_PID + K (clone_copy); anything else is malformed */
	unsigned k;
	int kused = 0;
	if (!ok && sscanf(buf, "{\"op\":\"fork\",\"lane\":%u}%n", &k, &kused) == 1 && kused == n &&
	    k > 0 && k < GL_COPY_LANES) {
		*lane = k;
		ok = 1;
	}
#ifdef GL_TESTING
	unsigned v;
	int used = 0;
	if (!ok && sscanf(buf, "{\"op\":\"fork\",\"off\":%u}%n", &v, &used) == 1 && used == n) {
		*off = v;
		ok = 1;
	}
#endif
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		*why = "oversized or truncated fork request";
	else if (!ok)
		*why = "malformed fork request";
	else if (nfds != 1)
		*why = "a fork request carries exactly one descriptor";
	struct stat st;
	if (!*why && (fstat(fds[0], &st) < 0 || !S_ISSOCK(st.st_mode)))
		*why = "the descriptor of a fork request must be a socket";
	if (*why) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return -1;
	}
	*chan = fds[0];
	return 1;
}

/* Read what a cloned child reports on the sync pipe until EOF: nothing
 * (confined) or its failed step. */
static int read_sync(int fd, int32_t msg[2])
{
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, (char *)msg + got, 2 * sizeof(int32_t) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return (int)got;
		got += (size_t)r;
		if (got == 2 * sizeof(int32_t))
			return (int)got;
	}
}

/* Runs in the clone child: confine, or die without running release code. */
static void confine_or_die(const struct gl_fork_server *g, int chan, int sync_w, unsigned off,
			   long uid)
{
	struct gl_copy_confine c = {.channel = chan, .landlock_abi = g->abi, .bpf = &g->bpf,
				    .sync_fd = sync_w, .off = off, .uid = uid, .keep = g->keep};
	enum gl_confine_step s = gl_confine_copy(&c);
	if (s != GL_CONFINE_OK) {
		int32_t m[2] = {(int32_t)s, errno};
		ssize_t w;
		do
			w = write(sync_w, m, sizeof m);
		while (w < 0 && errno == EINTR);
		_exit(127);
	}
}

/* In the copy, confined: none of the release's code (not even its
 * at-fork hooks) runs until the broker has checked the copy from outside and sent
 * the one byte 'g' on its channel (docs/design/run.md "Fork"); anything
 * else, or the channel closed, ends the copy. */
static void wait_for_go(int chan)
{
	char go = 0;
	ssize_t n;
	do
		n = read(chan, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'g')
		_exit(0);
}

/* Clone a copy. In its own PID namespace (the germline is PID 2 under its
 * init) every copy gets the same number there, GL_COPY_PID, through
 * clone3's set_tid: the number a plain clone returns grows with every
 * process earlier copies started, a count the germline would learn (the
 * broker checks the number from outside). The previous copy is gone but
 * may not be reaped by the init yet: EEXIST is retried for a moment. */
static long clone_copy(unsigned long flags, unsigned off, unsigned lane)
{
	if (getpid() != 2 || !(flags & CLONE_NEWPID) || (off & GL_OFF_PIDFIX))
		return syscall(SYS_clone, flags, 0, 0, 0, 0); /* GL_TESTING's off switches */
	/* the copy's own namespace, then the germline's: one number per lane */
	pid_t tids[2] = {1, GL_COPY_PID + (pid_t)lane};
	struct clone_args ca = {
		.flags = flags & ~(unsigned long)0xff,
		/* with CLONE_PARENT the child takes the germline's own exit signal
		 * (SIGCHLD, to the init), and clone3 refuses one given here */
		.exit_signal = flags & CLONE_PARENT ? 0 : flags & 0xff,
		.set_tid = (uint64_t)(uintptr_t)tids,
		.set_tid_size = 2,
	};
	for (int tries = 0;; tries++) {
		long pid = syscall(SYS_clone3, &ca, sizeof ca);
		if (pid >= 0 || errno != EEXIST || tries == 400)
			return pid;
		struct timespec ts = {0, 250000};
		nanosleep(&ts, NULL);
	}
}

int gl_fork_server_setup(struct gl_fork_server *g, const char *prof, char *err, size_t cap)
{
	g->abi = gl_landlock_abi();
	/* The operator's named weaker profile (gl-run --profile no-scope, set by
	 * the launcher in GL_PROFILE, which the host takes out of the
	 * release's environment and passes here; docs/receipts.md) accepts ABI
	 * 4-5. It only lowers this floor: the rules are always the kernel's full ABI. */
	int required = prof && !strcmp(prof, "no-scope") ? 4 : GL_LANDLOCK_ABI_REQUIRED;
	if (g->abi < required) {
		snprintf(err, cap, "germline: Landlock ABI %d below the required %d", g->abi, required);
		return -1;
	}
	/* The copy's filter, compiled once here; each copy installs it with
	 * one prctl (no allocation in the child). */
	struct gl_fail f = {0};
	if (gl_seccomp_build(GL_FILTER_COPY, &g->bpf, &f) < 0) {
		snprintf(err, cap, "germline: %s", f.detail ? f.detail : "seccomp");
		gl_fail_clear(&f);
		return -1;
	}
	/* No code but this loop runs in the germline from here on (SPEC §10):
	 * every signal is blocked (the raw syscall: glibc's sigprocmask keeps
	 * two of its own open), so no handler the release installed — a C one
	 * through ctypes included — runs while the germline waits or a copy
	 * runs; its interval timers are disarmed (POSIX timers are not
	 * inherited, and their signals are blocked too). The broker checks the
	 * mask from outside (lib/sandbox/proc.c, G1). A copy gets the release's mask
	 * back before any of the release's code runs in it. */
	uint64_t all = ~0ull;
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &g->release_mask, sizeof all) < 0) {
		snprintf(err, cap, "germline: rt_sigprocmask: %s", strerror(errno));
		return -1;
	}
	static const int timers[] = {ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF};
	for (size_t i = 0; i < sizeof timers / sizeof *timers; i++) {
		struct itimerval zero = {{0, 0}, {0, 0}};
		setitimer(timers[i], &zero, NULL);
	}
	return 0;
}

/* The flags of a copy's clone (Algorithm 1 line 9), less what a GL_TESTING
 * build's off switches take away (off is 0 otherwise).
 * CLONE_PARENT: the copy is the init's child, never the germline's
 * (how it ended and what it used never reach germline memory).
 * CLONE_NEWNS: its own mount namespace, where the broker stacks
 * its private scratch /tmp (lib/sandbox/scratch.h; checked from outside). */
static unsigned long copy_flags(unsigned off)
{
	unsigned long flags = CLONE_PARENT | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
			      CLONE_NEWNS | SIGCHLD;
	if (off & GL_OFF_PARENT)
		flags &= ~(unsigned long)CLONE_PARENT;
	if (off & GL_OFF_NEWPID)
		flags &= ~(unsigned long)CLONE_NEWPID;
	if (off & GL_OFF_NEWNET)
		flags &= ~(unsigned long)CLONE_NEWNET;
	if (off & GL_OFF_NEWIPC)
		flags &= ~(unsigned long)CLONE_NEWIPC;
	return flags;
}

/* In the clone child: confined before any release code runs, then waits for
 * the broker's go and gets the release's signal mask back; the caller runs
 * its runtime's own after-fork code and becomes the copy (its channel is fd 3). */
static void become_copy(struct gl_fork_server *g, int chan, int sync[2], unsigned off,
			unsigned lane)
{
	close(sync[0]);
	confine_or_die(g, chan, sync[1], off, g->copy_uids ? (long)gl_uids_copy_id(lane) : -1);
	free(g->bpf.insns);
	wait_for_go(3);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &g->release_mask, NULL, sizeof g->release_mask);
}

/* In the germline, after a clone: what the child reported on the sync pipe
 * (sync_r, closed here), then the broker's answer: an error, or the copy's
 * pid and pidfd, then idle. */
static void answer_fork(int ctl, long pid, int sync_r, unsigned long flags)
{
	int32_t st[2] = {0, 0};
	int got = read_sync(sync_r, st);
	close(sync_r);
	if (got != 0) {
		if (!(flags & CLONE_PARENT)) /* else the init reaps it */
			while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
				;
		char m[160];
		int k = snprintf(m, sizeof m, "copy confinement failed at %s: %s",
				 gl_confine_step_name((enum gl_confine_step)st[0]), strerror(st[1]));
		gl_fork_send_error(ctl, m, (size_t)k);
		return;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd < 0) {
		kill((pid_t)pid, SIGKILL);
		gl_fork_send_error(ctl, "pidfd_open failed", 17);
		return;
	}
	char m[64];
	int k = snprintf(m, sizeof m, "{\"op\":\"forked\",\"pid\":%ld}", pid);
	if (send_msg(ctl, m, (size_t)k, pidfd) < 0)
		_exit(1);
	close(pidfd);
	/* Every copy's number is GL_COPY_PID (clone_copy); a reply of a
	 * test build's plain clone is not left in memory the next copy
	 * inherits either (docs/sandbox.md "The pid counter"). */
	explicit_bzero(m, sizeof m);
	/* Only now is the germline back to its descriptors of G2: the
	 * broker waits for this before it checks us again (a pidfd
	 * still open here would fail G2 under load). */
	if (send_msg(ctl, "{\"op\":\"idle\"}", 13, -1) < 0)
		_exit(1);
}

/* paper §IV-D: G1–G3 are the broker's, from outside, before it sends a
 * request (fork_server.h). */
bool gl_fork_serve_one(struct gl_fork_server *g)
{
	int chan = -1;
	unsigned off = 0, lane = 0;
	const char *why = NULL;
	int r = recv_request(g->ctl, &chan, &off, &lane, &why);
	if (r == 0)
		_exit(0); /* the broker is gone */
	if (r < 0) {
		gl_fork_send_error(g->ctl, why, strlen(why));
		return false;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		; /* copies the broker has killed */
	int sync[2];
	if (pipe2(sync, O_CLOEXEC) < 0) {
		close(chan);
		gl_fork_send_error(g->ctl, "pipe2 failed", 12);
		return false;
	}
	unsigned long flags = copy_flags(off);
	if ((off & GL_OFF_ATFORK) && g->test_before_fork)
		g->test_before_fork(); /* GL_TESTING builds only: off is 0 otherwise */
	long pid = clone_copy(flags, off, lane);
	if (pid == 0) {
		become_copy(g, chan, sync, off, lane);
		return true;
	}
	int e = errno;
	if ((off & GL_OFF_ATFORK) && g->test_after_fork_parent)
		g->test_after_fork_parent();
	if (off & GL_OFF_SIGNALS) /* GL_TESTING: the release's handlers run while the copy runs */
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &g->release_mask, NULL, sizeof g->release_mask);
	close(sync[1]);
	close(chan);
	if (pid < 0) {
		close(sync[0]);
		char m[128];
		int k = snprintf(m, sizeof m, "clone: %s", strerror(e));
		gl_fork_send_error(g->ctl, m, (size_t)k);
		return false;
	}
	answer_fork(g->ctl, pid, sync[0], flags);
	return false;
}

void gl_fork_server_ready(const struct gl_fork_server *s)
{
	static const char ready[] = "{\"op\":\"ready\"}";
	if (send_msg(s->ctl, ready, sizeof ready - 1, -1) < 0)
		_exit(1);
}
