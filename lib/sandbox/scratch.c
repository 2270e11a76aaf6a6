/* scratch.c — a copy's private scratch /tmp; see scratch.h and
 * docs/sandbox.md "The scratch directory" (SPEC §5; issue 15). */
#define _GNU_SOURCE
#include "sandbox/scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

/* Landlock's filesystem rights (the kernel's uapi values). */
#define LL_WRITE_FILE (1ull << 1)
#define LL_READ_FILE (1ull << 2)
#define LL_READ_DIR (1ull << 3)
#define LL_REMOVE_DIR (1ull << 4)
#define LL_REMOVE_FILE (1ull << 5)
#define LL_MAKE_DIR (1ull << 7)
#define LL_MAKE_REG (1ull << 8)
#define LL_MAKE_SYM (1ull << 12)
#define LL_REFER (1ull << 13)
#define LL_TRUNCATE (1ull << 14)

#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif

int gl_scratch_allow(int ruleset, int abi, const char *path)
{
	/* Files and directories only: no execute (a copy runs nothing it
	 * wrote), no device, fifo or socket nodes, no device ioctls. */
	uint64_t rights = LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_REMOVE_DIR |
			  LL_REMOVE_FILE | LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SYM;
	if (abi >= 2)
		rights |= LL_REFER;
	if (abi >= 3)
		rights |= LL_TRUNCATE;
	struct {
		uint64_t allowed_access;
		int32_t parent_fd;
	} __attribute__((packed)) pb = {rights, -1};
	pb.parent_fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return -1;
	long rc = syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &pb, 0);
	if (rc < 0 && errno == EINVAL) {
		/* a layer that handles no read right (a copy's own) */
		pb.allowed_access &= ~(LL_READ_FILE | LL_READ_DIR);
		rc = syscall(SYS_landlock_add_rule, ruleset, 1, &pb, 0);
	}
	int e = errno;
	close(pb.parent_fd);
	errno = e;
	return rc < 0 ? -1 : 0;
}

void gl_scratch_options(char *buf, size_t cap, unsigned tmp_mb)
{
	/* inodes bounded too (each costs kernel memory): 256 per MiB */
	unsigned long inodes = (unsigned long)tmp_mb * 256;
	if (inodes < 1024)
		inodes = 1024;
	snprintf(buf, cap, "mode=0700,size=%um,nr_inodes=%lu", tmp_mb, inodes);
}

bool gl_scratch_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_SCRATCH_OFF");
}

/* ---- the mounter: a child of the broker in the germline's namespaces ------
 *
 * Forked once per germline after its import (gl_scratch_start): it enters
 * the germline's user and mount namespaces (setns on the init's pidfd; the
 * broker's uid owns that user namespace, so it has every capability there),
 * makes the germline's /tmp read-only, and then serves one request per
 * copy: the copy's pidfd and the tmpfs options; it enters the copy's mount
 * namespace, mounts the copy's tmpfs on /tmp, rebinds what lay beneath, and
 * goes back to the germline's mount namespace (so it pins no copy's). One
 * fork per germline, not per copy (docs/sandbox.md "Cost"). It runs system
 * calls only (the broker may have threads), holds nothing of the broker's
 * but its socket and the init's pidfd, and dies with the broker. */

enum helper_step { H_SETNS = 1, H_FSOPEN, H_FSCONFIG, H_FSMOUNT, H_OPEN, H_MOVE, H_SEAL, H_NESTED,
		   H_BACK };
static const char *const helper_step_name[] = {
    "?",          "setns",      "fsopen",        "fsconfig",
    "fsmount",    "open /tmp",  "move_mount",    "mount_setattr",
    "a bind mount beneath /tmp", "back to the germline's mount namespace"};

#define M_SOCK 3  /* the mounter's end of its socket */
#define M_GERM 4  /* the germline init's pidfd */

/* mkdir -p of path's directories (path absolute), then its last component
 * as a directory or an empty file: a mount point in the new tmpfs. */
static int make_point(const char *path, bool dir)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof buf)
		return errno = ENAMETOOLONG, -1;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		int rc = mkdir(buf, 0755);
		*p = '/';
		if (rc < 0 && errno != EEXIST)
			return -1;
	}
	if (dir)
		return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
	int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno != EEXIST ? -1 : 0;
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A fresh tmpfs with opts ("k=v,k=v") on /tmp of the mount namespace we
 * are in, and nested[] (the binds beneath /tmp) again on it. 0 or a step. */
