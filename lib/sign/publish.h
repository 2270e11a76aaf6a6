/* publish.h — a publisher's TUF 1.0 repository (gl-sign, SPEC §3; TUF
 * specification §4 and §6):
 *
 *   REPO/root.json, REPO/N.root.json     every root version, the newest also as root.json
 *   REPO/targets.json, REPO/V.targets.json     the signed list of release archives
 *   REPO/snapshot.json, REPO/V.snapshot.json   the version of targets.json
 *   REPO/timestamp.json                  the version, length and hash of snapshot.json
 *   REPO/targets/FILE, REPO/targets/HASH.FILE  the archives (HASH: their SHA-256)
 *
 * The V.* and HASH.* names are written when the root says
 * consistent_snapshot (the default), so a mirror or CDN can serve the
 * repository while it is being updated; the plain names are always written
 * too. Every change re-signs targets -> snapshot -> timestamp, each role
 * with the keys given that it lists (one key may serve several roles), and
 * writes the versioned files before the plain ones and timestamp.json last.
 * Every file is written canonical and atomically; every threshold is
 * checked before anything is written. A key without a secret (k->sk NULL)
 * is listed but does not sign. Metadata already expired when written is
 * written anyway (with a warning), so tests and drills can make it. */
#ifndef GL_PUBLISH_H
#define GL_PUBLISH_H

#include <jv.h>
#include <stdint.h>

#include "sign/keys.h"
#include "json/refusal.h"

#define GL_ROOT_DAYS_DEFAULT 365
#define GL_TARGETS_DAYS_DEFAULT 90
#define GL_SNAPSHOT_DAYS_DEFAULT 7
#define GL_TIMESTAMP_DAYS_DEFAULT 1

struct gl_keys {
	const struct gl_key *k;
	size_t n;
};

/* Expiry times for what a change re-signs; 0: the role's default. */
struct gl_expiry {
	int64_t targets, snapshot, timestamp;
};

struct gl_init {
	struct gl_keys root, targets, snapshot, timestamp; /* snapshot/timestamp: n 0 = targets */
	int64_t threshold;				   /* every role's */
	int64_t root_expires;
	struct gl_expiry exp;
	int consistent;
};

/* Create REPO with root v1 and empty targets, snapshot and timestamp v1.
 * *out: {"ok":true,"repo","root_version":1,"targets_version":1,
 * "consistent_snapshot","keyids":{"root","targets","snapshot","timestamp"}}. */
enum gl_code gl_publish_init(const char *repo, const struct gl_init *in, jv *out,
				struct gl_fail *f);

/* Add (or replace) the target basename(archive): its manifest must parse
 * ("bad_manifest"); keys must reach the targets, snapshot and timestamp
 * thresholds ("threshold", naming the role).
 * *out: {"ok":true,"target","length","sha256","name","version",
 * "targets_version","snapshot_version","timestamp_version"}. */
enum gl_code gl_publish_add(const char *repo, struct gl_keys keys, const char *archive,
			       const struct gl_expiry *e, jv *out, struct gl_fail *f);

/* After gl_publish_add: REPO/targets/NAME.minisig in minisign's format
 * (lib/sign/minisign.h), signed by the first of keys that the targets role lists;
 * *out gets "minisig" (its path) and "minisign_pubkey" (the "RW…" line for
 * minisign -Vm FILE -P). */
enum gl_code gl_publish_minisign(const char *repo, struct gl_keys keys, const char *name,
				    jv *out, struct gl_fail *f);

/* Withdraw target (a path listed in targets.json): re-signs the chain
 * without it, then removes REPO/targets/TARGET (the HASH. copy stays for
 * clients that fetched an earlier snapshot). *out as for add, without the
 * archive fields. */
enum gl_code gl_publish_remove(const char *repo, struct gl_keys keys, const char *target,
				  const struct gl_expiry *e, jv *out, struct gl_fail *f);

/* Renew timestamp.json alone (version + 1, same snapshot): the publisher's
 * cron job. *out: {"ok":true,"timestamp_version","expires"}. */
enum gl_code gl_publish_timestamp(const char *repo, struct gl_keys keys, int64_t expires,
				     jv *out, struct gl_fail *f);

/* Root N -> N+1 in which role ("root", "targets", "snapshot" or
 * "timestamp") has new_keys (threshold, or the role's old threshold when
 * 0), signed by old_keys (the old root threshold) and, for the root role,
 * by new_keys (the new threshold). For another role the chain below it is
 * then re-signed under the new root with old_keys and new_keys (targets:
 * targets, snapshot and timestamp; snapshot: snapshot and timestamp).
 * *out: {"ok":true,"role","version":N+1,"keyids":{…}}. */
enum gl_code gl_publish_rotate(const char *repo, const char *role, struct gl_keys old_keys,
				  struct gl_keys new_keys, int64_t threshold, int64_t expires,
				  jv *out, struct gl_fail *f);

/* Pack src_dir into out_path reproducibly (archive.h) and describe it.
 * *out: {"ok":true,"archive","length","sha256"}. */
enum gl_code gl_publish_pack(const char *src_dir, const char *out_path, jv *out,
				struct gl_fail *f);

#endif
