/* cgroup_germline.c — the germline's own bound from before its runtime's
 * exec, and the bounds of the session baselines' processes (issue 15;
 * lib/sandbox/cgroup.h, docs/sandbox.md "Resource limits"). */
#define _GNU_SOURCE
#include "sandbox/cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/cgroup_impl.h"
#include "core/util.h"

/* ---- the germline's own bound ----------------------------------------------- */

void gl_cg_germline_limits(const struct gl_limits *l, struct gl_limits *g)
{
	*g = *l;
	g->memory_mb = l->memory_mb > 256 ? 4 * l->memory_mb : 1024;
	g->pids = 8; /* its init, itself, the copy being forked; G1 refuses more */
}

void gl_cg_session_limits(const struct gl_limits *l, struct gl_limits *s)
{
	struct gl_limits g;
	gl_cg_germline_limits(l, &g);
	*s = *l;
	s->memory_mb = g.memory_mb;
	s->cpu_s = UINT32_MAX; /* RLIMIT_CPU of about 136 years: none */
}

int gl_cg_bound_pidfd(struct gl_cg *cg, const struct gl_limits *l, int pidfd, bool exec,
		      struct gl_cg_copy *cc, struct gl_fail *f)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
	autofree char *info = NULL;
	size_t len;
	const char *p = NULL;
	if (gl_read_file_capped(path, 64 * 1024, &info, &len) == 0)
		p = strstr(info, "\nPid:");
	long pid = p ? strtol(p + 5, NULL, 10) : 0;
	if (pid <= 0)
		return gl_fail(f, exec ? GL_E_LAUNCH : GL_E_GERMLINE,
			       "limits: the copy's pid is unknown");
	return gl_cg_bound_copy(cg, l, (pid_t)pid, exec, cc, f);
}

/* The germline's group g<pid> in base (v1: one per hierarchy). */
static char *germline_dir(const char *base, pid_t pid)
{
	return base ? gl_xasprintf("%s/g%ld", base, (long)pid) : NULL;
}

/* Algorithm 1 line 1 runs the release's import (paper §III: hostile code):
 * it is bounded before the exec, the launch's child waiting for the go
 * byte until this returns (lib/runtime/germline_child.c). */
int gl_cg_bound_launch(struct gl_cg *cg, const struct gl_limits *l, pid_t pid, bool *grouped,
		       struct gl_fail *f)
{
	enum gl_code code = GL_E_BOOTSTRAP_FAILED; /* before the release's exec (SPEC §9) */
	*grouped = false;
	if (cg->off)
		return 0;
	struct gl_limits g;
	gl_cg_germline_limits(l, &g);
	uint64_t mem = (uint64_t)g.memory_mb << 20;
	char a[24];
	snprintf(a, sizeof a, "%ld", (long)pid);
	if (cg->kind != GL_CG_NONE) {
		autofree char *m = germline_dir(cg->mem_base, pid);
		autofree char *p = germline_dir(cg->pids_base, pid);
		int rc = (mkdir(m, 0755) < 0 && errno != EEXIST) ||
			 (p && mkdir(p, 0755) < 0 && errno != EEXIST);
		*grouped = !rc;
		if (cg->kind == GL_CG_V2) {
			gl_cg_put(m, "memory.swap.max", "0");
			rc |= gl_cg_put_u64(m, "memory.max", mem) | gl_cg_put_u64(m, "pids.max", g.pids) |
			      gl_cg_put(m, "cgroup.procs", a);
		} else {
			gl_cg_put(m, "memory.memsw.limit_in_bytes", "-1");
			rc |= gl_cg_put_u64(m, "memory.limit_in_bytes", mem);
			gl_cg_put_u64(m, "memory.memsw.limit_in_bytes", mem); /* no swap beyond it */
			rc |= gl_cg_put_u64(p, "pids.max", g.pids) | gl_cg_put(m, "cgroup.procs", a) |
			      gl_cg_put(p, "cgroup.procs", a);
		}
		if (rc)
			return gl_fail_errno(f, code, "limits: the germline's cgroup");
		return 0;
	}
	/* No controller: rlimits of the launch child, inherited by the
	 * germline and its copies. Its runtime is a fresh exec: RLIMIT_AS of
	 * the bound plus what an interpreter maps without touching it. The
	 * copies' RLIMIT_NPROC counts the same user namespace (cgroup.h), so
	 * the germline's is theirs: a lower hard limit could not be raised
	 * for them by an unprivileged broker. */
	if (gl_cg_host_uid(pid) == 0 && gl_cg_initial_userns())
		return gl_fail(f, code, "limits: processes: no pids controller (%s), and "
			       "RLIMIT_NPROC does not bind root", cg->why ? cg->why : "?");
	if (gl_cg_set_rlimit(pid, RLIMIT_AS, mem + ((uint64_t)GL_CG_AS_SLACK_MB << 20)) < 0 ||
	    gl_cg_set_rlimit(pid, RLIMIT_DATA, mem) < 0)
		return gl_fail(f, code, "limits: memory: no cgroup (%s) and RLIMIT_AS failed: %s",
			       cg->why ? cg->why : "?", strerror(errno));
	if (gl_cg_set_rlimit(pid, RLIMIT_NPROC, (uint64_t)l->pids + NPROC_BASE) < 0)
		return gl_fail_errno(f, code, "limits: RLIMIT_NPROC of the germline");
	return 0;
}

const char *gl_cg_launch_reached(const struct gl_cg *cg, pid_t pid)
{
	if (cg->off || cg->kind == GL_CG_NONE)
		return NULL;
	autofree char *m = germline_dir(cg->mem_base, pid);
	autofree char *p = germline_dir(cg->pids_base, pid);
	bool v2 = cg->kind == GL_CG_V2;
	if (gl_cg_get_key(m, v2 ? "memory.events" : "memory.oom_control", "oom_kill") > 0)
		return "memory";
	if (gl_cg_get_key(v2 ? m : p, "pids.events", "max") > 0)
		return "pids";
	return NULL;
}

void gl_cg_germline_end(const struct gl_cg *cg, pid_t pid)
{
	if (cg->off || cg->kind == GL_CG_NONE || pid <= 0)
		return;
	const char *bases[2] = {cg->mem_base, cg->pids_base};
	for (int b = 0; b < 2; b++) {
		autofree char *d = germline_dir(bases[b], pid);
		if (!d)
			continue;
		if (cg->kind == GL_CG_V2)
			gl_cg_put(d, "cgroup.kill", "1");
		for (int t = 0; t < 200 && gl_cg_procs(d, true) > 0; t++)
			usleep(5000);
		rmdir(d);
	}
}
