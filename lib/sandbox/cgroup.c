/* cgroup.c — per-copy resource bounds: the cgroup pool (its delegation,
 * slots and set-up) and the rlimit fallback. How the broker tells which
 * bound a copy reached, and a slot's drain after it, are cgroup_reached.c;
 * the germline's own bound cgroup_germline.c. See cgroup.h and
 * docs/sandbox.md "Resource limits". */
#define _GNU_SOURCE
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/cgroup_impl.h"
#include "sandbox/live.h"
#include "core/util.h"

#define CGROUP_SUPER_MAGIC_ 0x27e0eb
#define CGROUP2_SUPER_MAGIC_ 0x63677270

/* ---- small file helpers ---------------------------------------------------- */

int gl_cg_put(const char *dir, const char *file, const char *s)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	return gl_write_file_str(p, s);
}

int gl_cg_put_u64(const char *dir, const char *file, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	return gl_cg_put(dir, file, b);
}

/* The number after "key " in a "key value" file, or 0. */
uint64_t gl_cg_get_key(const char *dir, const char *file, const char *key)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	autofree char *s = NULL;
	size_t n;
	if (gl_read_file_capped(p, 64 * 1024, &s, &n) < 0)
		return 0;
	size_t k = strlen(key);
	for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, k) && l[k] == ' ')
			return strtoull(l + k + 1, NULL, 10);
	return 0;
}

char *gl_cg_slot_dir(const char *base, int i)
{
	return gl_xasprintf("%s/c%d", base, i);
}

/* Pids listed in dir/cgroup.procs: -1 unreadable, else how many (killed
 * with SIGKILL when kill is set). */
int gl_cg_procs(const char *dir, bool kill_them)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/cgroup.procs", dir);
	autofree char *s = NULL;
	size_t n;
	if (gl_read_file_capped(p, 4 << 20, &s, &n) < 0)
		return -1;
	int k = 0;
	for (char *l = s; *l;) {
		long pid = strtol(l, &l, 10);
		if (pid > 0) {
			k++;
			if (kill_them)
				kill((pid_t)pid, SIGKILL);
		}
		while (*l == '\n' || *l == ' ')
			l++;
		if (pid <= 0 && *l && (*l < '0' || *l > '9'))
			break;
	}
	return k;
}

/* The cgroup path of this process for controller ctl ("" for v2's line). */
static char *own_path(const char *ctl)
{
	autofree char *s = NULL;
	size_t n;
	if (gl_read_file_capped("/proc/self/cgroup", 64 * 1024, &s, &n) < 0)
		return NULL;
	for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
		char *a = strchr(l, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		*b = 0;
		const char *ctls = a + 1;
		bool hit = !*ctl ? !*ctls && !strncmp(l, "0", 1) : false;
		if (*ctl) {
			autofree char *dup = gl_xstrdup(ctls);
			for (char *c = strtok_r(dup, ",", &a); c; c = strtok_r(NULL, ",", &a))
				if (!strcmp(c, ctl))
					hit = true;
		}
		if (hit)
			return gl_xstrdup(b + 1);
	}
	return NULL;
}

static bool is_fs(const char *path, long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && (long)sf.f_type == magic;
}

/* Remove a base directory and its groups (ending what is in them): the
 * copy slots c<i> and the germlines' g<pid>. */
static void remove_base(const char *base)
{
	DIR *dd = opendir(base);
	struct dirent *e;
	while (dd && (e = readdir(dd))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		autofree char *d = gl_xasprintf("%s/%s", base, e->d_name);
		for (int t = 0; t < 200 && gl_cg_procs(d, true) > 0; t++)
			usleep(10000);
		rmdir(d);
	}
	if (dd)
		closedir(dd);
	rmdir(base);
}

