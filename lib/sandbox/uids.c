/* uids.c — delegated host uids, leased a block per germline (uids.h;
 * docs/sandbox.md "Host uids"). */
#define _GNU_SOURCE
#include "sandbox/uids.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define SUBID_FILE_MAX (1 << 20) /* a subid file we read: at most 1 MiB */
#define NEWUIDMAP "/usr/bin/newuidmap"
#define NEWGIDMAP "/usr/bin/newgidmap"

extern char **environ;

/* The first line of the subid file at path for the user (by name or by
 * number): *start and *count. 1 found, 0 none (or no file), -1 with f. */
static int subid_entry(const char *path, const char *name, unsigned long id,
		       unsigned long *start, unsigned long *count, struct gl_fail *f)
{
	autofree char *s = NULL;
	size_t n = 0;
	if (gl_read_file_capped(path, SUBID_FILE_MAX, &s, &n) < 0)
		return errno == ENOENT ? 0 : gl_fail(f, GL_E_IO, "%s: %s", path, strerror(errno));
	char idtext[24];
	snprintf(idtext, sizeof idtext, "%lu", id);
	for (char *line = s, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = '\0';
		if (strcmp(line, idtext) && (!name || strcmp(line, name)))
			continue;
		char *e1, *e2;
		errno = 0;
		unsigned long a = strtoul(c1 + 1, &e1, 10), b = strtoul(c2 + 1, &e2, 10);
		/* ids are 32 bits, and (uid_t)-1 means "none" to the kernel */
		if (errno || e1 != c2 || *e2 || c1[1] == '-' || c2[1] == '-' || b == 0 ||
		    a > 0xfffffffeUL || b > 0xffffffffUL - a)
			return gl_fail(f, GL_E_IO, "%s: the entry of %s is not NAME:START:COUNT", path,
				       line);
		*start = a;
		*count = b;
		return 1;
	}
	return 0;
}

/* Does any user (group) of the system's databases hold an id of the range?
 * Such an id owns files and processes on the host: never a copy's. */
static const char *range_taken(unsigned long ubase, unsigned long gbase, unsigned long n)
{
	const char *who = NULL;
	setpwent();
	for (struct passwd *pw; !who && (pw = getpwent());)
		if (pw->pw_uid >= ubase && pw->pw_uid - ubase < n)
			who = "a user of the passwd database";
	endpwent();
	setgrent();
	for (struct group *gr; !who && (gr = getgrent());)
		if (gr->gr_gid >= gbase && gr->gr_gid - gbase < n)
			who = "a group of the group database";
	endgrent();
	return who;
}

/* Is path a directory of uid me's own, written by nobody else? */
static bool own_dir(const char *path, uid_t me)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == me &&
	       !(st.st_mode & 0022);
}

/* The lease directory: root's under /run, another user's in its runtime
 * directory (when that is its own; else /tmp), made 0700 if missing and refused unless it is a
 * directory of the user's own that nobody else may write. NULL with f. */
/* The host's uid of our euid, from /proc/self/uid_map; *initial when that
 * map is the initial user namespace's identity. false if it cannot be read
 * or does not map us. */
static bool host_uid(uid_t me, unsigned long *host, bool *initial)
{
	autofree char *m = NULL;
	size_t n = 0;
	if (gl_read_file_capped("/proc/self/uid_map", 64 * 1024, &m, &n) < 0)
		return false;
	*initial = false;
	for (char *line = m, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		unsigned long in, out, len;
		if (sscanf(line, "%lu %lu %lu", &in, &out, &len) != 3)
			continue;
		if (in == 0 && out == 0 && len == 4294967295ul)
			*initial = true;
		if (me >= in && me - in < len) {
			*host = out + (me - in);
			return true;
		}
	}
	return false;
}

/* The lease directory of uid me (host uid host; root of the initial
 * user namespace when root). */
