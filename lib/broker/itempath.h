/* itempath.h — item paths never name host state (SPEC §4; issue 14 item 1;
 * docs/plan.md "Item paths").
 *
 * An item named by path (an explicit item's "path", items_from_args,
 * dirs_from_args) is read by the broker, unconfined, and labelled by what
 * the caller or the policy says of its path. Under a natural policy
 * ("$HOME/ * *": [] beside narrower labelled globs, GL_HOME under $HOME) a
 * path naming GL_HOME/slots/… would hand another horizon's slot (paper
 * §IV-E, Lemma 1) to a public consumer, a directory item on GL_HOME every
 * slot, the trust metadata and scratch, and /proc/<gl-run>/environ the host
 * key's passphrase. So the host-state part of the read_paths rule
 * (lib/plan/readpaths.h gl_host_state_rule: "/", /proc, /sys, /dev, /run,
 * /var/run, GL_HOME and the host's other state paths, beneath or an
 * ancestor of them) holds for items too, as given and resolved; the policy's
 * read_paths grant and its labels play no part (items are meant to be
 * labelled files). gl-plan and gl-run refuse such an envelope
 * (gl_itempath_check_call), and the broker checks again when it opens the
 * path (gl_itempath_open), on what it opened, so that a rename or a bind
 * mount between the two cannot dodge it (the copy sees only what the broker
 * read or the directory it opened: A1, A3).
 *
 * Test build only (GL_TESTING): GL_TEST_ITEMPATH_OFF=1 turns both checks
 * off (tests/item-paths.bats shows the disclosure with them off). */
#ifndef GL_ITEMPATH_H
#define GL_ITEMPATH_H

#include <stdbool.h>

#include "plan/call.h"
#include "plan/readpaths.h"

#define GL_ERR_ITEM_PATH "item_path"

/* Is the test build's switch on (GL_TESTING and GL_TEST_ITEMPATH_OFF=1)? */
bool gl_itempath_off(void);

/* path (relative: from the working directory) as given and resolved
 * against the host-state rule (roots NULL: the fixed paths only). 0, or -1
 * with *f (GL_E_ITEM_PATH) naming the path, what it resolves to and the
 * rule. */
int gl_itempath_check(const struct gl_state_roots *roots, const char *path, struct gl_fail *f);

/* Every item of c with a "path": gl_itempath_check. 0, or -1 with e set
 * (GL_ERR_ITEM_PATH). */
int gl_itempath_check_call(const struct gl_call *c, const struct gl_state_roots *roots,
			   struct gl_call_error *e);

/* Open path for reading (flags as open(2)'s, O_CLOEXEC added) with no
 * symlink in any component (RESOLVE_NO_SYMLINKS; ELOOP otherwise): its
 * directory first, then the last component beneath that descriptor. Then
 * check what was opened, not its name:
 *   - its path as the kernel gives it back (/proc/self/fd) against the rule;
 *   - not on a kernel pseudo file system (procfs, sysfs, cgroup, …: fstatfs);
 *   - no directory it lies in, walked up by ".." from the descriptor, is a
 *     state root, /proc, /sys, /dev, /run or /var/run (dev+ino);
 *   - its place in its own file system (the mount's root and point from
 *     /proc/self/mountinfo) not beneath one of theirs on the same device:
 *     a bind mount of GL_HOME/slots elsewhere is GL_HOME/slots;
 *   - a directory moreover not above one of theirs there, and holding no
 *     mount point beneath it.
 * What cannot be examined is refused. The descriptor, or -1: with *f
 * filled (GL_E_ITEM_PATH) when the rule refused it, else *f untouched and
 * errno set. */
int gl_itempath_open(const struct gl_state_roots *roots, const char *path, int flags,
		     struct gl_fail *f);

#endif