/* Bases of gl-run processes that are gone (killed before gl_cg_close). */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid;
		char tail;
		if (sscanf(e->d_name, "germline-%ld%c", &pid, &tail) != 1 || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			autofree char *b = gl_xasprintf("%s/%s", parent, e->d_name);
			remove_base(b);
		}
	}
	closedir(d);
}

/* mkdir parent/germline-<pid> and its slots; NULL (nothing left) on failure. */
static char *make_base(const char *parent, bool v2)
{
	remove_stale(parent);
	char *base = gl_xasprintf("%s/germline-%ld", parent, (long)getpid());
	if (mkdir(base, 0755) < 0 && errno != EEXIST)
		goto fail;
	if (v2 && gl_cg_put(base, "cgroup.subtree_control", "+memory +pids") < 0)
		goto fail;
	for (int i = 0; i < GL_CG_SLOTS; i++) {
		autofree char *d = gl_cg_slot_dir(base, i);
		if (mkdir(d, 0755) < 0 && errno != EEXIST)
			goto fail;
	}
	return base;
fail:
	remove_base(base);
	free(base);
	return NULL;
}

static bool open_v1(struct gl_cg *cg)
{
	static const char mroot[] = "/sys/fs/cgroup/memory", proot[] = "/sys/fs/cgroup/pids";
	if (!is_fs(mroot, CGROUP_SUPER_MAGIC_) || !is_fs(proot, CGROUP_SUPER_MAGIC_))
		return false;
	autofree char *m = own_path("memory"), *p = own_path("pids");
	if (!m || !p)
		return false;
	autofree char *mp = gl_xasprintf("%s%s", mroot, m), *pp = gl_xasprintf("%s%s", proot, p);
	cg->mem_base = make_base(mp, false);
	cg->pids_base = cg->mem_base ? make_base(pp, false) : NULL;
	if (!cg->pids_base) {
		cg->why = gl_xasprintf("cgroup v1: cannot make per-copy groups under %s and %s: %s",
				       mp, pp, strerror(errno));
		if (cg->mem_base)
			remove_base(cg->mem_base);
		free(cg->mem_base);
		cg->mem_base = NULL;
		return false;
	}
	cg->kind = GL_CG_V1;
	return true;
}

/* v2 with delegation: the broker's own cgroup must be writable with the
 * memory and pids controllers available; if it holds processes (a systemd
 * unit with Delegate=yes), the broker first moves itself into a leaf
 * (gl-broker-<pid>) so that the "no internal processes" rule allows
 * enabling them for its subtree. */
static bool open_v2(struct gl_cg *cg)
{
	static const char root[] = "/sys/fs/cgroup";
	if (!is_fs(root, CGROUP2_SUPER_MAGIC_))
		return false;
	autofree char *own = own_path("");
	if (!own)
		return false;
	autofree char *dir = gl_xasprintf("%s%s", root, strcmp(own, "/") ? own : "");
	char cp[PATH_MAX];
	snprintf(cp, sizeof cp, "%s/cgroup.controllers", dir);
	autofree char *ctls = NULL;
	size_t n;
	if (gl_read_file_capped(cp, 4096, &ctls, &n) < 0 || !strstr(ctls, "memory") ||
	    !strstr(ctls, "pids"))
		return false; /* not delegated to us, or the controllers are v1's */
	if (gl_cg_put(dir, "cgroup.subtree_control", "+memory +pids") < 0 && errno == EBUSY) {
		autofree char *leaf = gl_xasprintf("%s/gl-broker-%ld", dir, (long)getpid());
		if ((mkdir(leaf, 0755) < 0 && errno != EEXIST) || gl_cg_put(leaf, "cgroup.procs", "0") < 0 ||
		    gl_cg_put(dir, "cgroup.subtree_control", "+memory +pids") < 0) {
			cg->why = gl_xasprintf("cgroup v2: cannot enable memory and pids under %s: %s",
					       dir, strerror(errno));
			return false;
		}
	}
	cg->mem_base = make_base(dir, true);
	if (!cg->mem_base) {
		cg->why = gl_xasprintf("cgroup v2: cannot make per-copy groups under %s: %s", dir,
				       strerror(errno));
		return false;
	}
	cg->kind = GL_CG_V2;
	return true;
}

