/* publish.h — a publisher's repository (gl-sign init|add|rotate, SPEC §3):
 *
 *   REPO/root.json, REPO/N.root.json   every root version, the newest also as root.json
 *   REPO/targets.json                  the signed list of release archives
 *   REPO/targets/FILE                  the archives
 *
 * Every file is written canonical and atomically. Keys are loaded by the
 * caller (keys.h); a key without a secret (k->sk NULL) is listed but does
 * not sign. Metadata that is already expired when written is written
 * anyway (with a warning on stderr), so tests and drills can make it. */
#ifndef GL_PUBLISH_H
#define GL_PUBLISH_H

#include <jv.h>
#include <stdint.h>

#include "keys.h"
#include "refusal.h"

#define GL_ROOT_DAYS_DEFAULT 365
#define GL_TARGETS_DAYS_DEFAULT 90

struct gl_keys {
	const struct gl_key *k;
	size_t n;
};

/* Create REPO with root v1 (root role: root_keys, targets role:
 * targets_keys, both with threshold) and an empty targets v1.
 * *out: {"ok":true,"repo","root_version":1,"targets_version":1,"keyids":{…}}. */
enum gl_refusal gl_publish_init(const char *repo, struct gl_keys root_keys,
				struct gl_keys targets_keys, int64_t threshold,
				int64_t root_expires, int64_t targets_expires, jv *out,
				struct gl_fail *f);

/* Add (or replace) the target basename(archive): its manifest must parse
 * ("bad_manifest"), keys must reach the targets threshold ("threshold").
 * *out: {"ok":true,"target","length","sha256","name","version","targets_version"}. */
enum gl_refusal gl_publish_add(const char *repo, struct gl_keys keys, const char *archive,
			       int64_t expires, jv *out, struct gl_fail *f);

/* Root N -> N+1 whose root role is new_keys (threshold, or the old root
 * threshold when 0), signed by old_keys (old threshold) and new_keys (new
 * threshold). The targets role is kept.
 * *out: {"ok":true,"version":N+1,"keyids":{"root","targets"}}. */
enum gl_refusal gl_publish_rotate(const char *repo, struct gl_keys old_keys,
				  struct gl_keys new_keys, int64_t threshold, int64_t expires,
				  jv *out, struct gl_fail *f);

/* Pack src_dir into out_path reproducibly (archive.h) and describe it.
 * *out: {"ok":true,"archive","length","sha256"}. */
enum gl_refusal gl_publish_pack(const char *src_dir, const char *out_path, jv *out,
				struct gl_fail *f);

#endif
