/* germline_child.h — the launch of a germline between the broker's clone
 * and execveat (lib/runtime/germline_child.c), used by lib/runtime/germline.c only: the
 * status report, what is prepared before the clone (with the germline's
 * command line), and the two child entries. Not an interface: germline.h is. */
#ifndef GL_GERMLINE_CHILD_H
#define GL_GERMLINE_CHILD_H

#include <stdint.h>
#include <sys/types.h>

#include "sandbox/root.h"
#include "sandbox/sandbox.h"
#include "core/util.h"
#include "release/config.h"
#include "runtime/germline.h"

/* What the child writes on the status pipe before _exit (SPEC §9). */
struct launch_status {
	int32_t step, err, what, bad;
};
enum { W_NONE, W_SETGROUPS, W_UID_MAP, W_GID_MAP, W_CHDIR, W_PDEATHSIG, W_PARENT_GONE, W_ROOT };

/* Everything the child needs, prepared before fork: the child only makes
 * syscalls (the broker may have threads; malloc after fork is unsafe). */
struct launch_prep {
	int interp, ctl_child, devnull, status_w, ruleset, parent_pidfd;
	int go_r, go_w; /* the child waits for the parent's go byte (its bound: lib/sandbox/cgroup.h) */
	pid_t parent;
	const char *release_dir;
	char uid_map[64], gid_map[64];
	/* the broker writes the maps (a delegated block, lib/sandbox/uids.h)
	 * before the go byte; the child then takes inside uid and gid 0 */
	bool parent_maps;
	char *argv[11 + GL_NODE_ARGS_MAX];
	char preload[4200]; /* a Node germline's LD_PRELOAD=HOST_DIR/gl-atfork.so */
	/* the fixed ones, then the operator's (lib/release/config.h) */
	char *envp[14 + GL_NODE_ARGS_MAX + GL_CONFIG_ENV_MAX + GL_CONFIG_SECRETS_MAX + 1];
	char state_env[4200]; /* a Node germline's GL_NODE_STATE_DIR=… */
	struct gl_bpf bpf;
	struct gl_root root; /* lib/sandbox/root.h; empty with GL_OFF_ROOT */
	int scratch_abi; /* > 0: the germline's layer grants writes beneath its /tmp (lib/sandbox/scratch.h) */
	unsigned off; /* GL_TESTING only */
	unsigned sim; /* GL_TESTING only: SIM_* kernel features pretended missing */
};
enum { SIM_NO_USERNS = 1u << 0, SIM_NO_NETNS = 1u << 1 };

/* The host's arguments for the import twin (paper §IV-F, A4): the
 * release is imported under these values, and gl-replay launches with the
 * witness's, so every Python-level clock, random source and the string
 * hash seed the import can read are the same in both (docs/witness.md
 * "What a witness records, and why it suffices"). Without an import twin
 * the host runs as before issue 14: -I, the real clock at import. */
struct import_args {
	char flags[8], sec[24], usec[16], seed[65], hashseed[32];
};
struct gl_launch_spec;
struct gl_germline;
/* Before the clone, in the broker: g's import twin chosen into *a. */
void gl_launch_import_args(const struct gl_launch_spec *spec, struct gl_germline *g,
			   struct import_args *a);
/* Before the clone: the germline's argv and envp into p (they borrow *ia,
 * script and prof, which outlive the clone). */
void gl_launch_args(const struct gl_launch_spec *spec, const struct gl_germline *g,
		    struct launch_prep *p, const struct import_args *ia, char *script, char *prof);

/* The init of the germline's PID namespace (made by clone with
 * CLONE_NEWUSER|CLONE_NEWPID): namespaces, the minimal root, then the
 * germline as its child; it only reaps after that. Never returns. */
GL_NORETURN void gl_launch_init(const struct launch_prep *p);
/* GL_OFF_PIDNS (GL_TESTING builds): the germline itself, the broker's
 * child, as before issue 13. Never returns. */
GL_NORETURN void gl_launch_child(const struct launch_prep *p);

#endif
