/* exec_child.h — the launch child of a runtime "exec" copy (exec_child.c),
 * used by lib/runtime/exec_launch.c. Not a public interface: exec.h is. */
#ifndef GL_EXEC_CHILD_H
#define GL_EXEC_CHILD_H

#include "release/manifest.h"
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/fail.h"
#include "core/util.h"

struct gl_bpf;
struct gl_root;

/* Everything the child needs, prepared before the clone. */
struct gl_exec_prep {
	int chan, devnull, status_w, ruleset, target, host;
	pid_t parent;
	const char *release_dir;
	char uid_map[64], gid_map[64];
	char hosts[PATH_MAX];
	char state[PATH_MAX]; /* the scratch state/ bound on GL_WORKSPACE_DIR, or "" */
	char *const *argv, *const *envp;
	const struct gl_bpf *bpf;
	const struct gl_root *root; /* the minimal root (lib/sandbox/root.h), or NULL: the host's tree */
	unsigned off;
	int scratch_abi; /* > 0: Landlock rules for the root's tmpfs /tmp and workspace */
	bool unconfined; /* the sigpin/sigifc baseline: namespaces for the relay only */
	/* the declared stream destinations' ports: a listening socket each,
	 * on fds GL_EXEC_STREAM_FD… (docs/streams.md) */
	int stream_port[GL_STREAM_DESTS_MAX];
	size_t nstream;
};

/* PID 1 of the copy's namespaces, between clone3 and execveat: the user
 * namespace's maps, a private mount namespace (the hosts file, the
 * workspace), lo and the relay socket, the descriptors, pdeathsig,
 * Landlock, no_new_privs, seccomp, then execveat of the retained
 * gl-exec-host. Never returns; a failed step is written to p->status_w. */
GL_NORETURN void gl_exec_child(const struct gl_exec_prep *p);

/* The parent's side of the status pipe: 0 once the exec was observed (the
 * pipe closed with nothing written), else -1 with f naming the step
 * that failed (bootstrap_failed: a restriction not installed, SPEC §9) and
 * *missing its receipt name ("landlock", "workspace", …). */
int gl_exec_child_status(int fd, int64_t deadline, const char **missing, struct gl_fail *f);

/* An exec copy's minimal root, built before the clone (lib/sandbox/root.h;
 * docs/sandbox.md "The germline contained"): the Landlock allowlist bound
 * read-only, the copy's hosts file on /etc/hosts, its tls/ directory on
 * GL_EXEC_TLS_DIR (exec_tls.h), its workspace on
 * GL_WORKSPACE_DIR (when state is not NULL), /tmp, and the files and
 * directories of its view, each the inode the broker read. 0, -1 with f
 * (bootstrap_failed), or -2: the workspace's own bind failed (receipts:
 * "workspace"). */
struct gl_exec;
struct gl_exec_item;
struct gl_root;
int gl_exec_root(const struct gl_exec *x, struct gl_root *r, const char *hosts, const char *tls,
		 const char *state, const struct gl_exec_item *items, size_t nitem,
		 struct gl_fail *f);

#endif
