/* germline.h — the broker's handle on a release's germline process
 * (paper §IV-D, §VI "Germline and copies"; SPEC §9, §10).
 *
 * A germline is started by a verified launch: the interpreter is opened and
 * hashed once and executed from the retained descriptor (execveat with
 * AT_EMPTY_PATH); restrictions are installed before the exec; a
 * close-on-exec status pipe tells "failed before exec" from "ran". It then
 * imports the release's entry module (its initialisation, before any user
 * data exists: assumption A2) and only serves fork requests on its control
 * socket. See docs/design/run.md for the protocol.
 *
 * Implemented by lib/runtime/germline.c (launch), lib/runtime/germline_child.c (the init
 * and the launch child), lib/runtime/germline_fork.c (fork
 * requests, kill, stop), lib/sandbox/proc.c
 * (G1–G3), lib/sandbox/sandbox.c (namespaces, Landlock, seccomp); the fork itself
 * runs inside the germline in hosts/common/fork_server.c, built from lib/;
 * a Node germline's (spec.node) differs in its host and its checks
 * (hosts/node, lib/sandbox/proc_node.c; docs/exec.md "The Node germline"). */
#ifndef GL_GERMLINE_H
#define GL_GERMLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "plan/callmsg.h"
#include "runtime/runtime.h"
#include "sandbox/scratch.h"
#include "sandbox/cgroup.h"
#include "sandbox/uids.h"

struct gl_config;

#define GL_NODE_ARGS_MAX 16 /* a Node germline's entry_args */

/* Each step of a launch, so a failure names the step (STYLE: typed results). */
enum gl_launch_step {
	GL_LAUNCH_OK = 0,
	GL_LAUNCH_OPEN_INTERPRETER, /* open/hash the interpreter */
	GL_LAUNCH_SOCKET,           /* control socketpair */
	GL_LAUNCH_FORK,
	GL_LAUNCH_USERNS,    /* unshare(CLONE_NEWUSER) / uid and gid maps */
	GL_LAUNCH_NAMESPACES, /* unshare(CLONE_NEWNET|CLONE_NEWIPC) */
	GL_LAUNCH_DESCRIPTORS, /* /dev/null on 0-2, control socket on 3, close the rest */
	GL_LAUNCH_LANDLOCK,
	GL_LAUNCH_SECCOMP,
	GL_LAUNCH_NO_NEW_PRIVS,
	GL_LAUNCH_EXEC,       /* execveat failed */
	GL_LAUNCH_HANDSHAKE,  /* the host did not report "ready" (import failed, crashed) */
	GL_LAUNCH_ROOT,       /* the minimal root (lib/sandbox/root.h): mount namespace, binds, pivot */
	GL_LAUNCH_LIMITS,     /* the germline's bound (lib/sandbox/cgroup.h gl_cg_bound_launch) */
	GL_LAUNCH_UIDS,       /* a block of delegated host uids (lib/sandbox/uids.h) */
};
const char *gl_launch_step_name(enum gl_launch_step s);

