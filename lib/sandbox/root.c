/* root.c — the minimal root of a germline; see root.h and docs/sandbox.md
 * ("The minimal root"). */
#define _GNU_SOURCE
#include "sandbox/root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"

/* ---- describing a root (before the fork) ------------------------------ */

/* A root that cannot be described refuses the launch before anything ran:
 * bootstrap_failed, a restriction not installed (SPEC §9). */
#define root_fail(f, ...) gl_fail((f), GL_E_BOOTSTRAP_FAILED, __VA_ARGS__)

/* Keep the entries sorted by path, so a directory is mounted before
 * anything beneath it (a bind mounted later over its parent would hide it).
 * e's strings are copied. */
static int insert(struct gl_root *r, const struct gl_root_entry *e, struct gl_fail *f)
{
	size_t i = 0;
	while (i < r->n && strcmp(r->e[i].path, e->path) < 0)
		i++;
	if (i < r->n && !strcmp(r->e[i].path, e->path)) {
		if (r->e[i].kind != GL_ROOT_DIR || e->kind == GL_ROOT_DIR)
			return 0; /* already there (the allowlist may name a path twice) */
		free(r->e[i].path); /* a bind where an empty directory was planned */
		r->e[i] = (struct gl_root_entry){0};
		memmove(&r->e[i], &r->e[i + 1], (r->n - i - 1) * sizeof r->e[0]);
		r->n--;
	}
	if (r->n == GL_ROOT_MAX)
		return root_fail(f, "minimal root: more than %d entries", GL_ROOT_MAX);
	if (e->path[0] != '/' || strlen(e->path) >= PATH_MAX - 64 ||
	    (e->target && strlen(e->target) >= PATH_MAX) || (e->src && strlen(e->src) >= PATH_MAX))
		return root_fail(f, "minimal root: bad or too long path");
	memmove(&r->e[i + 1], &r->e[i], (r->n - i) * sizeof r->e[0]);
	r->e[i] = *e;
	r->e[i].path = gl_xstrdup(e->path);
	r->e[i].target = e->target ? gl_xstrdup(e->target) : NULL;
	r->e[i].src = e->src ? gl_xstrdup(e->src) : NULL;
	r->n++;
	return 0;
}

static int add(struct gl_root *r, enum gl_root_kind kind, const char *path, const char *target,
	       bool dir, struct gl_fail *f)
{
	struct gl_root_entry e = {.kind = kind, .path = (char *)path, .target = (char *)target,
				  .dir = dir};
	return insert(r, &e, f);
}

/* path's last component is a symlink while its directory has none: the
 * link as the host has it (e.g. /usr/bin/python3 -> python3.11). */
static int add_last_link(struct gl_root *r, const char *path, struct gl_fail *f)
{
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
		return 0;
	autofree char *dir = gl_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	char real[PATH_MAX], link[PATH_MAX];
	if (!realpath(dir, real) || strcmp(real, dir))
		return 0; /* a link further up: the caller binds the real path only */
	ssize_t n = readlink(path, link, sizeof link - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	return add(r, GL_ROOT_SYMLINK, path, link, false, f);
}

int gl_root_add_bind(struct gl_root *r, const char *path, struct gl_fail *f)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return errno == ENOENT || errno == ENOTDIR ? 0
							    : root_fail(f, "minimal root: %s: %s", path,
									strerror(errno));
	struct stat st;
	if (stat(real, &st) < 0)
		return root_fail(f, "minimal root: %s: %s", real, strerror(errno));
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return root_fail(f, "minimal root: %s is neither a file nor a directory", real);
	if (!strcmp(real, "/"))
		return root_fail(f, "minimal root: refusing to bind the host's root");
	if (add(r, GL_ROOT_BIND, real, NULL, S_ISDIR(st.st_mode), f) < 0)
		return -1;
	return strcmp(real, path) ? add_last_link(r, path, f) : 0;
}

int gl_root_add_bind_at(struct gl_root *r, const char *src, const char *dst, bool rw,
			struct gl_fail *f)
{
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(src, real) || stat(real, &st) < 0)
		return root_fail(f, "minimal root: %s: %s", src, strerror(errno));
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return root_fail(f, "minimal root: %s is neither a file nor a directory", real);
	struct gl_root_entry e = {.kind = rw ? GL_ROOT_BIND_RW : GL_ROOT_BIND, .path = (char *)dst,
				  .src = real, .dir = S_ISDIR(st.st_mode)};
	return insert(r, &e, f);
}

