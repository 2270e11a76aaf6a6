/* scratch.c — a copy's private scratch /tmp; see scratch.h and
 * docs/sandbox.md "The scratch directory" (SPEC §5; issue 15). */
#define _GNU_SOURCE
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

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
#ifdef GL_TESTING
	const char *v = getenv("GL_TEST_SCRATCH_OFF");
	return v && !strcmp(v, "1");
#else
	return false;
#endif
}

/* ---- the helper: a child of the broker in the target's namespaces -------- */

enum helper_step { H_SETNS = 1, H_FSOPEN, H_FSCONFIG, H_FSMOUNT, H_OPEN, H_MOVE, H_SEAL, H_NESTED };
static const char *const helper_step_name[] = {
    "?",          "setns",      "fsopen",        "fsconfig",
    "fsmount",    "open /tmp",  "move_mount",    "mount_setattr",
    "a bind mount beneath /tmp"};

GL_NORETURN static void helper_fail(int sfd, enum helper_step s)
{
	int32_t m[2] = {(int32_t)s, errno};
	ssize_t w;
	do
		w = write(sfd, m, sizeof m);
	while (w < 0 && errno == EINTR);
	_exit(127);
}

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

/* In the helper (syscalls only: the broker may have threads). nested: the
 * minimal root's binds beneath /tmp (a release under a GL_HOME in /tmp),
 * cloned before the tmpfs hides them and bound again on it. */
GL_NORETURN static void helper(int pidfd, const char *opts, const char *const *nested, int sfd)
{
	int tree[GL_SCRATCH_NESTED_MAX];
	size_t nn = 0;
	if (setns(pidfd, CLONE_NEWUSER | CLONE_NEWNS) < 0)
		helper_fail(sfd, H_SETNS);
	if (!opts) { /* seal: the germline's own /tmp read-only */
		struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
		if (syscall(SYS_mount_setattr, AT_FDCWD, GL_SCRATCH_DIR, AT_SYMLINK_NOFOLLOW, &a,
			    sizeof a) < 0)
			helper_fail(sfd, H_SEAL);
		_exit(0);
	}
	for (; nested && nested[nn]; nn++) {
		if (nn == GL_SCRATCH_NESTED_MAX) {
			errno = E2BIG;
			helper_fail(sfd, H_NESTED);
		}
		tree[nn] = (int)syscall(SYS_open_tree, AT_FDCWD, nested[nn],
					OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
		if (tree[nn] < 0)
			helper_fail(sfd, H_NESTED);
	}
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		helper_fail(sfd, H_FSOPEN);
	/* opts: "mode=…,size=…,nr_inodes=…" — one fsconfig per option */
	char buf[128];
	snprintf(buf, sizeof buf, "%s", opts);
	for (char *p = buf, *next; p && *p; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = 0;
		char *eq = strchr(p, '=');
		if (!eq)
			continue;
		*eq = 0;
		if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, p, eq + 1, 0) < 0)
			helper_fail(sfd, H_FSCONFIG);
	}
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		helper_fail(sfd, H_FSCONFIG);
	int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
			       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		helper_fail(sfd, H_FSMOUNT);
	/* setns made the namespace's root our root and cwd: this is the
	 * copy's /tmp (its root is read-only, it holds no symlink there) */
	int t = open(GL_SCRATCH_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t < 0)
		helper_fail(sfd, H_OPEN);
	if (syscall(SYS_move_mount, mnt, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		helper_fail(sfd, H_MOVE);
	for (size_t i = 0; i < nn; i++) {
		struct stat st;
		if (fstat(tree[i], &st) < 0 || make_point(nested[i], S_ISDIR(st.st_mode)) < 0 ||
		    syscall(SYS_move_mount, tree[i], "", AT_FDCWD, nested[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
			helper_fail(sfd, H_NESTED);
	}
	_exit(0);
}

/* Run the helper against pidfd's namespaces; opts NULL: seal. */
static int run_helper(int pidfd, const char *opts, const char *const *nested, const char *what,
		      char **err)
{
	int sp[2];
	if (pipe2(sp, O_CLOEXEC) < 0)
		return gl_err(err, "%s: pipe: %s", what, strerror(errno));
	/* The raw syscall runs no at-fork handler; the child makes syscalls only. */
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		close(sp[0]);
		helper(pidfd, opts, nested, sp[1]);
	}
	int e = errno;
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		return gl_err(err, "%s: fork: %s", what, strerror(e));
	}
	int32_t m[2] = {0, 0};
	ssize_t n;
	do
		n = read(sp[0], m, sizeof m);
	while (n < 0 && errno == EINTR);
	close(sp[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof m && m[0] > 0 && m[0] <= H_NESTED)
		return gl_err(err, "%s: %s: %s", what, helper_step_name[m[0]], strerror(m[1]));
	if (n != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return gl_err(err, "%s: the mount helper failed", what);
	return 0;
}

int gl_scratch_seal(int pidfd, char **err)
{
	return run_helper(pidfd, NULL, NULL, "scratch: the germline's /tmp read-only", err);
}

/* The mount namespace of pid (its /proc link's inode), or 0. */
static unsigned long long mnt_ns(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/ns/mnt", (int)pid);
	struct stat st;
	return stat(p, &st) < 0 ? 0 : (unsigned long long)st.st_ino;
}

int gl_scratch_mount(int copy_pidfd, pid_t copy, pid_t germline, unsigned tmp_mb,
		     const char *const *nested, char **err)
{
	/* A copy in the germline's own mount namespace would get the tmpfs
	 * of every later copy (A1): refused, the copy is killed. */
	unsigned long long c = mnt_ns(copy), g = mnt_ns(germline);
	if (!c || !g || c == g)
		return gl_err(err, "copy: %s", !c || !g ? "its mount namespace cannot be read"
							: "shares the germline's mount namespace");
	char opts[96];
	gl_scratch_options(opts, sizeof opts, tmp_mb);
	return run_helper(copy_pidfd, opts, nested, "copy: scratch /tmp", err);
}