struct gl_launch_spec {
	const char *release_dir;   /* GL_HOME/releases/<sha256> (read-only tree) */
	const char *entry;         /* the manifest's entry module */
	const char *const *read_paths; /* the manifest's read_paths, NULL-terminated */
	const char *host_dir;      /* directory holding germline_host.py and _germline.so */
	const char *interpreter;   /* e.g. "/usr/bin/python3"; resolved and retained */
	int min_landlock_abi;      /* the profile's (lib/runtime/receipt.h); 0: GL_LANDLOCK_ABI_REQUIRED */
	const char *profile;       /* named weaker profile passed to the host, or NULL */
	/* The germline's import-time twin inputs (paper §IV-F, A4; docs/witness.md
	 * "What a witness records"): the release's import reads every clock and
	 * random source the Python host shims from them, so that gl-replay, given
	 * the same values from the witness, rebuilds the image M_r the call's
	 * copies were forked from (A2: M_r depends only on r and these). NULL:
	 * fresh ones (gl-run). import_real: none at all, the import reads the
	 * real clock (a witness written before issue 14, which recorded none). */
	const struct gl_twin *import_twin;
	bool import_real;
	/* The operator's configuration (SPEC §4 "config"; lib/release/config.h):
	 * its env and each secret's placeholder in the germline's environment,
	 * its args as the release's sys.argv[1:]; NULL: none. */
	const struct gl_config *config;
	unsigned tmp_mb;           /* limits.tmp_mb (lib/release/bounds.h; 0: the default): /tmp's bound */
	/* The germline's bound from before its runtime's exec (lib/sandbox/cgroup.h
	 * gl_cg_bound_launch; issue 15): its import is the release's code
	 * (paper §III). limits are its copies' (the germline's is derived);
	 * NULL cg: unbounded (a caller that bounds nothing, e.g. unit tests). */
	struct gl_cg *cg;
	const struct gl_limits *limits;
	/* A Node germline (docs/exec.md "The Node germline"): interpreter is
	 * node, host_dir holds germline_host.mjs, germline.node and
	 * gl-atfork.so, entry is the server's script and entry_args its
	 * arguments (NULL-terminated, at most GL_NODE_ARGS_MAX); warm: one
	 * data-free initialize and tools/list before ready; exec_host: each
	 * copy speaks the copy protocol through gl-exec-host, which adopts the
	 * server (else MCP itself on its channel). */
	bool node, warm, exec_host;
	const char *const *entry_args;
	/* A Node germline's environment from its manifest ("K=V", at most
	 * GL_NODE_ARGS_MAX, ${GL_STATE_DIR} already replaced), and the
	 * workspace directory gl-exec-host restores each call's slot into and
	 * stores from (beneath the copy's own /tmp: its scratch); NULL: none. */
	const char *const *env;
	const char *state_dir;
	/* The host uids of the germline and its copies (lib/sandbox/uids.h):
	 * with a delegated range, a block leased for this germline; without,
	 * or NULL, the broker's own uid (the caller serialises). */
	const struct gl_uids *uids;
};

