/* private_fds.c — a runtime's own descriptors made each copy's own; see
 * private_fds.h. */
#define _GNU_SOURCE
#include "sandbox/private_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define SCAN_BATCH 1024
#define SCAN_MAX (1 << 20) /* descriptors looked at; above, a copy closes them */

/* ---- in the germline, before ready -------------------------------------- */

static int fail_at(char *err, size_t cap, const char *what, int fd)
{
	snprintf(err, cap, "%s (fd %d)", what, fd);
	return -1;
}

/* An anonymous inode's kind: an epoll instance refuses to delete a
 * descriptor it does not watch (probe, a new eventfd of ours) with ENOENT,
 * anything else with EINVAL; an eventfd takes a write of zero (adding
 * nothing), a timerfd, signalfd or inotify instance refuses it. 0: neither. */
static int anon_kind(int fd, int probe)
{
	if (epoll_ctl(fd, EPOLL_CTL_DEL, probe, NULL) < 0 && errno == ENOENT)
		return GL_PFD_EPOLL;
	uint64_t zero = 0;
	if (write(fd, &zero, sizeof zero) == (ssize_t)sizeof zero)
		return GL_PFD_EVENTFD;
	return 0;
}

/* An eventfd's counter, read (which empties it) and written back. */
static int eventfd_count(int fd, uint64_t *count)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	*count = 0;
	if (poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLIN))
		return 0;
	if (read(fd, count, sizeof *count) != (ssize_t)sizeof *count)
		return errno == EAGAIN ? 0 : -1;
	return write(fd, count, sizeof *count) == (ssize_t)sizeof *count ? 0 : -1;
}

static uint32_t pipe_of(struct gl_private_fds *p, uint64_t ino)
{
	for (uint32_t i = 0; i < p->npipe; i++)
		if (p->pipe[i].ino == ino)
			return i;
	p->pipe[p->npipe] = (struct gl_private_pipe){.ino = ino};
	return (uint32_t)p->npipe++;
}

/* One open descriptor recorded (or left out: 0). -1 with err. */
static int take_one(struct gl_private_fds *p, int fd, int skip, int probe, char *err, size_t cap)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
	if (fd == skip || fd == probe || fl < 0 || fdfl < 0 || fstat(fd, &st) < 0)
		return 0;
	struct gl_private_fd e = {.fd = fd, .flags = fl, .cloexec = (fdfl & FD_CLOEXEC) != 0};
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3)
		e.kind = GL_PFD_NULL;
	else if (S_ISFIFO(st.st_mode))
		e.kind = (fl & O_ACCMODE) == O_WRONLY ? GL_PFD_PIPE_W : GL_PFD_PIPE_R;
	else if ((st.st_mode & S_IFMT) == 0)
		e.kind = (uint8_t)anon_kind(fd, probe);
	if (!e.kind)
		return 0; /* closed in every copy; G2 judges it in the germline */
	if (p->n == GL_PRIVATE_FDS_MAX)
		return fail_at(err, cap, "more runtime descriptors than a copy keeps", fd);
	if (e.kind == GL_PFD_PIPE_R || e.kind == GL_PFD_PIPE_W)
		e.pipe = pipe_of(p, (uint64_t)st.st_ino);
	if (e.kind == GL_PFD_EVENTFD && eventfd_count(fd, &e.count) < 0)
		return fail_at(err, cap, "an eventfd's counter cannot be read", fd);
	p->fd[p->n++] = e;
	return 0;
}

/* A pipe's bytes at ready: read from its read end, written back through
 * its write end, kept in buf for every copy's own pipe. */
static int pipe_content(struct gl_private_fds *p, uint32_t k, char *err, size_t cap)
{
	int r = -1, w = -1;
	for (size_t i = 0; i < p->n; i++)
		if (p->fd[i].pipe == k && p->fd[i].kind == GL_PFD_PIPE_R && r < 0)
			r = p->fd[i].fd;
		else if (p->fd[i].pipe == k && p->fd[i].kind == GL_PFD_PIPE_W && w < 0)
			w = p->fd[i].fd;
	int n = 0;
	if (r < 0 || ioctl(r, FIONREAD, &n) < 0 || n == 0)
		return 0;
	if (w < 0)
		return fail_at(err, cap, "a pipe holds bytes and its write end is not open", r);
	if ((size_t)n > sizeof p->buf - p->nbuf)
		return fail_at(err, cap, "the runtime's pipes hold more bytes than a copy is given", r);
	unsigned char *dst = p->buf + p->nbuf;
	if (read(r, dst, (size_t)n) != n || write(w, dst, (size_t)n) != n)
		return fail_at(err, cap, "a pipe's bytes cannot be read back", r);
	p->pipe[k].off = (uint32_t)p->nbuf;
	p->pipe[k].len = (uint32_t)n;
	p->nbuf += (size_t)n;
	return 0;
}

