/* itempath.c — item paths never name host state; see itempath.h. */
#define _GNU_SOURCE
#include "broker/itempath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "json/json.h"
#include "core/util.h"

#define WALK_MAX 4096              /* ancestors walked by ".." */
#define MOUNTINFO_MAX (8u << 20)   /* bytes of /proc/self/mountinfo read */

bool gl_itempath_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_ITEMPATH_OFF");
}

static char *absolute(const char *p)
{
	char cwd[PATH_MAX];
	if (p[0] == '/' || !getcwd(cwd, sizeof cwd))
		return gl_xstrdup(p);
	return gl_xasprintf("%s/%s", cwd, p);
}

static char *show(const char *s)
{
	size_t n = strlen(s);
	autofree char *t = gl_sanitize(s, n > 512 ? 512 : n);
	return gl_xasprintf("\"%s\"%s", t, n > 512 ? "…" : "");
}

int gl_itempath_check(const struct gl_state_roots *roots, const char *path, struct gl_fail *f)
{
	if (gl_itempath_off())
		return 0; /* test build only: any path, as before issue 14 */
	autofree char *abs = absolute(path);
	autofree char *real = gl_path_resolve(abs);
	const char *xs[] = {abs, real};
	for (size_t k = 0; k < 2; k++) {
		const char *rule = xs[k] ? gl_host_state_rule(roots, xs[k]) : NULL;
		if (!rule)
			continue;
		autofree char *qp = show(path);
		autofree char *qr = real && strcmp(real, path) ? show(real) : NULL;
		return gl_fail(f, GL_E_ITEM_PATH, "item path %s%s%s%s: refused: %s", qp,
			       qr ? " (resolves to " : "", qr ? qr : "", qr ? ")" : "", rule);
	}
	return 0;
}

int gl_itempath_check_call(const struct gl_call *c, const struct gl_state_roots *roots,
			   struct gl_call_error *e)
{
	int rc = 0;
	jv_array_foreach(c->items, i, it)
	{
		const char *p = rc == 0 && jv_get_kind(it) == JV_KIND_OBJECT
				    ? gl_json_get_str(it, "path")
				    : NULL;
		autofail struct gl_fail why = {0};
		if (p && gl_itempath_check(roots, p, &why) < 0) {
			const char *nm = gl_json_get_str(it, "name");
			autofree char *q = nm ? gl_quote(nm, strlen(nm)) : gl_xstrdup("?");
			e->code = GL_ERR_ITEM_PATH;
			e->detail = gl_xasprintf("item %s: %s", q, gl_fail_detail(&why));
			rc = -1;
		}
		(void)i;
		jv_free(it);
	}
	return rc;
}

/* ---- at open time: what was opened -------------------------------------- */

struct devino {
	dev_t dev;
	ino_t ino;
};

/* The dev+ino of every state root and fixed host path that exists. */
static size_t deny_set(const struct gl_state_roots *roots, struct devino *d, size_t max)
{
	static const char *const fixed[] = {"/proc", "/sys", "/dev", "/run", "/var/run"};
	size_t n = 0;
	struct stat st;
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed && n < max; i++)
		if (stat(fixed[i], &st) == 0)
			d[n++] = (struct devino){st.st_dev, st.st_ino};
	for (size_t i = 0; roots && i < roots->n && n < max; i++)
		if (stat(roots->p[i], &st) == 0)
			d[n++] = (struct devino){st.st_dev, st.st_ino};
	return n;
}

static bool in_set(const struct stat *st, const struct devino *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i].dev == st->st_dev && d[i].ino == st->st_ino)
			return true;
	return false;
}

/* Walk from directory fd dfd up by ".." to "/": NULL when no directory on
 * the way is in d[0..n), else the rule (a static string). */
static const char *walk_up(int dfd, const struct devino *d, size_t n)
{
	struct stat root, st;
	if (stat("/", &root) < 0)
		return "host_state (the file system root cannot be examined)";
	autoclose int cur = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	for (int k = 0; cur >= 0 && k < WALK_MAX; k++) {
		if (fstat(cur, &st) < 0)
			break;
		if (in_set(&st, d, n))
			return "host_state (beneath GL_HOME, another path of the host's state, "
			       "/proc, /sys, /dev, /run or /var/run, as opened)";
		if (st.st_dev == root.st_dev && st.st_ino == root.st_ino)
			return NULL;
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat ust;
		if (up < 0 || fstat(up, &ust) < 0 || (ust.st_dev == st.st_dev && ust.st_ino == st.st_ino)) {
			if (up >= 0)
				close(up);
			return NULL; /* the root of this mount namespace */
		}
		close(cur);
		cur = up;
	}
	return "host_state (its ancestors cannot be walked to the root)";
}

/* Mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* One line of /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT POINT …". */
struct mnt {
	unsigned long id;
	char dev[32];
	char root[PATH_MAX], point[PATH_MAX];
};

/* The next line of mountinfo from *cur into m; false at the end. */
static bool next_mount(const char **cur, struct mnt *m)
{
	while (**cur) {
		const char *line = *cur, *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		*cur = line + n + (nl ? 1 : 0);
		char buf[2 * PATH_MAX + 128];
		if (n >= sizeof buf)
			continue;
		memcpy(buf, line, n);
		buf[n] = 0;
		if (sscanf(buf, "%lu %*u %31s %4095s %4095s", &m->id, m->dev, m->root, m->point) != 4)
			continue;
		unescape(m->root);
		unescape(m->point);
		return true;
	}
	return false;
}

static bool under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return n == 1 || (!strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/'));
}

/* Where fd lies in its own file system: the device and the path from that
 * file system's root (a bind mount of GL_HOME/slots at /data/x puts
 * /data/x/f at GL_HOME/slots/f's place), from /proc/self/fdinfo's mnt_id,
 * the mount's root and point, and fd's path. -1 when unknown. */
static int fs_place(const char *info, int fd, char dev[32], char **place)
{
	char name[64], buf[PATH_MAX];
	snprintf(name, sizeof name, "/proc/self/fdinfo/%d", fd);
	autofree char *fi = NULL;
	size_t len = 0;
	unsigned long id = 0;
	const char *at = NULL;
	if (gl_read_file_capped(name, 4096, &fi, &len) < 0 || !(at = strstr(fi, "mnt_id:")) ||
	    sscanf(at, "mnt_id: %lu", &id) != 1)
		return -1;
	snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(name, buf, sizeof buf - 1);
	if (n <= 0 || buf[0] != '/')
		return -1;
	buf[n] = 0;
	struct mnt m;
	for (const char *cur = info; next_mount(&cur, &m);) {
		if (m.id != id || !under(buf, m.point))
			continue;
		const char *rest = strcmp(m.point, "/") ? buf + strlen(m.point) : buf;
		snprintf(dev, 32, "%s", m.dev);
		*place = gl_xasprintf("%s%s", strcmp(m.root, "/") ? m.root : "",
				      *rest ? rest : (strcmp(m.root, "/") ? "" : "/"));
		return 0;
	}
	return -1;
}

/* By the places in their file systems: is fd (its place fp on device dev)
 * beneath a state root or a fixed host path, or (a directory) above one?
 * Catches what no path shows: a bind mount of a part of GL_HOME. */
static const char *aliases_state(const struct gl_state_roots *roots, const char *info,
				 const struct stat *st, const char *dev, const char *fp)
{
	bool isdir = S_ISDIR(st->st_mode);
	static const char *const fixed[] = {"/proc", "/sys", "/dev", "/run", "/var/run"};
	size_t nf = sizeof fixed / sizeof *fixed, n = nf + (roots ? roots->n : 0);
	for (size_t i = 0; i < n; i++) {
		const char *p = i < nf ? fixed[i] : roots->p[i - nf];
		autoclose int o = open(p, O_PATH | O_CLOEXEC);
		struct stat os;
		char sdev[32];
		autofree char *sp = NULL;
		/* another device cannot alias it (a bind mount keeps st_dev) */
		if (o < 0 || fstat(o, &os) < 0 || os.st_dev != st->st_dev ||
		    fs_place(info, o, sdev, &sp) < 0 || strcmp(sdev, dev))
			continue;
		if (under(fp, sp))
			return "host_state (beneath GL_HOME, another path of the host's state, /proc, "
			       "/sys, /dev, /run or /var/run in its file system, as opened)";
		if (isdir && under(sp, fp))
			return "host_state (an ancestor of GL_HOME or another path of the host's state "
			       "in its file system, as opened)";
	}
	return NULL;
}

