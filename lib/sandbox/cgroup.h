/* cgroup.h — per-copy resource bounds enforced by the kernel (SPEC §4
 * "limits", §6 errors "memory", "pids", "cpu"; issue 15; docs/sandbox.md
 * "Resource limits").
 *
 * A copy is bounded before it runs any release code: the broker places it
 * between the germline's fork reply and the 'g' byte for which the copy
 * waits (lib/runtime/germline_fork.c), so nothing a release wrote runs unbounded.
 *
 *   memory  cgroup v2 memory.max / cgroup v1 memory.limit_in_bytes (+memsw),
 *           else RLIMIT_AS (and RLIMIT_DATA) of the copy: memory_mb more
 *           address space than it had when forked (an exec copy:
 *           RLIMIT_DATA, "rlimit_data", its target being a fresh exec)
 *   pids    cgroup v2 / v1 pids.max, else RLIMIT_NPROC counted in the
 *           germline's user namespace (kernel >= 5.14: per user namespace)
 *   cpu     RLIMIT_CPU (soft = hard = cpu_s: SIGKILL, since a PID 1 ignores
 *           SIGXCPU), observed through the copy's pidfd exit code
 *
 * Cgroups come from a small pool of per-copy directories made when gl-run
 * starts (gl_cg_open), so the call path costs no mkdir: a copy is moved in
 * by writing its pid, and ended with cgroup.kill (v2) or a kill of every
 * task until the directory is empty (v1). If neither a controller nor the
 * rlimit can bound memory and processes the copy is refused (fail closed,
 * like the Landlock ABI check). The bound is the deployer's (paper §III-A:
 * the release is the adversary; its code cannot raise a hard limit or leave
 * its cgroup: no CAP_SYS_RESOURCE or cgroup write in the copy). */
#ifndef GL_CGROUP_H
#define GL_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/fail.h"
#include "release/bounds.h"

#define GL_CG_SLOTS 4 /* copies bounded at once: the running one, a retiring one, a pooled one */
/* Slots a session may grow to: a baseline's long-lived process (confined:
 * one per release of the session) keeps its slot while the session runs;
 * when every slot is taken one more is made, a mkdir on that call only. */
#define GL_CG_SLOTS_MAX 256

enum gl_cg_kind { GL_CG_NONE = 0, GL_CG_V1, GL_CG_V2 };

/* The broker's cgroups: base directories it made, and the pool of slots. */
struct gl_cg {
	enum gl_cg_kind kind;
	char *mem_base;  /* v1: memory/<own>/germline-<pid>; v2: <own>/germline-<pid> */
	char *pids_base; /* v1: pids/<own>/germline-<pid>; v2: NULL */
	unsigned next;   /* the slot to try first */
	unsigned nslots; /* slots made: GL_CG_SLOTS at open, up to GL_CG_SLOTS_MAX */
	bool off;        /* GL_TESTING, GL_TEST_LIMITS_OFF=1: no bound at all (the damage) */
	char *why;       /* why there is no controller (for the operator), or NULL */
};

/* How one copy is bounded (filled by gl_cg_bound_copy). */
struct gl_cg_copy {
	int slot;          /* -1: no cgroup */
	pid_t pid;         /* the copy, in the broker's PID namespace */
	struct gl_limits lim;
	uint64_t oom0, max0; /* oom_kill and pids "max" events before the copy */
	uint64_t as_base;  /* rlimit_as: the copy's address space when bounded */
	int nproc_base;    /* rlimit_nproc: other tasks of the copy's uid in its user namespace */
	const char *mem, *pids, *cpu; /* the mechanisms, for "enforcement"."limits" */
};

/* Detect what the host offers and make the slots (off the call path). Never
 * fails: without a controller kind is GL_CG_NONE and copies get rlimits. */
void gl_cg_open(struct gl_cg *cg);
/* End whatever is left in the slots and remove every directory made. */
void gl_cg_close(struct gl_cg *cg);

/* Bound the copy pid (alive, not yet started; exec: an exec copy, whose
 * release target starts only with the call message) by lim. 0, or -1 with f
 * (germline, or launch for an exec copy) when no mechanism can bound its
 * memory and processes (the caller kills the copy and refuses: fail closed). */
int gl_cg_bound_copy(struct gl_cg *cg, const struct gl_limits *lim, pid_t pid, bool exec,
		     struct gl_cg_copy *cc, struct gl_fail *f);

/* A copy that runs as a host uid of its own (lib/sandbox/uids.h): under
 * RLIMIT_NPROC (no pids controller) its uid counts its own tasks only, so
 * the bound is lim.pids itself, not pids plus the germline's. 0, or -1
 * with errno. */
int gl_cg_nproc_own_uid(struct gl_cg_copy *cc, pid_t pid);

/* Which bound the copy reached: "memory", "pids", "cpu" or NULL. alive: the
 * copy has not been killed yet (its process tree can still be counted);
 * pidfd: the copy's, for its exit code once it is gone (-1: unknown). */
const char *gl_cg_reached(const struct gl_cg *cg, const struct gl_cg_copy *cc, bool alive,
			  int pidfd);

/* After the copy's end: kill anything left in its slot until it is empty. */
void gl_cg_drain(const struct gl_cg *cg, struct gl_cg_copy *cc);
/* gl-run --jobs (lib/sandbox/live.h): drain and free every slot the worker
 * owner claimed; the main process calls it when it reaps that worker. */
void gl_cg_reclaim(struct gl_cg *cg, pid_t owner);

/* The germline's own bound (docs/sandbox.md "Resource limits"): four times
 * the copies' memory (at least 1 GiB: it holds the release's imported
 * state, which every copy shares copy-on-write) and 8 tasks (G1 already
 * refuses a germline with any process but itself). */
void gl_cg_germline_limits(const struct gl_limits *copy, struct gl_limits *germline);

/* A session baseline's persistent process (lib/broker/broker.h gl_session_fork):
 * the germline's memory, the copies' pids and tmp, no CPU-time limit. */
void gl_cg_session_limits(const struct gl_limits *copy, struct gl_limits *session);

/* gl_cg_bound_copy of the process a pidfd refers to (its pid from
 * /proc/self/fdinfo). */
int gl_cg_bound_pidfd(struct gl_cg *cg, const struct gl_limits *lim, int pidfd, bool exec,
		      struct gl_cg_copy *cc, struct gl_fail *f);

/* Bound a germline's launch child pid (the init of its PID namespace, or
 * the germline itself with GL_OFF_PIDNS) by the germline's bound
 * (gl_cg_germline_limits of the copies' l), before it runs anything of the
 * release: the launch holds the child until this returns. A group g<pid>
 * beside the slots (*grouped: made, gl_cg_germline_end removes it), else
 * RLIMIT_AS of the bound plus GL_CG_AS_SLACK_MB, RLIMIT_DATA of the bound,
 * RLIMIT_NPROC of the copies' (cgroup.c says why). 0, or -1 with f
 * (bootstrap_failed): the caller stops the child (fail closed). */
#define GL_CG_AS_SLACK_MB 256 /* address space an interpreter maps but does not touch */
int gl_cg_bound_launch(struct gl_cg *cg, const struct gl_limits *l, pid_t pid, bool *grouped,
		       struct gl_fail *f);
/* After a failed launch of pid: the bound its group reached, "memory",
 * "pids", or NULL (none, or rlimits: the release saw ENOMEM or EAGAIN). */
const char *gl_cg_launch_reached(const struct gl_cg *cg, pid_t pid);
/* End what is left in pid's group and remove it (the germline has ended). */
void gl_cg_germline_end(const struct gl_cg *cg, pid_t pid);

#endif