/* Every open descriptor from lo up, then each pipe's bytes. */
static int take_all(struct gl_private_fds *p, int lo, int skip, int probe, char *err,
		    size_t cap)
{
	struct rlimit rl;
	long top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < SCAN_MAX ? (long)rl.rlim_cur
									      : SCAN_MAX;
	/* which numbers are open, a batch per poll (POLLNVAL: not open) */
	struct pollfd pf[SCAN_BATCH];
	for (long base = lo; base < top; base += SCAN_BATCH) {
		int k = (int)(top - base < SCAN_BATCH ? top - base : SCAN_BATCH);
		for (int i = 0; i < k; i++)
			pf[i] = (struct pollfd){.fd = (int)base + i, .events = 0};
		if (poll(pf, (nfds_t)k, 0) < 0)
			return fail_at(err, cap, "poll", (int)base);
		for (int i = 0; i < k; i++)
			if (!(pf[i].revents & POLLNVAL) &&
			    take_one(p, pf[i].fd, skip, probe, err, cap) < 0)
				return -1;
	}
	for (uint32_t k = 0; k < p->npipe; k++)
		if (pipe_content(p, k, err, cap) < 0)
			return -1;
	for (uint32_t k = 0; k < p->npipe; k++)
		p->pipe[k].ino = 0; /* nothing of the germline's objects reaches a copy */
	return 0;
}

int gl_private_fds_take(struct gl_private_fds *p, int lo, int skip, char *err, size_t cap)
{
	memset(p, 0, sizeof *p);
	int probe = eventfd(0, EFD_CLOEXEC);
	if (probe < 0)
		return fail_at(err, cap, "eventfd", -1);
	int rc = take_all(p, lo, skip, probe, err, cap);
	close(probe);
	return rc;
}

/* ---- in a copy -------------------------------------------------------------- */

/* src at e's number, with e's descriptor and status flags. 0, or -1. */
static int at_number(int src, const struct gl_private_fd *e)
{
	return dup3(src, e->fd, e->cloexec ? O_CLOEXEC : 0) < 0 || fcntl(e->fd, F_SETFL, e->flags) < 0
		       ? -1
		       : 0;
}

/* fresh (a new object's descriptor, closed here) at e's number. */
static int put(int fresh, const struct gl_private_fd *e)
{
	if (fresh < 0)
		return -1;
	int rc = at_number(fresh, e);
	if (fresh != e->fd)
		close(fresh);
	return rc;
}

/* A new eventfd holding count (wider than eventfd()'s initial value). */
static int own_eventfd(uint64_t count)
{
	int fd = eventfd(0, EFD_CLOEXEC);
	if (fd >= 0 && count && write(fd, &count, sizeof count) != (ssize_t)sizeof count) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The copy's own pipe for the germline's pipe k: every recorded end of it
 * at its number, holding what the germline's held at ready. */
static int own_pipe(const struct gl_private_fds *p, uint32_t k)
{
	int np[2];
	if (pipe2(np, O_CLOEXEC) < 0)
		return -1;
	const struct gl_private_pipe *pp = &p->pipe[k];
	int rc = 0;
	if (pp->len && write(np[1], p->buf + pp->off, pp->len) != (ssize_t)pp->len)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < p->n; i++) {
		const struct gl_private_fd *e = &p->fd[i];
		if (e->pipe != k || (e->kind != GL_PFD_PIPE_R && e->kind != GL_PFD_PIPE_W))
			continue;
		if (at_number(e->kind == GL_PFD_PIPE_W ? np[1] : np[0], e) < 0)
			rc = -1;
	}
	close(np[0]);
	close(np[1]);
	return rc;
}

int gl_private_fds_apply(const struct gl_private_fds *p)
{
	for (uint32_t k = 0; k < p->npipe; k++)
		if (own_pipe(p, k) < 0)
			return -1;
	for (size_t i = 0; i < p->n; i++) {
		const struct gl_private_fd *e = &p->fd[i];
		int rc = 0;
		if (e->kind == GL_PFD_NULL)
			rc = put(open("/dev/null", (e->flags & O_ACCMODE) | O_CLOEXEC), e);
		else if (e->kind == GL_PFD_EVENTFD)
			rc = put(own_eventfd(e->count), e);
		else if (e->kind == GL_PFD_EPOLL)
			rc = put(epoll_create1(EPOLL_CLOEXEC), e);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int gl_private_fds_close_rest(const struct gl_private_fds *p)
{
	unsigned from = 4;
	for (size_t i = 0; i < p->n; i++) {
		unsigned fd = (unsigned)p->fd[i].fd;
		if (fd < from)
			continue;
		if (fd > from && syscall(SYS_close_range, from, fd - 1, 0u) < 0)
			return -1;
		from = fd + 1;
	}
	return (int)syscall(SYS_close_range, from, ~0u, 0u);
}