/* Does a mount point lie strictly beneath directory dir (its path)? A
 * mount there could bring /proc or another file system holding host state
 * beneath a directory item unseen by its path. */
static bool mount_beneath(const char *info, const char *dir)
{
	struct mnt m;
	for (const char *cur = info; next_mount(&cur, &m);)
		if (strcmp(m.point, dir) && under(m.point, dir))
			return true;
	return false;
}

static bool pseudo_fs(int fd)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return true;
	static const long magic[] = {PROC_SUPER_MAGIC, SYSFS_MAGIC,     DEVPTS_SUPER_MAGIC,
				     CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, SECURITYFS_MAGIC,
				     DEBUGFS_MAGIC,    TRACEFS_MAGIC,   BPF_FS_MAGIC};
	for (size_t i = 0; i < sizeof magic / sizeof *magic; i++)
		if ((long)sf.f_type == magic[i])
			return true;
	return false;
}

/* What fd (opened as path; parent its directory) breaks, or NULL; *real
 * (malloc'd) its path as the kernel names it. Fail closed: what cannot be
 * examined is refused (/proc is needed, as for the copy checks). */
static const char *opened_rule(const struct gl_state_roots *roots, int fd, int parent,
			       char **real)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n <= 0 || buf[0] != '/')
		return "host_state (what was opened cannot be named back: /proc is needed)";
	buf[n] = 0;
	*real = gl_xstrdup(buf);
	const char *rule = gl_host_state_rule(roots, buf);
	if (rule)
		return rule;
	if (pseudo_fs(fd))
		return "proc_sys (on a kernel pseudo file system, as opened)";
	struct stat st;
	if (fstat(fd, &st) < 0)
		return "host_state (what was opened cannot be examined)";
	bool isdir = S_ISDIR(st.st_mode); /* checked as a directory, asked for or not */
	struct devino d[2 * GL_READPATHS_STATE_MAX + 8];
	size_t nd = deny_set(roots, d, sizeof d / sizeof *d);
	if ((rule = walk_up(isdir ? fd : parent, d, nd)))
		return rule;
	autofree char *info = NULL, *fp = NULL;
	size_t len = 0;
	char dev[32];
	if (gl_read_file_capped("/proc/self/mountinfo", MOUNTINFO_MAX, &info, &len) < 0 ||
	    fs_place(info, fd, dev, &fp) < 0)
		return "host_state (its mount cannot be found in /proc/self/mountinfo)";
	if ((rule = aliases_state(roots, info, &st, dev, fp)))
		return rule;
	if (isdir && mount_beneath(info, buf))
		return "host_state (a mount point lies beneath the directory)";
	return NULL;
}

static int openat_no_symlinks(int dfd, const char *name, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
	long fd;
	do
		fd = syscall(SYS_openat2, dfd, name, &how, sizeof how);
	while (fd < 0 && errno == EINTR);
	return (int)fd;
}

int gl_itempath_open(const struct gl_state_roots *roots, const char *path, int flags,
		     struct gl_fail *f)
{
	if (gl_itempath_off())
		return gl_open_no_symlinks(path, flags);
	if (gl_itempath_check(roots, path, f) < 0)
		return -1;
	/* the parent first, then the last component beneath it: the walk
	 * starts from a directory this very descriptor lies in */
	autofree char *abs = absolute(path);
	char *slash = strrchr(abs, '/');
	const char *leaf = slash[1] ? slash + 1 : ".";
	*slash = 0;
	autoclose int parent = gl_open_no_symlinks(*abs ? abs : "/", O_PATH | O_DIRECTORY);
	if (parent < 0)
		return -1;
	autoclose int fd = openat_no_symlinks(parent, leaf, flags);
	if (fd < 0)
		return -1;
	autofree char *real = NULL;
	const char *rule = opened_rule(roots, fd, parent, &real);
	if (rule) {
		autofree char *qp = show(path);
		autofree char *qr = real && strcmp(real, path) ? show(real) : NULL;
		return gl_fail(f, GL_E_ITEM_PATH, "item path %s%s%s%s: refused: %s", qp,
			       qr ? " (opened as " : "", qr ? qr : "", qr ? ")" : "", rule);
	}
	return gl_steal_fd(&fd);
}