void gl_cg_open(struct gl_cg *cg)
{
	memset(cg, 0, sizeof *cg);
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_LIMITS_OFF");
	if (off && !strcmp(off, "1")) {
		cg->off = true;
		return;
	}
#endif
	if (!open_v2(cg) && !open_v1(cg) && !cg->why)
		cg->why = gl_xstrdup("no writable cgroup with the memory and pids controllers");
}

void gl_cg_close(struct gl_cg *cg)
{
	if (gl_live_nslots() > cg->nslots)
		cg->nslots = gl_live_nslots();
	if (cg->mem_base)
		remove_base(cg->mem_base);
	if (cg->pids_base)
		remove_base(cg->pids_base);
	free(cg->mem_base);
	free(cg->pids_base);
	free(cg->why);
	memset(cg, 0, sizeof *cg);
}

/* ---- bounding a copy -------------------------------------------------------- */

/* One more slot when every one is taken (GL_CG_SLOTS_MAX): 0, or -1. */
static int cg_grow_locked(struct gl_cg *cg)
{
	if (gl_live_nslots() > cg->nslots)
		cg->nslots = gl_live_nslots();
	if (cg->nslots >= GL_CG_SLOTS_MAX) {
		errno = EBUSY;
		return -1;
	}
	autofree char *m = gl_cg_slot_dir(cg->mem_base, (int)cg->nslots);
	autofree char *p = cg->pids_base ? gl_cg_slot_dir(cg->pids_base, (int)cg->nslots) : NULL;
	if ((mkdir(m, 0755) < 0 && errno != EEXIST) || (p && mkdir(p, 0755) < 0 && errno != EEXIST))
		return -1;
	cg->nslots++;
	gl_live_set_nslots(cg->nslots);
	return 0;
}

/* gl-run --jobs: the count is shared, so the main process removes what a
 * worker made (lib/sandbox/live.h). */
static int cg_grow(struct gl_cg *cg)
{
	gl_live_lock();
	int rc = cg_grow_locked(cg);
	gl_live_unlock();
	return rc;
}

/* The per-copy slot the copy joins, its limits written: 0, or -1. */
static int cg_place(struct gl_cg *cg, const struct gl_limits *l, pid_t pid, struct gl_cg_copy *cc)
{
	if (!cg->nslots)
		cg->nslots = GL_CG_SLOTS;
	if (gl_live_nslots() > cg->nslots)
		cg->nslots = gl_live_nslots(); /* a worker made more */
	unsigned first = cg->next, n = cg->nslots;
	for (unsigned k = 0;; k++) {
		int i;
		if (k < n) {
			i = (int)((first + k) % n);
		} else { /* every slot made is busy: one more (GL_CG_SLOTS_MAX) */
			if (cg_grow(cg) < 0)
				return -1;
			i = (int)cg->nslots - 1;
		}
		autofree char *m = gl_cg_slot_dir(cg->mem_base, i);
		autofree char *p = cg->pids_base ? gl_cg_slot_dir(cg->pids_base, i) : NULL;
		/* gl-run --jobs: a slot another worker claimed is busy even while
		 * empty (its copy is still to be drained; lib/sandbox/live.h) */
		if (!gl_live_slot_claim((unsigned)i))
			continue;
		if (gl_cg_procs(m, false) != 0 || (p && gl_cg_procs(p, false) != 0))
			continue; /* busy: a retiring or pooled copy */
		uint64_t mem = (uint64_t)l->memory_mb << 20;
		char pid_s[24];
		snprintf(pid_s, sizeof pid_s, "%ld", (long)pid);
		int rc;
		if (cg->kind == GL_CG_V2) {
			gl_cg_put(m, "memory.swap.max", "0");
			rc = gl_cg_put_u64(m, "memory.max", mem) | gl_cg_put_u64(m, "pids.max", l->pids);
			cc->oom0 = gl_cg_get_key(m, "memory.events", "oom_kill");
			cc->max0 = gl_cg_get_key(m, "pids.events", "max");
			rc |= gl_cg_put(m, "cgroup.procs", pid_s);
		} else {
			gl_cg_put(m, "memory.memsw.limit_in_bytes", "-1");
			rc = gl_cg_put_u64(m, "memory.limit_in_bytes", mem);
			gl_cg_put_u64(m, "memory.memsw.limit_in_bytes", mem); /* no swap beyond it */
			rc |= gl_cg_put_u64(p, "pids.max", l->pids);
			cc->oom0 = gl_cg_get_key(m, "memory.oom_control", "oom_kill");
			cc->max0 = gl_cg_get_key(p, "pids.events", "max");
			rc |= gl_cg_put(m, "cgroup.procs", pid_s) | gl_cg_put(p, "cgroup.procs", pid_s);
		}
		if (rc)
			return -1;
		cc->slot = i;
		cg->next = (unsigned)(i + 1) % cg->nslots;
		return 0;
	}
	errno = EBUSY;
	return -1;
}