static char *lease_dir(uid_t me, unsigned long host, bool root, struct gl_fail *f)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char *dir;
	if (root) {
		if (mkdir("/run/germline", 0755) < 0 && errno != EEXIST)
			return gl_fail(f, GL_E_IO, "/run/germline: %s", strerror(errno)), NULL;
		dir = gl_xstrdup("/run/germline/uids");
	} else if (rt && *rt == '/' && own_dir(rt, me)) {
		dir = gl_xasprintf("%s/germline-uids", rt);
	} else {
		dir = gl_xasprintf("/tmp/germline-uids-%lu", host);
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		gl_fail(f, GL_E_IO, "%s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	if (!own_dir(dir, me)) {
		gl_fail(f, GL_E_IO, "%s: not a directory of uid %lu's own that only it may write",
			dir, (unsigned long)me);
		free(dir);
		return NULL;
	}
	return dir;
}

/* A set-user-ID-root helper at path (newuidmap, newgidmap)? */
static bool setuid_root(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
	       (st.st_mode & S_ISUID) && (st.st_mode & S_IXOTH);
}

static const char *test_env(const char *name)
{
#ifdef GL_TESTING
	const char *v = getenv(name);
	return v && *v ? v : NULL;
#else
	(void)name;
	return NULL;
#endif
}

const char *gl_uids_subuid_path(void)
{
	const char *t = test_env("GL_TEST_SUBUID");
	return t ? t : "/etc/subuid";
}

const char *gl_uids_subgid_path(void)
{
	const char *t = test_env("GL_TEST_SUBGID");
	return t ? t : "/etc/subgid";
}

/* GL_TESTING, GL_TEST_UIDS_OFF=1: no range and no serial lock, as before
 * host uids were kept apart (tests/host-uids.bats shows the harm). */
static bool uids_off(void)
{
	const char *t = test_env("GL_TEST_UIDS_OFF");
	return t && !strcmp(t, "1");
}

int gl_uids_open(struct gl_uids *u, const char *subuid, const char *subgid, struct gl_fail *f)
{
	*u = (struct gl_uids){0};
	if (uids_off()) {
		u->off = true;
		return 0;
	}
	uid_t me = geteuid();
	struct passwd *pw = getpwuid(me);
	autofree char *name = pw ? gl_xstrdup(pw->pw_name) : NULL;
	unsigned long host = me;
	bool initial = true;
	if (!host_uid(me, &host, &initial))
		return gl_fail(f, GL_E_IO, "/proc/self/uid_map does not map uid %lu",
			       (unsigned long)me);
	u->dir = lease_dir(me, host, me == 0 && initial, f);
	if (!u->dir)
		return -1;
	if (!initial) {
		/* in a container's or `unshare -r`'s user namespace: the ranges
		 * of /etc/subuid name the host's ids, which are not ours to map */
		u->why = gl_xasprintf("gl-run runs in a user namespace other than the host's (uid "
				      "%lu here is host uid %lu): the ranges of %s and %s are the "
				      "host's",
				      (unsigned long)me, host, subuid, subgid);
		return 0;
	}
	unsigned long us = 0, un = 0, gs = 0, gn = 0;
	int ru = subid_entry(subuid, name, me, &us, &un, f);
	int rg = ru < 0 ? -1 : subid_entry(subgid, name, getegid(), &gs, &gn, f);
	if (ru < 0 || rg < 0)
		return -1;
	u->helper = me != 0;
	if (!ru || !rg) {
		u->why = gl_xasprintf("no range of host ids is delegated to %s (uid %lu) in %s and "
				      "%s",
				      name ? name : "this user", (unsigned long)me, subuid, subgid);
		return 0;
	}
	unsigned long n = un < gn ? un : gn;
	if (n < GL_UIDS_BLOCK) {
		u->why = gl_xasprintf("the range delegated in %s and %s holds %lu ids, fewer than "
				      "one germline's %d",
				      subuid, subgid, n, GL_UIDS_BLOCK);
		return 0;
	}
	const char *who = range_taken(us, gs, n);
	if (who)
		return gl_fail(f, GL_E_IO,
			       "the range delegated in %s and %s (%lu ids from uid %lu, gid %lu) "
			       "holds %s: its ids own files or processes on this host",
			       subuid, subgid, n, us, gs, who);
	if (u->helper && (!setuid_root(NEWUIDMAP) || !setuid_root(NEWGIDMAP))) {
		u->why = gl_xasprintf("%s and %s (Debian's uidmap) are missing or not "
				      "set-user-ID root: a user other than root cannot map its "
				      "delegated range",
				      NEWUIDMAP, NEWGIDMAP);
		return 0;
	}
	u->on = true;
	u->ubase = (uid_t)us;
	u->gbase = (gid_t)gs;
	u->count = n;
	return 0;
}