struct gl_exec;
struct gl_germline {
	/* The seam (lib/runtime/runtime.h) of the python runtime: gl_germline_ops.
	 * Reach a handle's runtime, whichever it is, with gl_germline_runtime. */
	struct gl_runtime rt;
	/* runtime exec (lib/runtime/exec.h): no germline process; every copy is a
	 * verified launch of this release, and the fields below are unused
	 * except enf, cg, lim and cc. NULL for a python germline. Kept while the
	 * broker and cmd/ hold one struct gl_germline for either runtime (issue
	 * 18): new code takes the struct gl_runtime of gl_germline_runtime. */
	struct gl_exec *exec;
	/* The germline runs as PID 2 of its own PID namespace, under an init
	 * (PID 1) that only reaps: every process it ever starts stays in that
	 * namespace, visible to G1 and killed with it, and its copies are the
	 * init's children (CLONE_PARENT), so the germline never learns how a
	 * copy ended nor what it used (docs/sandbox.md "The germline's PID
	 * namespace"). pid and pidfd are the init's (kill, wait, exit status:
	 * the init exits as the germline did); gpid is the germline's. */
	pid_t pid;                 /* the init, in the broker's PID namespace */
	int pidfd;                 /* of the init */
	pid_t gpid;                /* the germline (Python), in the broker's PID namespace; -1: gone */
	bool has_init;             /* false only in GL_TESTING builds with GL_OFF_PIDNS */
	bool node;                 /* a Node germline (spec.node): its G1–G3 and copy check */
	int ctl;                   /* broker's end of the control socket (SOCK_SEQPACKET) */
	uint64_t ctl_ino;          /* inode of the germline's end, for G2 */
	char interpreter_sha256[65];
	struct gl_enforcement enf; /* of the germline and (same profile) its copies */
	/* The twin inputs the release was imported under (spec.import_twin or
	 * fresh); import_twinned false: the import read the real clock. */
	struct gl_twin import_twin;
	bool import_twinned;
	bool exec_observed;        /* the status pipe closed without a failure */
	bool reaped;               /* launch failed after the exec: wait_status is its end */
	int wait_status;
	/* gl-run --pool (paper §VI: "An optional pool keeps pre-forked,
	 * data-free copies ready"): one copy forked, confined and checked
	 * ahead of its call, with the broker's end of its channel. */
	bool pooled;
	int pool_pidfd, pool_sock;
	/* held: the pooled copy has not been let run (its start byte is sent
	 * when it is taken); hold_next: the next fork is such a copy */
	bool pool_held, hold_next;
	/* Per-copy resource bounds (SPEC §4 "limits"; lib/sandbox/cgroup.h): set by
	 * the caller after the launch; NULL cg: copies are not bounded here.
	 * cc is the bound of the copy last handed out (gl_germline_fork,
	 * gl_germline_take), pool_cc the pooled copy's. */
	struct gl_cg *cg;
	struct gl_limits lim;
	struct gl_cg_copy cc, pool_cc;
	/* The operator's configuration of the release (SPEC §4 "config";
	 * lib/release/config.h), set by the caller with the launch: its public
	 * args and env are in the germline, its secrets are the broker's
	 * alone; NULL: none. */
	const struct gl_config *config;
	/* The launch's group (gl_cg_bound_launch), removed with the germline:
	 * the init's pid in launch_cg, or -1. */
	struct gl_cg *launch_cg;
	pid_t launch_cg_pid;
	/* gl-run --jobs (lib/session/jobs.h): the lane of the call this
	 * process serves, 0..GL_COPY_LANES-1, a function of the call's input
	 * position alone; its copies are number GL_COPY_PID + lane in the
	 * germline's PID namespace (two live copies of one germline cannot
	 * share a number; docs/sandbox.md "The pid counter"). 0 without
	 * --jobs. no_register: gl_germline_prefork's copy, registered in the
	 * shared table by the worker that takes it (lib/sandbox/live.h). */
	unsigned lane;
	bool no_register;
	/* Its block of host uids (lib/sandbox/uids.h), held for its life:
	 * inside 0 is the germline, 1 + lane the copy of that lane; fd -1:
	 * none (the germline and its copies run as the broker's uid). */
	struct gl_uid_lease uids;
	/* A copy killed whose end is still to be awaited (gl_copy_retire). */
	bool retiring;
	int retired_pidfd;
	/* Each copy's private scratch /tmp of tmp_mb MiB (lib/sandbox/scratch.h):
	 * false without the minimal root (GL_TESTING) or GL_TEST_SCRATCH_OFF. */
	bool scratch;
	unsigned tmp_mb;
	char **scratch_under; /* the root's binds beneath /tmp, bound again on it (owned) */
	struct gl_scratch mounter; /* the broker's mount helper (pid > 0 while it runs) */
};

/* The python runtime's seam (lib/runtime/runtime.h): check G1–G3
 * (gl_proc_check_germline), spawn gl_germline_fork, end gl_copy_kill, stop
 * the germline. */
extern const struct gl_runtime_ops gl_germline_ops;

/* The runtime of a handle: its exec runtime's (g->exec) or its germline's
 * (lib/runtime/runtime.c; the one place that tells them apart). */
struct gl_runtime *gl_germline_runtime(struct gl_germline *g);

/* Verified launch of a germline (SPEC §9, §10). On success *g is filled and
 * the host has reported that the entry module is imported. On failure
 * returns the step that failed and f says why (bootstrap_failed before the
 * exec was observed, launch after: g->exec_observed); nothing is left
 * running. */
enum gl_launch_step gl_germline_launch(const struct gl_launch_spec *spec, struct gl_germline *g,
				       struct gl_fail *f);

/* G1–G3 through /proc before every fork (paper §IV-D, A2, Table XII):
 * G1 one thread; G2 no descriptor but the control socket, /dev/null and
 * read-only regular files; G3 no shared writable mapping.
 * 0, or -1 with f (germline_check) naming the check, e.g. "G2: fd 5 is a
 * pipe". */
