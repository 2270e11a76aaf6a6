/* proc_fds.c — G2, a germline's or a copy's descriptors, read from outside
 * (proc.h; paper §IV-D, A1, A2).
 *
 * The broker lists /proc/P/fd and reads each descriptor there. That
 * directory is its task's owner's alone (mode 0500), whatever else the
 * broker may do to P: a broker that is not root cannot list it for a
 * germline or a copy that runs as a delegated host uid of its own
 * (lib/sandbox/uids.h), although it owns their user namespace and so may
 * ptrace them. It then takes each descriptor below the task's table size
 * (FDSize) with pidfd_getfd (ptrace access) and reads the duplicate:
 * the same facts, the same rule. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox/proc.h"
#include "sandbox/proc_impl.h"

/* Largest descriptor table taken one number at a time (pidfd_getfd): a
 * process that grew a larger one is refused, not walked. */
#define FDSIZE_MAX 4096

/* What G2 looks at of one descriptor, however it was read. */
struct fdview {
	struct stat st;
	char link[256];      /* what /proc/P/fd/N names ("/path", "socket:[…]", …) */
	unsigned long flags; /* its open flags (O_ACCMODE, O_PATH) */
	bool watches_sock;   /* an epoll instance watching the socket sock_ino */
};

/* Does the epoll instance whose fdinfo is at path watch inode ino (its
 * "tfd: … ino:HEX" lines)? 1, 0, or -1 with errno. */
static int epoll_watches(const char *path, uint64_t ino)
{
	autofree char *info = NULL;
	if (read_small(path, &info, 256 * 1024) < 0)
		return -1;
	for (const char *l = strstr(info, " ino:"); l; l = strstr(l + 5, " ino:"))
		if (strtoull(l + 5, NULL, 16) == ino)
			return 1;
	return 0;
}

static bool is_epoll(const char *link)
{
	return !strcmp(link, "anon_inode:[eventpoll]");
}

/* A Node runtime's own objects (GL_FDS_RUNTIME; docs/exec.md "The Node
 * germline"): its pipes (stdin and stdout among them), eventfds and epoll
 * instances, each made a copy's own (lib/sandbox/private_fds.h), so
 * passed here; an epoll instance that watches the control socket is not
 * (a fork request would wake the thread that waits on it). 1 passed,
 * 0 not one of them, -1 refused with *f. */
static int judge_runtime(const struct fdview *v, int fd, const char *check, struct gl_fail *f)
{
	if (S_ISFIFO(v->st.st_mode) || !strcmp(v->link, "anon_inode:[eventfd]"))
		return 1;
	if (!is_epoll(v->link))
		return 0;
	if (v->watches_sock)
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "%s: fd %d is an epoll instance that watches the control socket",
			       check, fd);
	return 1;
}

/* G2's rule for descriptor fd, seen as v. sock_ino == 0: no socket is
 * allowed at fd >= 4. */
static int judge(const struct fdview *v, int fd, uint64_t sock_ino, unsigned mode,
		 const char *check, struct gl_fail *f)
{
	const struct stat *st = &v->st;
	if (S_ISSOCK(st->st_mode)) {
		if (sock_ino && (uint64_t)st->st_ino == sock_ino)
			return 0;
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "%s: fd %d is a socket other than its control socket", check, fd);
	}
	if (mode & GL_FDS_RUNTIME) {
		int r = judge_runtime(v, fd, check, f);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
	if (S_ISFIFO(st->st_mode))
		return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: fd %d is a pipe", check, fd);
	if (fd <= 2) {
		/* 0-2 are the host's /dev/null, by device and inode (SPEC §10): a
		 * release file there would be an open file description (offset,
		 * flags, locks) shared with every copy. */
		struct stat null;
		if (!S_ISCHR(st->st_mode) || stat("/dev/null", &null) < 0 ||
		    st->st_rdev != null.st_rdev || st->st_dev != null.st_dev ||
		    st->st_ino != null.st_ino)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: fd %d is not /dev/null", check,
				       fd);
		return 0;
	}
	if (S_ISCHR(st->st_mode)) {
		if (major(st->st_rdev) == 1 && minor(st->st_rdev) == 3)
			return 0; /* /dev/null */
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "%s: fd %d is a character device other than /dev/null", check, fd);
	}
	if (S_ISDIR(st->st_mode))
		return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: fd %d is a directory", check, fd);
	if (!S_ISREG(st->st_mode)) {
		if (!strncmp(v->link, "anon_inode:", 11)) {
			autofree char *kind = gl_sanitize(v->link + 11, strlen(v->link + 11));
			return gl_fail(f, GL_E_GERMLINE_CHECK,
				       "%s: fd %d is an anonymous inode (%s)", check, fd, kind);
		}
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "%s: fd %d is neither a regular file, /dev/null nor the control socket",
			       check, fd);
	}
	if (!strncmp(v->link, "/memfd:", 7))
		return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: fd %d is a memfd", check, fd);
	if (st->st_nlink == 0)
		return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: fd %d is a deleted file", check, fd);
	/* Regular file: opened read-only. */
	if (v->flags & O_PATH)
		return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: fd %d is an O_PATH descriptor", check,
			       fd);
	if ((v->flags & O_ACCMODE) != O_RDONLY)
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "%s: fd %d is a regular file open for writing", check, fd);
	return 0;
}

/* v of pid's descriptor fd through /proc/P/fd and fdinfo: 1, 0 when it is
 * not open (any more), -1 with errno. */