int gl_root_add_fd(struct gl_root *r, int fd, struct gl_fail *f)
{
	return gl_root_add_fd_at(r, fd, NULL, f);
}

int gl_root_add_fd_at(struct gl_root *r, int fd, const char *at, struct gl_fail *f)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	struct stat st;
	if (n <= 0 || fstat(fd, &st) < 0)
		return root_fail(f, "minimal root: item descriptor: %s", strerror(errno));
	path[n] = 0;
	if (path[0] != '/' || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)))
		return root_fail(f, "minimal root: an item is neither a file nor a directory");
	if (!strcmp(path, "/"))
		return root_fail(f, "minimal root: refusing to bind the host's root");
	if (at && (at[0] != '/' || !strcmp(at, "/")))
		return root_fail(f, "minimal root: an item's place is not an absolute path");
	struct gl_root_entry e = {.kind = GL_ROOT_BIND, .path = at ? (char *)at : path,
				  .src = at ? path : NULL, .dir = S_ISDIR(st.st_mode),
				  .check = true, .dev = st.st_dev, .ino = st.st_ino};
	return insert(r, &e, f);
}

int gl_root_add_dev(struct gl_root *r, const char *path, struct gl_fail *f)
{
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISCHR(st.st_mode))
		return root_fail(f, "minimal root: %s is not a character device", path);
	return add(r, GL_ROOT_DEV, path, NULL, false, f);
}

int gl_root_add_tmpfs(struct gl_root *r, const char *path, const char *options, struct gl_fail *f)
{
	if (strlen(options) >= 128)
		return root_fail(f, "minimal root: tmpfs options too long");
	/* replaces an empty directory planned there (insert) */
	return add(r, GL_ROOT_SCRATCH, path, options, true, f);
}

int gl_root_add_system(struct gl_root *r, struct gl_fail *f)
{
	static const char *const tops[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
	for (size_t i = 0; i < sizeof tops / sizeof *tops; i++) {
		struct stat st;
		char link[PATH_MAX];
		if (lstat(tops[i], &st) < 0 || !S_ISLNK(st.st_mode))
			continue;
		ssize_t n = readlink(tops[i], link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (add(r, GL_ROOT_SYMLINK, tops[i], link, false, f) < 0)
			return -1;
	}
	if (add(r, GL_ROOT_DIR, "/dev", NULL, true, f) < 0 ||
	    add(r, GL_ROOT_DIR, "/tmp", NULL, true, f) < 0)
		return -1;
	return 0;
}

void gl_root_free(struct gl_root *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].path);
		free(r->e[i].target);
		free(r->e[i].src);
	}
	r->n = 0;
}

const char *gl_root_step_name(enum gl_root_step s)
{
	switch (s) {
	case GL_ROOT_OK: return "ok";
	case GL_ROOT_PRIVATE: return "private mounts";
	case GL_ROOT_SOURCE: return "open a source";
	case GL_ROOT_TMPFS: return "tmpfs";
	case GL_ROOT_MKPOINT: return "mount point";
	case GL_ROOT_MOUNT: return "bind mount";
	case GL_ROOT_PIVOT: return "pivot_root";
	case GL_ROOT_READONLY: return "read-only root";
	case GL_ROOT_IDS: return "inside uid 0";
	}
	return "?";
}

/* ---- entering it (in the launch child: syscalls only) ------------------ */

/* base + path into buf; 0 or -1 (ENAMETOOLONG). */
static int under(char *buf, size_t cap, const char *base, const char *path)
{
	size_t a = strlen(base), b = strlen(path);
	if (a + b + 1 > cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, base, a);
	memcpy(buf + a, path, b + 1);
	return 0;
}

/* mkdir -p of every directory above buf's last component (from skip on:
 * base itself exists). Components that exist already are fine. */
