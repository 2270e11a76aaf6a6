/* trust.h — the host's trust store (SPEC §2, §3), under GL_HOME/trust/:
 *
 *   trust/<publisher-id>/root.json       the newest trusted root (its bytes as fetched)
 *   trust/<publisher-id>/timestamp.json  the trusted timestamp, snapshot and targets
 *   trust/<publisher-id>/snapshot.json   (the rollback baselines of TUF §5.4-5.6;
 *   trust/<publisher-id>/targets.json    lib/sign/tuf_client.h)
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

#include "json/refusal.h"
#include "sign/tuf.h"

#define GL_TRUST_CHAIN_MAX 4096 /* root versions walked in one refresh */

struct gl_publisher {
	char id[17];
	char *dir;	     /* GL_HOME/trust/<id> */
	int lock_fd;	     /* the flock'd directory, or -1 */
	struct gl_meta root; /* newest trusted root */
	/* the trusted timestamp, snapshot and targets, each verified against
	 * root when loaded (one that no longer verifies is dropped); empty when
	 * none is trusted yet */
	struct gl_meta timestamp, snapshot, targets;
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
enum gl_code gl_trust_pin(const char *home, const char *root_arg, int64_t now, jv *out,
			     struct gl_fail *f);

/* Find and lock the pinned publisher of repo ("not_pinned" if none). */
enum gl_code gl_trust_find(const char *home, const char *repo, struct gl_publisher *p,
			      struct gl_fail *f);

/* TUF §5.3: walk REPO/(N+1).root.json, (N+2)… from the trusted version N
 * (at most GL_TRUST_CHAIN_MAX): each must carry exactly that version and
 * meet the threshold of the previous root's root role and of its own
 * (5.3.4, 5.3.5). The newest is stored (5.3.8), then checked for expiry
 * (5.3.10: "expired", the freeze of the root). A REPO/root.json newer than
 * the chain reaches is refused ("threshold"). When the timestamp or
 * snapshot role's keys changed, the trusted timestamp and snapshot are
 * dropped (5.3.11); when the targets role's did, the trusted targets too:
 * their versions were counted under other keys. */
enum gl_code gl_trust_refresh_root(struct gl_publisher *p, const char *repo, int64_t now,
				      struct gl_fail *f);

/* Store m's bytes as p->dir/<role>.json atomically. */
enum gl_code gl_trust_store(const struct gl_publisher *p, const struct gl_meta *m,
			       struct gl_fail *f);

#endif