static int view_proc(pid_t pid, int fd, uint64_t sock_ino, struct fdview *v)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	ssize_t n = readlink(path, v->link, sizeof v->link - 1);
	if (n < 0 || stat(path, &v->st) < 0)
		return errno == ENOENT ? 0 : -1;
	v->link[n] = 0;
	v->flags = 0;
	v->watches_sock = false;
	snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)pid, fd);
	if (is_epoll(v->link)) {
		int w = sock_ino ? epoll_watches(path, sock_ino) : 0;
		v->watches_sock = w != 0; /* unreadable: refused as watching */
		return w < 0 && errno == ENOENT ? 0 : 1;
	}
	if (!S_ISREG(v->st.st_mode))
		return 1;
	autofree char *info = NULL;
	if (read_small(path, &info, 64 * 1024) < 0)
		return errno == ENOENT ? 0 : -1;
	char *fl = strstr(info, "\nflags:");
	if (!fl && !strncmp(info, "flags:", 6))
		fl = info - 1;
	if (!fl || sscanf(fl + 7, " %lo", &v->flags) != 1) {
		errno = EINVAL;
		return -1;
	}
	return 1;
}

/* v of the descriptor dup (a duplicate of the process's, taken with
 * pidfd_getfd: the same open file description). */
static int view_dup(int dup, uint64_t sock_ino, struct fdview *v)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", dup);
	ssize_t n = readlink(path, v->link, sizeof v->link - 1);
	int fl = fcntl(dup, F_GETFL);
	if (n < 0 || fl < 0 || fstat(dup, &v->st) < 0)
		return -1;
	v->link[n] = 0;
	v->flags = (unsigned long)fl;
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", dup);
	v->watches_sock = is_epoll(v->link) && sock_ino && epoll_watches(path, sock_ino) != 0;
	return 1;
}

long gl_proc_fd_table_size(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	autofree char *s = NULL;
	if (read_small(path, &s, 64 * 1024) < 0)
		return -1;
	const char *l = strstr(s, "\nFDSize:");
	long n;
	return l && sscanf(l + 8, "%ld", &n) == 1 && n >= 0 ? n : -1;
}

/* A duplicate of pid's descriptor fd (pidfd: pid's): >= 0, -2 when fd is
 * not open, -1 with errno. */
static int take(int pidfd, int fd)
{
	int d = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (d < 0 && errno == EBADF)
		return -2;
	return d;
}

/* G2 by pidfd_getfd, for a process whose /proc/P/fd the broker may not
 * read: every number below its table size. */
static int fds_by_getfd(pid_t pid, uint64_t sock_ino, unsigned mode, const char *check,
			struct gl_fail *f)
{
	long size = gl_proc_fd_table_size(pid);
	if (size < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read its descriptor table",
				     check);
	if (size > FDSIZE_MAX)
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "%s: a descriptor table of %ld entries (more than %d)", check, size,
			       FDSIZE_MAX);
	autoclose int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: pidfd_open", check);
	int n = 0;
	for (int fd = 0; fd < size; fd++) {
		int d = take(pidfd, fd);
		if (d == -2)
			continue;
		if (d < 0)
			return gl_fail_errno(f, GL_E_GERMLINE_CHECK,
					     "%s: cannot take its fd %d (pidfd_getfd)", check, fd);
		struct fdview v;
		int r = view_dup(d, sock_ino, &v);
		close(d);
		if (r < 0)
			return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read its fd %d",
					     check, fd);
		if (++n > GL_PROC_MAX_FDS)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: more than %d descriptors",
				       check, GL_PROC_MAX_FDS);
		if (judge(&v, fd, sock_ino, mode, check, f) < 0)
			return -1;
	}
	return 0;
}

int gl_proc_fd_check(pid_t pid, int fd, uint64_t sock_ino, const char *check, struct gl_fail *f)
{
	struct fdview v;
	int r = view_proc(pid, fd, sock_ino, &v);
	if (r < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read /proc/%d/fd/%d", check,
				     (int)pid, fd);
	return r == 0 ? 0 : judge(&v, fd, sock_ino, 0, check, f);
}

int gl_proc_fds_check(pid_t pid, uint64_t sock_ino, const char *check, struct gl_fail *f)
{
	return gl_proc_fds_check_mode(pid, sock_ino, 0, check, f);
}

int gl_proc_fds_check_mode(pid_t pid, uint64_t sock_ino, unsigned mode, const char *check,
			   struct gl_fail *f)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	autoclosedir DIR *d = opendir(path);
	if (!d && errno == EACCES)
		return fds_by_getfd(pid, sock_ino, mode, check, f);
	if (!d)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read %s", check, path);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (++n > GL_PROC_MAX_FDS)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: more than %d descriptors",
				       check, GL_PROC_MAX_FDS);
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || fd < 0 || fd > INT32_MAX)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: unreadable descriptor list",
				       check);
		struct fdview v;
		int r = view_proc(pid, (int)fd, sock_ino, &v);
		if (r < 0)
			return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read /proc/%d/fd/%ld",
					     check, (int)pid, fd);
		if (r > 0 && judge(&v, (int)fd, sock_ino, mode, check, f) < 0)
			return -1;
	}
	return 0;
}

int gl_proc_fd_stat(pid_t pid, int fd, struct stat *st)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	if (stat(path, st) == 0)
		return 0;
	if (errno != EACCES)
		return -1;
	autoclose int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -1;
	int d = take(pidfd, fd);
	if (d < 0) {
		if (d == -2)
			errno = EBADF;
		return -1;
	}
	int r = fstat(d, st);
	close(d);
	return r;
}
