/* publish_impl.h — shared between lib/sign/publish.c (init, add, remove, pack)
 * and lib/sign/publish_meta.c (the targets -> snapshot -> timestamp chain,
 * timestamp, rotate). Not a public header. */
#ifndef GL_PUBLISH_IMPL_H
#define GL_PUBLISH_IMPL_H

#include "sign/publish.h"
#include "sign/tuf.h"

/* A repository as gl-sign reads it back: its own newest metadata. */
struct gl_pubrepo {
	const char *dir;
	struct gl_meta root, targets, snapshot, timestamp;
};
enum gl_code gl_pubrepo_load(struct gl_pubrepo *r, const char *dir, struct gl_fail *f);
void gl_pubrepo_free(struct gl_pubrepo *r);

/* Distinct keyids of ks (with a secret when need_secret). */
size_t gl_keys_distinct(struct gl_keys ks, int need_secret);

/* The chain a change re-signs, from `from` down: GL_META_TARGETS (with
 * targets, the new "targets" object, consumed), GL_META_SNAPSHOT or
 * GL_META_TIMESTAMP. Every threshold is checked under r->root first
 * ("threshold" naming the role); then the versioned files, the plain ones
 * and timestamp.json last are written. *out gets the new versions
 * ("targets_version", "snapshot_version", "timestamp_version") added. */
enum gl_code gl_pubrepo_commit(struct gl_pubrepo *r, struct gl_keys keys,
				  enum gl_meta_type from, jv targets, const struct gl_expiry *e,
				  jv *out, struct gl_fail *f);

/* Write doc (consumed) at dir/name canonically and atomically. */
enum gl_code gl_pub_write(const char *dir, const char *name, jv doc, struct gl_fail *f);
void gl_pub_warn_expired(const char *path, int64_t expires);

#endif