void gl_uids_close(struct gl_uids *u)
{
	free(u->dir);
	free(u->why);
	*u = (struct gl_uids){0};
}

/* Is any id of [base, base + n) a real, effective, saved or filesystem
 * uid of a process on the host (/proc of the broker's PID namespace, which
 * sees the germlines it started and their copies)? */
static bool block_busy(uid_t base, unsigned n)
{
	DIR *d = opendir("/proc");
	if (!d)
		return true; /* cannot tell: not free */
	bool busy = false;
	struct dirent *e;
	while (!busy && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char p[300];
		snprintf(p, sizeof p, "/proc/%s/status", e->d_name);
		autofree char *s = NULL;
		size_t len;
		if (gl_read_file_capped(p, 1 << 16, &s, &len) < 0)
			continue; /* gone */
		const char *l = strstr(s, "\nUid:");
		unsigned long id[4];
		if (!l || sscanf(l + 5, "%lu %lu %lu %lu", &id[0], &id[1], &id[2], &id[3]) != 4)
			continue;
		for (int i = 0; i < 4; i++)
			busy = busy || (id[i] >= base && id[i] - base < n);
	}
	closedir(d);
	return busy;
}

/* One pass over the blocks from a random one: 1 with *l leased, 0 none
 * free (*busy: how many were unlocked but still ran something), -1 with f. */
static int lease_pass(const struct gl_uids *u, struct gl_uid_lease *l, unsigned long *busy,
		      struct gl_fail *f)
{
	unsigned long nblocks = u->count / GL_UIDS_BLOCK;
	unsigned long first = 0;
	if (getrandom(&first, sizeof first, 0) != sizeof first)
		first = (unsigned long)getpid();
	*busy = 0;
	for (unsigned long i = 0; i < nblocks; i++) {
		unsigned long b = (first + i) % nblocks;
		autofree char *p = gl_xasprintf("%s/%lu.%lu.lock", u->dir, (unsigned long)u->ubase, b);
		int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return gl_fail(f, GL_E_LAUNCH, "%s: %s", p, strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);
			continue;
		}
		uid_t base = u->ubase + (uid_t)(b * GL_UIDS_BLOCK);
		if (block_busy(base, GL_UIDS_BLOCK)) {
			close(fd);
			(*busy)++;
			continue;
		}
		*l = (struct gl_uid_lease){.fd = fd, .uid = base,
					   .gid = u->gbase + (gid_t)(b * GL_UIDS_BLOCK),
					   .block = (unsigned)b};
		return 1;
	}
	return 0;
}

int gl_uids_lease(const struct gl_uids *u, struct gl_uid_lease *l, struct gl_fail *f)
{
	*l = (struct gl_uid_lease){.fd = -1};
	unsigned long busy = 0;
	/* A block whose lock is free but whose ids still run something: a
	 * holder that died a moment ago, its processes still going (the
	 * kernel kills its namespaces after it); waited for, 2 s at most. */
	for (int t = 0; t < 40; t++) {
		int r = lease_pass(u, l, &busy, f);
		if (r != 0)
			return r < 0 ? -1 : 0;
		if (!busy)
			break;
		usleep(50000);
	}
	if (busy)
		return gl_fail(f, GL_E_LAUNCH,
			       "no block of %d host ids of the delegated range (%lu from uid %lu) is "
			       "free: %lu unleased ones still run processes (another user of the "
			       "range?)",
			       GL_UIDS_BLOCK, u->count, (unsigned long)u->ubase, busy);
	return gl_fail(f, GL_E_LAUNCH,
		       "every block of %d host ids of the delegated range (%lu from uid %lu) is "
		       "held by another germline",
		       GL_UIDS_BLOCK, u->count, (unsigned long)u->ubase);
}

