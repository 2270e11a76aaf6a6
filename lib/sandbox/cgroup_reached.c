/* cgroup_reached.c — after a copy: which bound it reached (a cgroup's
 * events, its exit by SIGKILL under RLIMIT_CPU, or the rlimits' own
 * traces), and its slot drained and released (A1: nothing of a copy
 * outlives it, O3). Split from cgroup.c; see cgroup.h and docs/sandbox.md
 * "Resource limits". */
#define _GNU_SOURCE
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cgroup_impl.h"
#include "sandbox/live.h"
#include "core/util.h"

/* PIDFD_GET_INFO (Linux 6.15): a copy's exit code through its pidfd, though
 * the copy is the germline init's child, not ours. */
struct gl_pidfd_info {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define GL_PIDFD_GET_INFO _IOWR(0xFF, 11, struct gl_pidfd_info)
#define GL_PIDFD_INFO_EXIT (1UL << 3)

/* Tasks of pid and its descendants (threads included), at most cap. */
static int tree_tasks(pid_t pid, int cap)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/task", (long)pid);
	DIR *d = opendir(p);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < cap) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		char cp[320];
		snprintf(cp, sizeof cp, "/proc/%ld/task/%s/children", (long)pid, e->d_name);
		autofree char *s = NULL;
		size_t len;
		if (gl_read_file_capped(cp, 1 << 20, &s, &len) < 0)
			continue;
		for (char *q = s; *q && n < cap;) {
			long c = strtol(q, &q, 10);
			if (c <= 0)
				break;
			n += tree_tasks((pid_t)c, cap - n);
		}
	}
	closedir(d);
	return n;
}


/* The copy's exit status once it is gone (waiting briefly: it closed its
 * channel as it died), or -1. */
static int exit_code(int pidfd)
{
	if (pidfd < 0)
		return -1;
	struct pollfd pf = {.fd = pidfd, .events = POLLIN};
	if (poll(&pf, 1, 2000) != 1)
		return -1;
	/* An exec copy is the broker's child: its status, left for its reaper */
	siginfo_t si = {0};
	if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
		return si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8 : si.si_status & 0x7f;
	/* The exit code is the pidfd's once the copy is reaped (by the
	 * germline's init, at its own pace): readable a moment after exit. */
	for (int t = 0; t < 200; t++) {
		struct gl_pidfd_info info = {.mask = GL_PIDFD_INFO_EXIT};
		if (ioctl(pidfd, GL_PIDFD_GET_INFO, &info) < 0 && errno != ESRCH)
			return -1;
		if (info.mask & GL_PIDFD_INFO_EXIT)
			return info.exit_code;
		usleep(10000);
	}
	return -1;
}

const char *gl_cg_reached(const struct gl_cg *cg, const struct gl_cg_copy *cc, bool alive,
			  int pidfd)
{
	if (cg->off || !cc->mem)
		return NULL;
	if (cc->slot >= 0) {
		autofree char *m = gl_cg_slot_dir(cg->mem_base, cc->slot);
		autofree char *p = cg->pids_base ? gl_cg_slot_dir(cg->pids_base, cc->slot) : NULL;
		bool v2 = cg->kind == GL_CG_V2;
		if (gl_cg_get_key(m, v2 ? "memory.events" : "memory.oom_control", "oom_kill") > cc->oom0)
			return "memory";
		if (gl_cg_get_key(v2 ? m : p, "pids.events", "max") > cc->max0)
			return "pids";
	}
	int st = alive ? -1 : exit_code(pidfd);
	if (st >= 0 && WIFSIGNALED(st) && (WTERMSIG(st) == SIGKILL || WTERMSIG(st) == SIGXCPU))
		return "cpu"; /* the only SIGKILL of the kernel's here: RLIMIT_CPU's hard limit */
	if (st < 0 && !strcmp(cc->mem, "rlimit_as") &&
	    gl_cg_vm_field(cc->pid, "\nVmPeak:") >= cc->as_base + ((uint64_t)cc->lim.memory_mb << 20) / 8 * 7)
		return "memory"; /* an allocation met RLIMIT_AS */
	if (st < 0 && !strcmp(cc->pids, "rlimit_nproc") &&
	    tree_tasks(cc->pid, (int)cc->lim.pids + 1) >= (int)cc->lim.pids)
		return "pids"; /* the tree is at RLIMIT_NPROC */
	return NULL;
}

void gl_cg_drain(const struct gl_cg *cg, struct gl_cg_copy *cc)
{
	if (cc->slot < 0)
		return;
	autofree char *m = gl_cg_slot_dir(cg->mem_base, cc->slot);
	autofree char *p = cg->pids_base ? gl_cg_slot_dir(cg->pids_base, cc->slot) : NULL;
	if (cg->kind == GL_CG_V2)
		gl_cg_put(m, "cgroup.kill", "1");
	/* v1 has no cgroup.kill: kill every task until the group is empty
	 * (a PID-1 copy's descendants die with it, so this is a check). */
	for (int t = 0; t < 500; t++) {
		int a = gl_cg_procs(m, true), b = p ? gl_cg_procs(p, true) : 0;
		if (a <= 0 && b <= 0)
			break;
		usleep(2000);
	}
	gl_live_slot_release((unsigned)cc->slot);
	cc->slot = -1;
}

void gl_cg_reclaim(struct gl_cg *cg, pid_t owner)
{
	if (!gl_live_on() || cg->kind == GL_CG_NONE || cg->off)
		return;
	unsigned n = gl_live_nslots() > cg->nslots ? gl_live_nslots() : cg->nslots;
	for (unsigned i = 0; i < n; i++)
		if (gl_live_slot_owned(i, owner)) {
			struct gl_cg_copy cc = {.slot = (int)i};
			gl_cg_drain(cg, &cc);
		}
}