/* The copy's real uid as the host sees it, or -1. */
long gl_cg_host_uid(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/status", (long)pid);
	autofree char *s = NULL;
	size_t n;
	if (gl_read_file_capped(p, 64 * 1024, &s, &n) < 0)
		return -1;
	const char *u = strstr(s, "\nUid:");
	return u ? strtol(u + 5, NULL, 10) : -1;
}

/* Is the broker in the initial user namespace (uid_map "0 0 4294967295")?
 * Only there is a uid 0 the host's root, whom RLIMIT_NPROC does not bind;
 * inside a user namespace of its own (an unprivileged operator's
 * `unshare -r`) uid 0 has no capability in the initial one and is bound. */
bool gl_cg_initial_userns(void)
{
	autofree char *s = NULL;
	size_t n;
	if (gl_read_file_capped("/proc/self/uid_map", 4096, &s, &n) < 0)
		return true; /* cannot tell: assume the stricter case */
	unsigned long a, b, c;
	return sscanf(s, "%lu %lu %lu", &a, &b, &c) == 3 && a == 0 && b == 0 && c == 4294967295ul;
}

/* A "\nVmXxx:" field of /proc/PID/status in bytes, or 0. */
uint64_t gl_cg_vm_field(pid_t pid, const char *field)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/status", (long)pid);
	autofree char *s = NULL;
	size_t n;
	if (gl_read_file_capped(p, 64 * 1024, &s, &n) < 0)
		return 0;
	const char *v = strstr(s, field);
	return v ? strtoull(v + strlen(field), NULL, 10) << 10 : 0;
}

/* soft = hard = v, or the copy's hard limit when that is already lower (an
 * operator's `ulimit`: a tighter bound than the policy's still bounds it,
 * and an unprivileged broker could not raise it anyway) */
int gl_cg_set_rlimit(pid_t pid, int res, uint64_t v)
{
	struct rlimit cur;
	if (prlimit(pid, res, NULL, &cur) < 0)
		return -1;
	if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v)
		v = cur.rlim_max;
	struct rlimit r = {v, v};
	return prlimit(pid, res, &r, NULL);
}

int gl_cg_nproc_own_uid(struct gl_cg_copy *cc, pid_t pid)
{
	if (!cc->nproc_base)
		return 0;
	cc->nproc_base = 0;
	return gl_cg_set_rlimit(pid, RLIMIT_NPROC, cc->lim.pids);
}

