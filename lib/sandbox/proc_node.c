/* proc_node.c — the checks of a Node germline and of its copies, through
 * /proc (proc.h; docs/exec.md "The Node germline"; paper §IV-D, A1, A2).
 *
 * Node starts threads of its own before any release code runs (V8's
 * platform workers, libuv's thread pool, the inspector's signal thread),
 * so G1's "one thread" cannot hold. What G1 is for does: no code of the
 * release's runs in the germline between fork requests. Every thread but
 * the main one (which runs only the fork server, every signal blocked)
 * must wait without a time limit on something nothing outside the
 * germline can wake — a private futex, or an epoll instance over the
 * germline's own objects, none of which a copy holds (the copy check
 * below) and none the control socket (G2) — and no signal may have a
 * handler, so no signal runs code on any of them. A thread that runs, or
 * waits with a timeout, is refused, whoever started it. */
#define _GNU_SOURCE
#include "sandbox/proc.h"

#include "sandbox/proc_impl.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define THREADS_MAX 256
#define FDSIZE_MAX 4096 /* a table probed one number at a time (fd_probe) */
#define FUTEX_CMD_MASK 127
#define FUTEX_PRIVATE 128

/* Is thread tid of pid blocked for good? Its /proc/P/task/T/syscall: the
 * call's number and six arguments. 0, or -1 with *f. */
static int thread_frozen(pid_t pid, long tid, struct gl_fail *f)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/syscall", (int)pid, tid);
	autofree char *s = NULL;
	if (read_small(path, &s, 4096) < 0)
		return errno == ENOENT ? 0 : gl_fail_errno(f, GL_E_GERMLINE_CHECK,
							   "G1: cannot read %s", path);
	long nr;
	unsigned long a[6];
	if (sscanf(s, "%ld %lx %lx %lx %lx %lx %lx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4],
		   &a[5]) != 7)
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "G1: thread %ld of the germline is running, not waiting", tid);
	/* a private futex (only this process's threads can wake it), no timeout */
	unsigned long cmd = a[1] & FUTEX_CMD_MASK;
	if (nr == SYS_futex && (a[1] & FUTEX_PRIVATE) && (cmd == 0 || cmd == 9) && a[3] == 0)
		return 0;
	/* an epoll instance (G2: none watches the control socket), no timeout */
	if (nr == SYS_epoll_pwait && (int)a[3] == -1)
		return 0;
#ifdef SYS_epoll_wait
	if (nr == SYS_epoll_wait && (int)a[3] == -1)
		return 0;
#endif
	return gl_fail(f, GL_E_GERMLINE_CHECK,
		       "G1: thread %ld of the germline waits with a time limit or on something "
		       "shared (system call %ld)",
		       tid, nr);
}

/* No signal has a handler (SigCgt is the whole process's). */
static int no_handler(pid_t pid, struct gl_fail *f)
{
	unsigned long long cgt;
	if (gl_proc_sig_mask(pid, "SigCgt", &cgt, "G1", f) < 0)
		return -1;
	if (cgt)
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "G1: signal %d has a handler, which could run on one of the "
			       "runtime's threads",
			       __builtin_ctzll(cgt) + 1);
	return 0;
}

/* G1 for each thread: frozen (but the main one) and no live child. */
static int threads_frozen(pid_t pid, struct gl_fail *f)
{
	long tids[THREADS_MAX];
	int n = gl_proc_tasks(pid, tids, THREADS_MAX, THREADS_MAX, "G1", f);
	if (n < 0)
		return -1;
	if (n > THREADS_MAX)
		return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: the germline has more than %d threads",
			       THREADS_MAX);
	for (int i = 0; i < n; i++)
		if ((tids[i] != (long)pid && thread_frozen(pid, tids[i], f) < 0) ||
		    gl_proc_check_children(pid, (pid_t)tids[i], 0, false,
					   "the germline has a live child process", f) < 0)
			return -1;
	return 0;
}

