/* readpaths.h — the deployer grants a release's read_paths (SPEC §4, §5;
 * docs/formats.md "read_paths"; issue 13 item 1).
 *
 * A manifest's read_paths are extra read-only paths of the germline's and
 * every copy's Landlock allowlist. The release chooses them, so by itself
 * it could read /etc/shadow, another horizon's slot under GL_HOME/slots or
 * a labelled file by path, before any user data exists (A2) and from any
 * copy (A1). The rule, in one place for gl-run and gl-replay, before any
 * launch (python germline and exec copy alike): every entry P
 *   - is matched by a glob of the policy's read_paths ("not_granted"), and
 *     so is its resolved path R (symlinks followed with realpath; a path
 *     not there yet is resolved through its deepest existing ancestor);
 * and neither P nor R is
 *   - "/" ("root"), or /proc, /sys or beneath them ("proc_sys"),
 *   - /dev, /run, /var/run or beneath them ("host_runtime"; the germline
 *     gets /dev/null and /dev/urandom from its own allowlist),
 *   - GL_HOME or another path of the host's state (--releases, --damp,
 *     --receipts, --host-key, gl-replay's --items), as given or resolved,
 *     beneath it or an ancestor of it ("gl_home"),
 *   - matched by a policy "labels" glob, or beneath a path one matches
 *     ("labelled"), or an ancestor of a path one may match
 *     ("labelled_ancestor": /data when /data/hr/ * .csv is labelled).
 * The policy's globs count as written and with their literal head resolved
 * (a labels glob under a symlinked directory labels its target too).
 * A release asking for any other path is refused ("error":"read_paths"),
 * not launched; nothing is filtered silently. */
#ifndef GL_READPATHS_H
#define GL_READPATHS_H

#include <jv.h>

#include "plan/policy.h"

#define GL_READPATHS_STATE_MAX 8

/* The host's state paths (GL_HOME first, then --releases, --damp,
 * --receipts, the host key…), each as given (made absolute from the
 * working directory) and as resolved. */
struct gl_state_roots {
	char *p[2 * GL_READPATHS_STATE_MAX];
	size_t n;
};
/* From state (NULL-terminated, at most GL_READPATHS_STATE_MAX; NULL: none). */
void gl_state_roots_init(struct gl_state_roots *roots, const char *const *state);
void gl_state_roots_free(struct gl_state_roots *roots);

/* The host-state part of the rule, shared by manifest read_paths (below)
 * and item paths (lib/broker/itempath.h): the rule clean absolute path x breaks
 * ("root", "proc_sys", "host_runtime" or "gl_home": beneath a root of
 * roots, or an ancestor of one; roots NULL: none), or NULL. */
const char *gl_host_state_rule(const struct gl_state_roots *roots, const char *x);

/* p (absolute) resolved with realpath (malloc'd). A path that is not there
 * (yet) is resolved through its deepest existing ancestor, the rest
 * appended, so a symlink on the way is followed either way. NULL when
 * nothing resolves (then only the literal path can be checked). */
char *gl_path_resolve(const char *p);

/* 0 when every entry of manifest's read_paths (borrowed; absent or empty:
 * nothing asked) is admitted by pol (NULL: a policy granting none), state
 * being the host's state paths (NULL-terminated, GL_HOME first, at most
 * GL_READPATHS_STATE_MAX); else -1 with *f (GL_E_READ_PATHS) naming the
 * entry (sanitised), what it resolves to and the rule it broke.
 * Test build only (GL_TESTING): GL_TEST_READPATHS_OFF=1 admits everything
 * (tests/read-paths.bats shows the disclosure with the check off). */
int gl_readpaths_check(const struct gl_policy *pol, const char *const *state, jv manifest,
		       struct gl_fail *f);

#endif