int gl_cg_bound_copy(struct gl_cg *cg, const struct gl_limits *l, pid_t pid, bool exec,
		     struct gl_cg_copy *cc, struct gl_fail *f)
{
	/* the refusal of the copy: a fork's (germline) or a launch's */
	enum gl_code code = exec ? GL_E_LAUNCH : GL_E_GERMLINE;
	memset(cc, 0, sizeof *cc);
	cc->slot = -1;
	cc->pid = pid;
	cc->lim = *l;
	if (cg->off) { /* GL_TESTING, GL_TEST_LIMITS_OFF=1 */
		cc->mem = cc->pids = cc->cpu = "off";
		return 0;
	}
	const char *kind = cg->kind == GL_CG_V2 ? "cgroup_v2" : "cgroup_v1";
	/* one mechanism for every copy of this gl-run ("enforcement" is the
	 * plan's): a slot that cannot be had refuses the copy */
	if (cg->kind != GL_CG_NONE && cg_place(cg, l, pid, cc) < 0)
		return gl_fail(f, code, "limits: no free per-copy cgroup: %s", strerror(errno));
	if (cg->kind != GL_CG_NONE)
		cc->mem = cc->pids = kind;
	/* CPU time: per process; soft = hard, since the copy is PID 1 of its
	 * namespace and ignores SIGXCPU; the kernel's SIGKILL is final. */
	if (gl_cg_set_rlimit(pid, RLIMIT_CPU, l->cpu_s) < 0)
		return gl_fail(f, code, "limits: RLIMIT_CPU of the copy: %s", strerror(errno));
	cc->cpu = "rlimit_cpu";
	if (!cc->mem && exec) {
		/* An exec copy's target is a fresh exec (a new address space,
		 * often a runtime such as V8 that reserves gigabytes it never
		 * touches): RLIMIT_DATA, private writable memory, bounds it. */
		if (gl_cg_set_rlimit(pid, RLIMIT_DATA, (uint64_t)l->memory_mb << 20) < 0)
			return gl_fail(f, code, "limits: memory: no cgroup (%s) and RLIMIT_DATA "
				       "failed: %s", cg->why ? cg->why : "?", strerror(errno));
		cc->mem = "rlimit_data";
	}
	if (!cc->mem) {
		/* RLIMIT_AS counts address space, and the copy starts with the
		 * germline's (libraries, arenas, shared copy-on-write): the copy
		 * may map memory_mb more than it had when forked. */
		cc->as_base = gl_cg_vm_field(pid, "\nVmSize:");
		uint64_t m = cc->as_base + ((uint64_t)l->memory_mb << 20);
		if (!cc->as_base || gl_cg_set_rlimit(pid, RLIMIT_AS, m) < 0 ||
		    gl_cg_set_rlimit(pid, RLIMIT_DATA, m) < 0)
			return gl_fail(f, code, "limits: memory: no cgroup (%s) and RLIMIT_AS "
				       "failed: %s", cg->why ? cg->why : "?", strerror(errno));
		cc->mem = "rlimit_as";
	}
	if (!cc->pids) {
		/* RLIMIT_NPROC counts the tasks of a uid in a user namespace
		 * (Linux >= 5.14), here the germline's: its init, the germline
		 * and the copy's tree. The kernel ignores it for the host's
		 * root, so a root broker without a pids controller refuses (a
		 * uid 0 of another user namespace is bound: initial_userns). */
		if (gl_cg_host_uid(pid) == 0 && gl_cg_initial_userns())
			return gl_fail(f, code, "limits: processes: no pids controller (%s), and "
				       "RLIMIT_NPROC does not bind root", cg->why ? cg->why : "?");
		cc->nproc_base = NPROC_BASE;
		if (gl_cg_set_rlimit(pid, RLIMIT_NPROC, (uint64_t)l->pids + NPROC_BASE) < 0)
			return gl_fail_errno(f, code, "limits: RLIMIT_NPROC of the copy");
		cc->pids = "rlimit_nproc";
	}
	return 0;
}