void gl_uids_release(struct gl_uid_lease *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

/* Write s into /proc/pid/name. 0, or -1 with f.
 * A broker holding a key (gl-run --host-key) is not dumpable, and so is
 * its launch child until that child's first step makes itself dumpable
 * again (lib/runtime/germline_child.c): until then its /proc files are
 * root's, and an unprivileged broker meets EACCES. It is waited for, a
 * millisecond at a time, up to a second. */
static int proc_put(pid_t pid, const char *name, const char *s, struct gl_fail *f)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/%s", (long)pid, name);
	int rc;
	for (int tries = 0; (rc = gl_write_file_str(p, s)) < 0 && errno == EACCES && tries < 1000;
	     tries++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	if (rc < 0)
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "%s: %s", p, strerror(errno));
	return 0;
}

/* Run helper (newuidmap, newgidmap) for pid with one mapping line; its
 * words on stderr go into f. 0, or -1 with f. */
static int run_helper(const char *helper, pid_t pid, unsigned long base, struct gl_fail *f)
{
	char a1[24], a3[24], a4[24];
	snprintf(a1, sizeof a1, "%ld", (long)pid);
	snprintf(a3, sizeof a3, "%lu", base);
	snprintf(a4, sizeof a4, "%d", GL_UIDS_BLOCK);
	char *argv[] = {(char *)helper, a1, "0", a3, a4, NULL};
	char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
	int err[2];
	if (pipe2(err, O_CLOEXEC) < 0)
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "pipe: %s", strerror(errno));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, err[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	pid_t child;
	int rc = posix_spawn(&child, helper, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(err[1]);
	if (rc != 0) {
		close(err[0]);
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "%s: %s", helper, strerror(rc));
	}
	char said[512];
	size_t n = 0;
	for (ssize_t r; n < sizeof said - 1 &&
			(r = read(err[0], said + n, sizeof said - 1 - n)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	said[n] = '\0';
	close(err[0]);
	int st;
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "%s: waitpid: %s", helper,
				       strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	autofree char *safe = gl_sanitize(said, strcspn(said, "\n"));
	return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "%s %s 0 %s %s failed: %s", helper, a1, a3, a4,
		       *safe ? safe : "no reason given");
}

int gl_uids_map(const struct gl_uids *u, const struct gl_uid_lease *l, pid_t pid,
		struct gl_fail *f)
{
	/* setgroups first: once the gid map is written it cannot change, and
	 * denied, no process of the namespace may drop a group it has */
	if (proc_put(pid, "setgroups", "deny", f) < 0)
		return -1;
	if (u->helper)
		return run_helper(NEWUIDMAP, pid, l->uid, f) < 0 ||
			       run_helper(NEWGIDMAP, pid, l->gid, f) < 0
			   ? -1
			   : 0;
	char m[64];
	snprintf(m, sizeof m, "0 %lu %d\n", (unsigned long)l->uid, GL_UIDS_BLOCK);
	if (proc_put(pid, "uid_map", m, f) < 0)
		return -1;
	snprintf(m, sizeof m, "0 %lu %d\n", (unsigned long)l->gid, GL_UIDS_BLOCK);
	return proc_put(pid, "gid_map", m, f);
}

int gl_uids_serial_take(const struct gl_uids *u, struct gl_fail *f)
{
	autofree char *p = gl_xasprintf("%s/serial.lock", u->dir);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return gl_fail(f, GL_E_IO, "%s: %s", p, strerror(errno));
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return gl_fail(f, GL_E_IO, "%s: flock: %s", p, strerror(e));
		}
	return fd;
}

void gl_uids_serial_give(int fd)
{
	if (fd >= 0)
		close(fd);
}
