/* scratch.h — a copy's private scratch directory /tmp (SPEC §5: "each copy
 * has an empty private scratch directory (/tmp, TMPDIR), bounded by
 * limits.tmp_mb, that no other copy and no later call ever sees"; issue 15;
 * docs/sandbox.md "The scratch directory").
 *
 * A python germline:
 *   - its minimal root's /tmp is a tmpfs of its own, writable during the
 *     release's initialisation (import-time tempfile, find_library) and
 *     bounded by tmp_mb, writable (gl_scratch_allow below says how Landlock
 *     admits it);
 *   - once the import is done (the "ready" handshake) and before the first
 *     copy, the broker makes that tmpfs read-only from outside
 *     (gl_scratch_seal): nothing a copy does can reach it (A1), and what the
 *     initialisation left there is data-free (A2);
 *   - every copy is cloned into its own mount namespace (CLONE_NEWNS, the
 *     broker checks it from outside), and the broker, after the copy check
 *     and before the copy runs any release code, mounts a fresh empty tmpfs
 *     of size tmp_mb on the copy's /tmp (gl_scratch_mount): it hides the
 *     germline's, belongs to this copy alone and is gone with its mount
 *     namespace when the copy ends (O3).
 * An exec copy builds its own root: a tmpfs /tmp of tmp_mb (lib/runtime/exec_child.c).
 *
 * The mounts are made by one child of the broker per germline that enters
 * its user namespace (setns on a pidfd) and each copy's mount namespace in
 * turn: the broker's uid owns the germline's user namespace, so the child
 * has every capability there, and Landlock and seccomp, which deny the
 * mount API to the germline and its copies, do not bind it. */
#ifndef GL_SCRATCH_H
#define GL_SCRATCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/fail.h"

#define GL_SCRATCH_DIR "/tmp"

/* Add to ruleset the scratch rights — read, write, make and remove files,
 * directories and symlinks; no execute, no device, fifo or socket nodes, no
 * device ioctls — beneath path as the caller sees it now (a layer that
 * handles no read right gets the rest). Syscalls only (a launch child).
 * 0, or -1 with errno.
 *
 * Landlock's path walk skips mount points (security/landlock/fs.c: "Ignores
 * hidden mount points"): a rule on a directory that a tmpfs is later
 * stacked on never covers that tmpfs, and a copy's tmpfs does not exist
 * when the germline's layer is made. Only the namespace's root is on the
 * walk from it, so the germline's and the copy's layers grant these rights
 * beneath the minimal root's "/" (GL_SCRATCH_RULE_PATH): every other mount
 * there is read-only (EROFS) and holds only the Landlock read allowlist
 * (lib/sandbox/root.h), so what a copy can write is its own tmpfs alone.
 * docs/sandbox.md "The scratch directory". An exec copy's tmpfs mounts
 * exist before its layer: there the rule is on each tmpfs itself. */
int gl_scratch_allow(int ruleset, int abi, const char *path);
#define GL_SCRATCH_RULE_PATH "/"

/* The broker's mount helper for one germline (lib/sandbox/scratch.c "the
 * mounter"): a child in the germline's user and mount namespaces. */
struct gl_scratch {
	pid_t pid;
	int sock;
};

/* Start it (init_pidfd: a pidfd of the germline's init, in its user and
 * mount namespaces; nested as below, borrowed for the helper's life): it
 * makes the germline's /tmp read-only first (unless gl_scratch_off()).
 * 0, or -1 with f (launch: the germline is refused) and nothing left
 * running. */
int gl_scratch_start(int init_pidfd, const char *const *nested, struct gl_scratch *s,
		     struct gl_fail *f);
void gl_scratch_stop(struct gl_scratch *s);

/* A fresh tmpfs of tmp_mb MiB on the copy's /tmp, and the minimal root's
 * binds beneath /tmp (nested, given to gl_scratch_start: a release under a
 * GL_HOME in /tmp) bound again, read-only as they were, on it. copy is the
 * copy's pid here, germline the germline's: the copy's mount namespace must
 * not be the germline's (else the tmpfs would be every later copy's).
 * owner: the copy's uid and gid inside the germline's namespace, which own
 * the tmpfs (lib/sandbox/uids.h), or -1: inside root's.
 * 0, or -1 with f (germline: the fork is refused). */
int gl_scratch_mount(struct gl_scratch *s, int copy_pidfd, pid_t copy, pid_t germline,
		     unsigned tmp_mb, long owner, struct gl_fail *f);
#define GL_SCRATCH_NESTED_MAX 32

/* The tmpfs mount options of a scratch of tmp_mb MiB (size, nr_inodes,
 * mode) into buf. */
void gl_scratch_options(char *buf, size_t cap, unsigned tmp_mb);

/* GL_TESTING builds with GL_TEST_SCRATCH_OFF=1: no seal and no per-copy
 * tmpfs (every copy shares the germline's writable /tmp, unbounded); always
 * false otherwise. */
bool gl_scratch_off(void);

#endif
