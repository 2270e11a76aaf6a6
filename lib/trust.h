/* trust.h — the host's trust store (SPEC §2, §3), under GL_HOME/trust/:
 *
 *   trust/<publisher-id>/root.json     the newest trusted root (canonical bytes)
 *   trust/<publisher-id>/targets.json  the last accepted targets (rollback baseline)
 *
 * publisher-id is the first 16 hex digits of the SHA-256 of the canonical
 * bytes of the pinned root's "signed". Every write is atomic; an install
 * holds an exclusive flock on the publisher directory while it updates it.
 *
 * A publisher's repository is matched to a pinned publisher by content: the
 * trusted root of version v must appear byte-identical as REPO/v.root.json. */
#ifndef GL_TRUST_H
#define GL_TRUST_H

#include <jv.h>
#include <stdint.h>

#include "refusal.h"
#include "tuf.h"

#define GL_TRUST_CHAIN_MAX 4096 /* root versions walked in one refresh */

struct gl_publisher {
	char id[17];
	char *dir;	     /* GL_HOME/trust/<id> */
	int lock_fd;	     /* the flock'd directory, or -1 */
	struct gl_meta root; /* newest trusted root */
};
void gl_publisher_free(struct gl_publisher *p);
static inline void gl_publisher_freep(struct gl_publisher *p)
{
	gl_publisher_free(p);
}
#define autopublisher __attribute__((cleanup(gl_publisher_freep)))

/* Pin a root explicitly (first use): root_arg is a repository directory
 * (its root.json) or a root.json path. The root must meet its own root
 * threshold and not be expired. Pinning a root already trusted changes
 * nothing. *out: {"ok":true,"publisher","version","keyids":{"root","targets"}}. */
enum gl_refusal gl_trust_pin(const char *home, const char *root_arg, int64_t now, jv *out,
			     struct gl_fail *f);

/* Find and lock the pinned publisher of repo ("not_pinned" if none). */
enum gl_refusal gl_trust_find(const char *home, const char *repo, struct gl_publisher *p,
			      struct gl_fail *f);

/* Walk REPO/(N+1).root.json, (N+2)… from the trusted version N: each must
 * carry exactly that version and meet the threshold of the previous root's
 * root role and of its own. The newest is stored, then checked for expiry.
 * A REPO/root.json newer than the chain reaches is refused ("threshold").
 * When the targets role changes, the stored targets.json is dropped (TUF
 * 5.3.11): its version was counted under other keys. */
enum gl_refusal gl_trust_refresh_root(struct gl_publisher *p, const char *repo, int64_t now,
				      struct gl_fail *f);

/* Verify REPO/targets.json against the trusted root's targets role, the
 * stored targets (rollback: lower version, or same version with other
 * bytes) and its expiry; store it. *t receives it, *signers the keyids
 * that validly signed it (owned). */
enum gl_refusal gl_trust_refresh_targets(struct gl_publisher *p, const char *repo, int64_t now,
					 struct gl_meta *t, jv *signers, struct gl_fail *f);

#endif