static int make_parents(char *buf, size_t skip)
{
	for (char *p = buf + skip + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		int rc = mkdir(buf, 0755);
		*p = '/';
		if (rc < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

static int make_point(char *buf, size_t skip, const struct gl_root_entry *e)
{
	if (make_parents(buf, skip) < 0)
		return -1;
	struct stat st;
	if (e->kind == GL_ROOT_SYMLINK)
		return symlink(e->target, buf) < 0 && errno != EEXIST ? -1 : 0;
	if (lstat(buf, &st) == 0)
		return 0; /* inside a directory bound before: the host's own entry */
	if (e->kind == GL_ROOT_DIR || e->kind == GL_ROOT_SCRATCH || (e->kind != GL_ROOT_DEV && e->dir))
		return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
	int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	close(fd);
	return 0;
}

/* A detached copy of the mount at src, moved onto dst: read-only but for
 * GL_ROOT_BIND_RW, nodev but for GL_ROOT_DEV, nosuid. */
static int bind_ro(int src, const char *dst, enum gl_root_kind kind)
{
	bool dev = kind == GL_ROOT_DEV;
	int t = (int)open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0)
		return -1;
	/* Adding read-only, nosuid and nodev is allowed on a mount that came
	 * from a more privileged namespace; its atime flags are left as they
	 * are (they are locked), and a read-only mount never updates atime. */
	struct mount_attr a = {.attr_set = (kind == GL_ROOT_BIND_RW ? 0 : MOUNT_ATTR_RDONLY) |
					   MOUNT_ATTR_NOSUID | (dev ? 0 : MOUNT_ATTR_NODEV)};
	int rc = mount_setattr(t, "", AT_EMPTY_PATH, &a, sizeof a);
	if (rc == 0)
		rc = move_mount(t, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH);
	int e = errno;
	close(t);
	errno = e;
	return rc;
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Each source of r, by path with no symlink anywhere (each was resolved
 * before the fork), into fds (-1 for an entry with none): 0, or -1 with
 * errno, *bad its index and nothing left open. */
static int open_sources(const struct gl_root *r, int *fds, int *bad)
{
	for (size_t i = 0; i < r->n; i++) {
		fds[i] = -1;
		const struct gl_root_entry *e = &r->e[i];
		if (e->kind == GL_ROOT_SYMLINK || e->kind == GL_ROOT_DIR || e->kind == GL_ROOT_SCRATCH)
			continue;
		struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
		fds[i] = (int)syscall(SYS_openat2, AT_FDCWD, e->src ? e->src : e->path, &how, sizeof how);
		struct stat st;
		if (fds[i] >= 0 && e->check &&
		    (fstat(fds[i], &st) < 0 || (unsigned long long)st.st_dev != e->dev ||
		     (unsigned long long)st.st_ino != e->ino)) {
			close(fds[i]);
			fds[i] = -1;
			errno = ESTALE; /* not the file the broker read */
		}
		if (fds[i] < 0) {
			int err = errno;
			*bad = (int)i;
			close_all(fds, i);
			errno = err;
			return -1;
		}
	}
	return 0;
}

enum gl_root_step gl_root_enter(const struct gl_root *r, const char *base, int *bad)
{
	*bad = -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return GL_ROOT_PRIVATE;
	/* Sources first, while the host's tree is still there: a source under
	 * base stays reachable through its descriptor. */
	int fds[GL_ROOT_MAX];
	if (open_sources(r, fds, bad) < 0)
		return GL_ROOT_SOURCE;
	/* (a change of uid clears the dumpable flag, which the launch child
	 * sets: the broker's helpers enter its namespaces through its pidfd) */
	if (r->become_root &&
	    (syscall(SYS_setresgid, 0, 0, 0) < 0 || syscall(SYS_setresuid, 0, 0, 0) < 0 ||
	     prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)) {
		close_all(fds, r->n);
		return GL_ROOT_IDS;
	}
	if (mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096") < 0) {
		close_all(fds, r->n);
		return GL_ROOT_TMPFS;
	}
	char buf[PATH_MAX];
	size_t skip = strlen(base);
	for (size_t i = 0; i < r->n; i++) {
		const struct gl_root_entry *e = &r->e[i];
		enum gl_root_step st = GL_ROOT_MKPOINT;
		int rc = under(buf, sizeof buf, base, e->path);
		if (rc == 0)
			rc = make_point(buf, skip, e);
		if (rc == 0 && fds[i] >= 0) {
			st = GL_ROOT_MOUNT;
			rc = bind_ro(fds[i], buf, e->kind);
		}
		if (rc == 0 && e->kind == GL_ROOT_SCRATCH) {
			/* writable: the final read-only step is the root's alone */
			st = GL_ROOT_TMPFS;
			rc = mount("tmpfs", buf, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, e->target);
		}
		if (rc < 0) {
			int err = errno;
			*bad = (int)i;
			close_all(fds, r->n);
			errno = err;
			return st;
		}
	}
	close_all(fds, r->n);
	/* The man page's idiom: the new root stacked over the old one, which
	 * is then detached; nothing of the host's tree stays reachable. */
	if (chdir(base) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0)
		return GL_ROOT_PIVOT;
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	if (mount_setattr(AT_FDCWD, "/", 0, &ro, sizeof ro) < 0)
		return GL_ROOT_READONLY;
	return GL_ROOT_OK;
}
