/* runtime.h — the runtime seam (issue 18; paper §IV-D, Algorithm 1 lines
 * 8, 9 and 27): what the broker needs of a release's runtime, whatever it
 * is. Two implement it:
 *
 *   python  a germline process (runtime/germline.h): check is G1–G3 through
 *           /proc before every fork (A2), spawn forks a copy from the
 *           germline, end kills the copy with its descendants and awaits
 *           them (A1, O3), stop kills the germline;
 *   exec    no resident process (runtime/exec.h): check is nothing (each copy
 *           is a fresh verified launch, checked by gl_proc_check_exec after
 *           it), spawn is that launch, end kills, reaps and removes the
 *           copy's scratch, stop closes the retained release.
 *
 * Which one is chosen once, from gl_manifest_runtime() (release/manifest.h):
 * gl_runtime_ops_for. The types shared by both (what a launch enforced, a
 * view's item, a baseline's session process) are here so that neither
 * implementation includes the other. Implemented by lib/runtime/runtime.c. */
#ifndef GL_RUNTIME_H
#define GL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/fail.h"
#include "release/manifest.h"

/* What a launch installed; copied into result records ("enforcement",
 * SPEC §6) and receipts (SPEC §9). */
struct gl_enforcement {
	int landlock_abi;          /* effective ABI, after any test-only lowering */
	bool fs_enforced;          /* Landlock filesystem rules installed */
	bool net_enforced;         /* Landlock TCP bind/connect denied (ABI >= 4) */
	bool scoped_enforced;      /* abstract unix sockets and signals scoped (ABI >= 6) */
	bool seccomp_enforced;
	char seccomp_filter_sha256[65]; /* SHA-256 of the exported BPF program */
	const char *namespaces[6]; /* e.g. "ipc","net","pid","user"; NULL-terminated */
	/* how the last copy was bounded (lib/sandbox/cgroup.h): "cgroup_v1",
	 * "rlimit_as", …; NULL: no bound was asked for (no gl_germline.cg) */
	const char *limits_memory, *limits_pids, *limits_cpu;
	/* how the copies' host uids were kept apart (lib/sandbox/uids.h):
	 * "per-copy" (a delegated block per germline, a uid per lane) or
	 * "serialized" (no range: each process of release code ran alone);
	 * NULL: not asked (a caller that runs one copy at a time by itself) */
	const char *uid;
};

/* An item of a copy's view: the descriptor the broker opened (with no
 * symlink in its path) and read, so the rule is for the file it read. */
struct gl_exec_item {
	int fd;   /* borrowed */
	bool dir; /* a directory item: readable and listable beneath */
	const char *at; /* where the copy sees it (gl-replay: the item's path,
			 * lib/replay/replay_exec.c), or NULL: the descriptor's own path */
};

/* One copy to spawn (Algorithm 1 line 9). */
struct gl_spawn {
	/* exec: the files and directories of the copy's view (all it may read
	 * of the user's); python: unused (a forked copy gets its items in the
	 * call message, through the broker) */
	const struct gl_exec_item *items;
	size_t nitem;
	const char *const *hosts; /* exec: the declared destinations (the relay's) */
	size_t nhost;
	int chan;        /* the copy's end of its channel: closed by spawn */
	int broker_sock; /* the broker's end (python: the go byte is written on it) */
};

/* A spawned copy: its pidfd (the broker's handle: kill and wait) and its
 * scratch directory (exec; NULL for python, whose scratch dies with it). */
struct gl_copy {
	int pidfd;
	char *scratch;
};

struct gl_runtime;
struct gl_runtime_ops {
	const char *name; /* "python", "exec" */
	/* Algorithm 1 line 8: the runtime is still data-free. 0, or -1 with f
	 * (germline_check). */
	int (*check)(struct gl_runtime *rt, struct gl_fail *f);
	/* Line 9: one confined copy. 0 with *c, or -1 with f (germline for a
	 * fork, launch for a launch). */
	int (*spawn)(struct gl_runtime *rt, const struct gl_spawn *s, struct gl_copy *c,
		     struct gl_fail *f);
	/* Line 27: the copy and its descendants are gone (A1), its scratch
	 * removed (c->scratch freed, NULL). Does not close c->pidfd. The copy's
	 * wait status if this process reaped it (exec), else -1. */
	int (*end)(struct gl_runtime *rt, struct gl_copy *c);
	/* The resident process (python's germline) or retained release (exec)
	 * is gone; its memory is the caller's. */
	void (*stop)(struct gl_runtime *rt);
};