int gl_proc_check_node_germline(pid_t init, pid_t pid, uint64_t ctl_ino, struct gl_fail *f)
{
	if (pid <= 0)
		return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: the germline has exited");
	if (threads_frozen(pid, f) < 0)
		return -1;
	if (init != pid && (gl_proc_check_one_thread(init, "germline's init", f) < 0 ||
			    gl_proc_check_children(init, init, pid, true,
						   "a process other than the germline lives in "
						   "its PID namespace",
						   f) < 0))
		return -1;
	if (gl_proc_check_signals(pid, "G1", f) < 0 || no_handler(pid, f) < 0 ||
	    gl_proc_fds_check_mode(pid, ctl_ino, GL_FDS_RUNTIME, "G2", f) < 0 ||
	    gl_proc_check_maps(pid, "G3", f) < 0)
		return -1;
	return 0;
}

/* The open descriptors of pid below its table size (FDSize), asked of
 * kcmp one number at a time: a broker that may not list /proc/P/fd (a
 * copy of its own delegated uid, lib/sandbox/uids.h) may still compare
 * (ptrace access). Their number, or -1 with errno. */
static int fd_probe(pid_t pid, int *fds, int cap)
{
	long size = gl_proc_fd_table_size(pid);
	if (size < 0)
		return -1;
	if (size > FDSIZE_MAX) {
		errno = EMFILE;
		return -1;
	}
	int n = 0;
	for (int fd = 0; fd < size; fd++) {
		if (syscall(SYS_kcmp, pid, pid, 0 /* KCMP_FILE */, (unsigned long)fd,
			    (unsigned long)fd) != 0)
			continue; /* EBADF: not open */
		if (n == cap) {
			errno = EMFILE;
			return -1;
		}
		fds[n++] = fd;
	}
	return n;
}

/* The open descriptors of pid, into fds (at most cap): their number, or
 * -1 with errno. */
static int fd_list(pid_t pid, int *fds, int cap)
{
#ifdef GL_TESTING
	if (getenv("GL_TEST_FD_PROBE")) /* the path of a broker that may not list them */
		return fd_probe(pid, fds, cap);
#endif
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	autoclosedir DIR *d = opendir(path);
	if (!d)
		return errno == EACCES ? fd_probe(pid, fds, cap) : -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			if (n == cap) {
				errno = EMFILE;
				return -1;
			}
			fds[n++] = atoi(e->d_name);
		}
	return n;
}

/* No descriptor of the copy is an open file of the germline's: its
 * runtime objects are its own (lib/sandbox/private_fds.h), by kcmp. */
static int nothing_shared(pid_t copy, pid_t germline, struct gl_fail *f)
{
	int cf[GL_PROC_MAX_FDS], gf[GL_PROC_MAX_FDS];
	int nc = fd_list(copy, cf, GL_PROC_MAX_FDS), ng = fd_list(germline, gf, GL_PROC_MAX_FDS);
	if (nc < 0 || ng < 0)
		return gl_fail_errno(f, GL_E_GERMLINE, "copy: cannot list its or the germline's "
				     "descriptors");
	for (int i = 0; i < nc; i++)
		for (int j = 0; j < ng; j++) {
			int r = gl_proc_same_file(copy, cf[i], germline, gf[j]);
			if (r < 0)
				return gl_fail_errno(f, GL_E_GERMLINE,
						     "copy: cannot compare its descriptors (kcmp)");
			if (r)
				return gl_fail(f, GL_E_GERMLINE,
					       "copy: fd %d is the germline's fd %d (a shared open "
					       "file)", cf[i], gf[j]);
		}
	return 0;
}

int gl_proc_check_node_copy(pid_t copy, pid_t germline, pid_t init, uint64_t chan_ino, long uid,
			    long gid, struct gl_fail *f)
{
	if (gl_proc_copy_checks(copy, germline, init, chan_ino, uid, gid, true, f) == 0 &&
	    nothing_shared(copy, germline, f) == 0)
		return 0;
	f->code = GL_E_GERMLINE;
	return -1;
}