static int stack_tmpfs(char *opts, const char *const *nested)
{
	int tree[GL_SCRATCH_NESTED_MAX], fds[3] = {-1, -1, -1};
	size_t nn = 0;
	for (; nested && nested[nn] && nn < GL_SCRATCH_NESTED_MAX; nn++) {
		/* no symlink on the way: the germline could have made some in
		 * its /tmp at import (they would lead only to its read-only root) */
		struct open_how how = {.flags = O_PATH | O_CLOEXEC,
				       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
		int at = (int)syscall(SYS_openat2, AT_FDCWD, nested[nn], &how, sizeof how);
		tree[nn] = at < 0 ? -1
				  : (int)syscall(SYS_open_tree, at, "",
						 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
						     AT_EMPTY_PATH);
		if (at >= 0)
			close(at);
		if (tree[nn] < 0) {
			close_all(tree, nn);
			return H_NESTED;
		}
	}
	int step = 0;
	fds[0] = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fds[0] < 0)
		step = H_FSOPEN;
	for (char *p = opts, *next; !step && p && *p; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = 0;
		char *eq = strchr(p, '=');
		if (!eq)
			continue;
		*eq = 0;
		if (syscall(SYS_fsconfig, fds[0], FSCONFIG_SET_STRING, p, eq + 1, 0) < 0)
			step = H_FSCONFIG;
	}
	if (!step && syscall(SYS_fsconfig, fds[0], FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		step = H_FSCONFIG;
	if (!step && (fds[1] = (int)syscall(SYS_fsmount, fds[0], FSMOUNT_CLOEXEC,
					    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0)
		step = H_FSMOUNT;
	/* setns made the namespace's root our root and cwd: this is the
	 * copy's /tmp (its root is read-only: no symlink can be put there) */
	if (!step && (fds[2] = open(GL_SCRATCH_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		step = H_OPEN;
	if (!step && syscall(SYS_move_mount, fds[1], "", fds[2], "",
			     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		step = H_MOVE;
	for (size_t i = 0; !step && i < nn; i++) {
		struct stat st;
		if (fstat(tree[i], &st) < 0 || make_point(nested[i], S_ISDIR(st.st_mode)) < 0 ||
		    syscall(SYS_move_mount, tree[i], "", AT_FDCWD, nested[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
			step = H_NESTED;
	}
	int e = errno;
	close_all(fds, 3);
	close_all(tree, nn);
	errno = e;
	return step;
}

static void reply(int step, int err)
{
	int32_t m[2] = {step, err};
	if (send(M_SOCK, m, sizeof m, MSG_NOSIGNAL) != (ssize_t)sizeof m)
		_exit(1);
}

/* The mounter's loop (never returns). */
GL_NORETURN static void mounter(const char *const *nested)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(1);
	/* inside 0 of the germline's namespace: under a delegated block
	 * (lib/sandbox/uids.h) the broker's own uid is not mapped there, and
	 * an unmapped uid may create nothing in its tmpfs */
	if (setns(M_GERM, CLONE_NEWUSER | CLONE_NEWNS) < 0 || syscall(SYS_setresgid, 0, 0, 0) < 0 ||
	    syscall(SYS_setresuid, 0, 0, 0) < 0) {
		reply(H_SETNS, errno);
		_exit(1);
	}
	struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
	if (!gl_scratch_off() &&
	    syscall(SYS_mount_setattr, AT_FDCWD, GL_SCRATCH_DIR, AT_SYMLINK_NOFOLLOW, &a, sizeof a) < 0) {
		reply(H_SEAL, errno);
		_exit(1);
	}
	reply(0, 0);
	for (;;) {
		char opts[128];
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cm;
		struct iovec iov = {.iov_base = opts, .iov_len = sizeof opts - 1};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				    .msg_controllen = sizeof cm.b};
		ssize_t n = recvmsg(M_SOCK, &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			_exit(0); /* the broker is done with this germline */
		}
		opts[n] = 0;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		int fd = -1;
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof fd);
		int step = fd < 0 ? H_SETNS : setns(fd, CLONE_NEWNS) < 0 ? H_SETNS : 0;
		if (!step)
			step = stack_tmpfs(opts, nested);
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (setns(M_GERM, CLONE_NEWNS) < 0) {
			reply(H_BACK, errno);
			_exit(1);
		}
		reply(step, step ? e : 0);
	}
}

/* One reply of the mounter: 0, or -1 with f (code). */
static int await_reply(struct gl_scratch *s, const char *what, enum gl_code code,
		       struct gl_fail *f)
{
	int32_t m[2] = {0, 0};
	ssize_t n;
	do
		n = recv(s->sock, m, sizeof m, 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof m)
		return gl_fail(f, code, "%s: the mount helper is gone", what);
	if (m[0] == 0)
		return 0;
	int step = m[0] > 0 && m[0] <= H_BACK ? m[0] : 0;
	return gl_fail(f, code, "%s: %s: %s", what, helper_step_name[step], strerror(m[1]));
}

int gl_scratch_start(int init_pidfd, const char *const *nested, struct gl_scratch *s,
		     struct gl_fail *f)
{
	s->pid = -1;
	s->sock = -1;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return gl_fail_errno(f, GL_E_LAUNCH, "scratch: socketpair");
	/* The raw syscall runs no at-fork handler; the child makes syscalls only. */
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		/* nothing of the broker's but these two: 0-2 on /dev/null */
		/* every source first above the numbers it goes to: a pidfd or
		 * socket that is 3 or 4 here (a broker with few descriptors, as
		 * gl-replay) would otherwise be overwritten before it is moved */
		int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
		int so = fcntl(sp[1], F_DUPFD_CLOEXEC, 16), gp = fcntl(init_pidfd, F_DUPFD_CLOEXEC, 16);
		int nd = dn < 0 ? -1 : fcntl(dn, F_DUPFD_CLOEXEC, 16);
		if (nd < 0 || so < 0 || gp < 0 || dup2(nd, 0) < 0 || dup2(nd, 1) < 0 ||
		    dup2(nd, 2) < 0 || dup2(so, M_SOCK) < 0 || dup2(gp, M_GERM) < 0 ||
		    syscall(SYS_close_range, 5u, ~0u, 0u) < 0)
			_exit(1);
		mounter(nested);
	}
	int e = errno;
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		return gl_fail(f, GL_E_LAUNCH, "scratch: fork: %s", strerror(e));
	}
	s->pid = pid;
	s->sock = sp[0];
	if (await_reply(s, "scratch: the germline's /tmp read-only", GL_E_LAUNCH, f) < 0) {
		gl_scratch_stop(s);
		return -1;
	}
	return 0;
}

void gl_scratch_stop(struct gl_scratch *s)
{
	if (s->sock >= 0)
		close(s->sock); /* the mounter exits on EOF */
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	s->pid = -1;
	s->sock = -1;
}

/* The mount namespace of pid (its /proc link's inode), or 0. */
static unsigned long long mnt_ns(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/ns/mnt", (int)pid);
	struct stat st;
	return stat(p, &st) < 0 ? 0 : (unsigned long long)st.st_ino;
}

int gl_scratch_mount(struct gl_scratch *s, int copy_pidfd, pid_t copy, pid_t germline,
		     unsigned tmp_mb, long owner, struct gl_fail *f)
{
	/* A copy in the germline's own mount namespace would get the tmpfs
	 * of every later copy (A1): refused, the copy is killed. */
	unsigned long long c = mnt_ns(copy), g = mnt_ns(germline);
	if (!c || !g || c == g)
		return gl_fail(f, GL_E_GERMLINE, "copy: %s",
			       !c || !g ? "its mount namespace cannot be read"
					: "shares the germline's mount namespace");
	if (s->sock < 0)
		return gl_fail(f, GL_E_GERMLINE, "copy: scratch /tmp: no mount helper");
	char opts[112];
	gl_scratch_options(opts, sizeof opts, tmp_mb);
	if (owner >= 0) /* the copy's own uid (lib/sandbox/uids.h): its /tmp is its */
		snprintf(opts + strlen(opts), sizeof opts - strlen(opts), ",uid=%ld,gid=%ld", owner,
			 owner);
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	memset(&cm, 0, sizeof cm);
	struct iovec iov = {.iov_base = opts, .iov_len = strlen(opts)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			    .msg_controllen = sizeof cm.b};
	struct cmsghdr *cmh = CMSG_FIRSTHDR(&mh);
	cmh->cmsg_level = SOL_SOCKET;
	cmh->cmsg_type = SCM_RIGHTS;
	cmh->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmh), &copy_pidfd, sizeof copy_pidfd);
	ssize_t n;
	do
		n = sendmsg(s->sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)iov.iov_len)
		return gl_fail(f, GL_E_GERMLINE, "copy: scratch /tmp: the mount helper is gone");
	return await_reply(s, "copy: scratch /tmp", GL_E_GERMLINE, f);
}