int gl_germline_check(const struct gl_germline *g, struct gl_fail *f);

/* Ask the germline to fork one copy (Algorithm 1 line 9): the copy is PID 1
 * of fresh PID, network and IPC namespaces, confined (sandbox.h) before it
 * runs any release code, and talks to the broker only on copy_sock (its
 * end is passed with SCM_RIGHTS and closed here). Returns 0 with the
 * copy's pidfd (the broker's handle for kill and wait), or -1 with f
 * (germline).
 * Before returning 0 the broker has checked the copy from outside through
 * /proc (lib/sandbox/proc.c: its own namespaces, no_new_privs, two seccomp
 * filters, no capability, fds 0-2 /dev/null and 3 the channel, no shared
 * writable mapping), and then written the byte 'g' on broker_sock (its
 * end of the channel), for which the copy waits before it runs any Python
 * code: send the copy nothing before this returns. A
 * germline that answers late, malformed, or forks a copy that fails the
 * check is killed here (fail closed); gl_germline_stop still reaps it and
 * the next launch replaces it. An {"op":"error"} answer (clone failed)
 * leaves the germline running. */
int gl_germline_fork(struct gl_germline *g, int copy_sock, int broker_sock, int *copy_pidfd,
		     struct gl_fail *f);


/* ---- the pool (gl-run --pool; docs/performance.md "The pool") ------------
 *
 * A pooled copy is an ordinary copy (gl_germline_fork: G1–G3 before the
 * fork, the copy check after it) that waits, holding nothing, for its
 * call message; it is forked only after the previous copy has ended with
 * its descendants, and is the next copy to run, so copies still run one
 * at a time (A1). Its twin inputs come with the call message as always. */

/* Fill the pool if it is empty: await a retired copy, check the germline
 * (G1–G3) and fork one copy. hold: the copy is forked, confined and
 * checked but not let run — it waits in hosts/common/fork_server.c for its
 * start byte, before any Python code (the release's at-fork hooks, an MCP server's
 * start), until gl_germline_take sends it; so it runs no release code
 * beside other calls' copies while it waits (gl-run under "same-clearance"
 * and "none"; docs/gl-run.md "--pool"). 0, or -1 with f
 * (germline_check, or germline: the germline may then be killed, as by
 * gl_germline_fork; the next call reports it). */
int gl_germline_prefork(struct gl_germline *g, bool hold, struct gl_fail *f);

/* Take the pooled copy (a held one is let run now): true with *sock (the
 * broker's end of its channel) and *pidfd, both owned by the caller;
 * false when the pool is empty or its copy died while it waited (then
 * discarded). */
bool gl_germline_take(struct gl_germline *g, int *sock, int *pidfd);

/* Kill a copy now (SIGKILL is final: it runs no further instruction of its
 * own) and leave the wait for its PID namespace to empty to
 * gl_germline_settle, which every fork, check and stop runs first, so that
 * a copy still ends with its descendants before the next starts (A1, O3)
 * while its caller's record need not wait for the kernel's teardown.
 * Takes ownership of copy_pidfd. */
void gl_copy_retire(struct gl_germline *g, int copy_pidfd);

/* Await the retired copy, if any (gl_copy_kill's wait). */
void gl_germline_settle(struct gl_germline *g);

/* Stop the germline (SIGKILL through its pidfd, wait) and close everything.
 * Its copies die with it (PR_SET_PDEATHSIG). The germline itself dies with
 * the thread that launched it: launch from a thread that outlives it. */
void gl_germline_stop(struct gl_germline *g);

/* How a germline ended, for its "exited" receipt (SPEC §9): if it is still
 * alive it is killed (*stopped true); then gl_germline_stop. *code is the
 * exit code (>= 0) or -signal. */
void gl_germline_end(struct gl_germline *g, int *code, bool *stopped);

#endif