/* Embedded in the implementation's struct (struct gl_germline, struct
 * gl_exec), which the ops reach with container_of. */
struct gl_runtime {
	const struct gl_runtime_ops *ops;
};

/* Kill a copy and all its descendants, and wait until they are gone
 * (A1: "each ending with its descendants before the next starts"; O3).
 * Does not close copy_pidfd: the caller does. A copy of either runtime
 * is PID 1 of its own PID namespace; lib/runtime/runtime.c. */
void gl_copy_kill(int copy_pidfd);

/* The implementation of a manifest's runtime (gl_manifest_runtime): the
 * one choice between them. NULL for a runtime neither implements. */
const struct gl_runtime_ops *gl_runtime_ops_for(enum gl_runtime_kind kind);

/* Whether rt's copies are forked from a resident, data-free germline
 * (python, paper §IV-D) rather than each a verified launch (exec). The one
 * question the broker asks of a runtime where the seam has no op for the
 * difference, because it is genuinely one runtime's: only a germline has
 * the pool of pre-forked copies and a retired copy to settle (§VI), a fork
 * bounds itself before release code runs while an exec copy is bounded
 * after its spawn, only a launch writes a receipt per copy (SPEC §9), and
 * a failed spawn is refused as "germline" (a fork) or "launch" (a
 * launch). lib/runtime/runtime.c. */
bool gl_runtime_forks(const struct gl_runtime *rt);

static inline int gl_runtime_check(struct gl_runtime *rt, struct gl_fail *f)
{
	return rt->ops->check(rt, f);
}
static inline int gl_runtime_spawn(struct gl_runtime *rt, const struct gl_spawn *s,
				   struct gl_copy *c, struct gl_fail *f)
{
	return rt->ops->spawn(rt, s, c, f);
}
static inline int gl_runtime_end(struct gl_runtime *rt, struct gl_copy *c)
{
	return rt->ops->end(rt, c);
}
static inline void gl_runtime_stop(struct gl_runtime *rt)
{
	rt->ops->stop(rt);
}

/* Where the Python host is (germline_host.py, _germline.so): PREFIX/lib/germline
 * next to the running binary when installed, else the build tree's
 * (GL_BUILD_HOST_DIR). malloc'd. */
char *gl_host_dir(void);

/* ---- the baselines (gl-run --mode fresh|confined|sigifc|sigpin) ----------
 *
 * One process serves a whole call with every item and every member (no
 * plan groups, no tripwire, nothing recorded, state writes acknowledged
 * and dropped: a process's state is its own memory). A persistent process
 * (confined, sigifc, sigpin) serves call after call on one channel: the
 * call message carries "session":true and the Python host loops until the
 * broker closes the channel (docs/design/run.md "Session processes").
 * Requests are relayed through the broker like a copy's: sigpin and sigifc
 * deliver to any host, fresh and confined only to D_f (the destination
 * allowlist). Labels: sigpin none; the others the per-call label, the join
 * of the labels of all the call's items (CaMeL/FIDES-style; it does not
 * cover what the process stored in an earlier call). lib/broker/broker_session.c. */
struct gl_session_proc {
	pid_t pid;
	int pidfd; /* the broker's handle: kill and wait */
	int sock;  /* the broker's end of the channel (SOCK_STREAM, nonblocking) */
	bool up;
	bool confined;       /* forked from a germline (a copy) */
	bool started;        /* started for the call now running (reported as "copies":1) */
	bool exec;           /* an exec copy (lib/runtime/exec.h); the broker asks rt since issue 18 */
	/* The runtime that ends it (gl_runtime_end: a copy with its
	 * descendants; an exec copy reaped, its scratch removed), or NULL: an
	 * unconfined child the broker kills and reaps itself. It outlives the
	 * process: stop this before the runtime (gl_session_stop). */
	struct gl_runtime *rt;
	char *scratch;       /* its scratch directory, removed when it stops */
};

#endif
