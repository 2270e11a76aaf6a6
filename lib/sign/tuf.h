/* tuf.h — TUF 1.0 metadata documents (SPEC §3; TUF specification §4):
 * the four top-level roles root, targets, snapshot and timestamp.
 *
 * A metadata file is hostile input until verified: its size is capped per
 * role before it is read (gl_tuf_cap), it is parsed by the strict reader
 * (duplicate keys, invalid UTF-8, floats and out-of-range integers refused),
 * in any encoding a TUF writer uses (pretty-printed, any key order), and its
 * signatures are checked over the canonical form of what was parsed
 * (securesystemslib's encode_canonical: control characters verbatim). Its
 * shape is checked field by field: a wrong shape is "bad_metadata" naming
 * the file and the field, never "bad_signature". Fields the specification
 * does not define are kept (the signature covers them) and ignored.
 *
 * Signatures: a signature by a keyid of the role that does not verify
 * refuses the document ("bad_signature") even if others would meet the
 * threshold; signatures by keyids outside the role are ignored; each keyid
 * counts once, so the same key listed twice never meets a threshold of 2
 * ("threshold"); a keyid is the SHA-256 of the canonical form of its key
 * object as the root gives it (so one key cannot pose as two). A key type
 * this host cannot verify counts as no signature; when the threshold then
 * fails for want of it the refusal is "unsupported" naming the type. */
#ifndef GL_TUF_H
#define GL_TUF_H

#include <jv.h>
#include <stdint.h>

#include "sign/keys.h"
#include "json/refusal.h"
#include "core/util.h"

#define GL_TUF_META_MAX (1u << 20)	/* bytes of a root file */
#define GL_TUF_TIMESTAMP_MAX (16u << 10) /* bytes of timestamp.json */
#define GL_TUF_SNAPSHOT_MAX (4u << 20)	/* of snapshot.json unless timestamp gives its length */
#define GL_TUF_TARGETS_META_MAX (32u << 20) /* of targets.json unless snapshot gives it */
#define GL_TUF_SIGS_MAX 1024		/* signatures in one document */
#define GL_TUF_KEYS_MAX 1024		/* keys in one root */
#define GL_TUF_TARGETS_MAX 100000	/* targets in one targets.json */
#define GL_TUF_PATH_MAX 4096		/* bytes of one target path */
#define GL_TUF_DELEGATIONS_MAX 64	/* delegated roles in one targets.json */
#define GL_TUF_SPEC_VERSION "1.0.31"

enum gl_meta_type { GL_META_ROOT, GL_META_TARGETS, GL_META_SNAPSHOT, GL_META_TIMESTAMP };

/* "root", "targets", "snapshot", "timestamp". */
const char *gl_meta_type_name(enum gl_meta_type t);
/* The default size cap of a file of type t (above). In a GL_TESTING build
 * with GL_TEST_META_CAP_OFF=1 there is none (SIZE_MAX): tests/tuf.bats shows
 * an endless file then being read to its end. */
size_t gl_tuf_cap(enum gl_meta_type t);

/* A parsed, shape-checked (not yet verified) metadata document. */
struct gl_meta {
	char *name;		    /* for messages, e.g. "repo/2.root.json" */
	enum gl_meta_type type;
	jv doc;			    /* {"signed":…,"signatures":[…]} */
	jv sig;			    /* doc.signed */
	struct gl_buf raw;	    /* the file's bytes as read */
	struct gl_buf signed_bytes; /* canonical bytes of "signed": what is signed */
	int64_t version, expires;
};
void gl_meta_free(struct gl_meta *m);
static inline void gl_meta_freep(struct gl_meta *m)
{
	gl_meta_free(m);
}
#define autometa __attribute__((cleanup(gl_meta_freep)))
/* Is m holding a document (not empty)? */
static inline int gl_meta_present(const struct gl_meta *m)
{
	return m->name != NULL;
}

/* Parse buf[0..len) as metadata of type t; name is used in messages.
 * On success m owns everything; on refusal m is left empty. */
enum gl_code gl_meta_parse(struct gl_meta *m, const char *name, const char *buf, size_t len,
			      enum gl_meta_type t, struct gl_fail *f);
/* Read a local path (capped at gl_tuf_cap(t): "length" above it) and parse
 * it. A missing or unreadable file is GL_E_IO. */
enum gl_code gl_meta_load(struct gl_meta *m, const char *path, enum gl_meta_type t,
			     struct gl_fail *f);

/* Verify m's signatures against the role ("root", "targets", "snapshot",
 * "timestamp") of the root document root (which may be m itself). On
 * success *signers (if not NULL) receives the sorted keyids that validly
 * signed (owned). */
enum gl_code gl_meta_verify(const struct gl_meta *m, const struct gl_meta *root,
			       const char *role, jv *signers, struct gl_fail *f);

/* Verify a delegated targets document m against the delegation role
 * (borrowed: {"name","keyids","threshold",…}) of parent's "delegations",
 * whose "keys" hold the keys. */
enum gl_code gl_meta_verify_delegated(const struct gl_meta *m, const struct gl_meta *parent,
					 jv role, jv *signers, struct gl_fail *f);

/* "expired" when expires <= now. */
enum gl_code gl_meta_check_expiry(const struct gl_meta *m, int64_t now, struct gl_fail *f);

/* The role object {"keyids":[…],"threshold":t} of a root (owned). */
jv gl_meta_role(const struct gl_meta *root, const char *role);
/* Does the root say consistent_snapshot: true? */
int gl_meta_consistent(const struct gl_meta *root);

/* A snapshot's or timestamp's entry for file (e.g. "targets.json"):
 * *version, and *length (-1 when not given); *hashes the "hashes" object or
 * jv_null() (owned). 0, or -1 when m does not list file. */
int gl_meta_file(const struct gl_meta *m, const char *file, int64_t *version, int64_t *length,
		 jv *hashes);

/* Check data[0..len) against an optional length (-1: none) and hashes
 * object (borrowed; null: none) that a parent role gives for name: "length",
 * then every hash the host supports ("hash"); a hashes object naming none
 * the host supports is "unsupported". */
enum gl_code gl_tuf_check_bytes(const char *name, const void *data, size_t len,
				   int64_t want_len, jv hashes, struct gl_fail *f);

/* A target file name as gl-sign publishes it: non-empty, at most 255
 * bytes, no '/', not "." or "..", no control character, valid UTF-8. */
int gl_tuf_target_name_ok(const char *name);
/* A target path safe to fetch from a repository and install: non-empty,
 * at most GL_TUF_PATH_MAX bytes, not absolute, no empty, "." or ".."
 * segment, no control character, valid UTF-8. */
int gl_tuf_target_path_ok(const char *path);

/* ---- writing (lib/sign/tuf_write.c) -------------------------------------- */

/* {"keyids":[sorted distinct keyids of keys],"threshold":t}. Owned. */
jv gl_tuf_role(const struct gl_key *keys, size_t n, int64_t threshold);
/* keys (consumed) with every key of ks added (keyid -> public-key object). */
jv gl_tuf_keys_add(jv keys, const struct gl_key *ks, size_t n);
/* Root "signed": roles is {"root":…,"targets":…,"snapshot":…,"timestamp":…}.
 * Consumes keys and roles. */
jv gl_tuf_root_signed(int64_t version, int64_t expires, jv keys, jv roles, int consistent);
/* Targets / snapshot / timestamp "signed" objects. Consume their jv. */
jv gl_tuf_targets_signed(int64_t version, int64_t expires, jv targets);
jv gl_tuf_snapshot_signed(int64_t version, int64_t expires, jv meta);
jv gl_tuf_timestamp_signed(int64_t version, int64_t expires, jv meta);
/* {"version":v} plus "length" and "hashes":{"sha256"} when data is given. */
jv gl_tuf_meta_entry(int64_t version, const void *data, size_t len);
/* {"signed":signed,"signatures":[…]} signed by every key of ks that has a
 * secret, each keyid once. Consumes signed_. jv_invalid() with f (io
 * "cannot sign: …") when signed_ has no canonical form. */
jv gl_tuf_sign(jv signed_, const struct gl_key *ks, size_t n, struct gl_fail *f);
/* doc (borrowed) in canonical form into b. 0, or -1 with f (bad_metadata). */
int gl_tuf_dump(struct gl_buf *b, jv doc, struct gl_fail *f);
/* Write doc (borrowed) in canonical form, atomically. 0, or -1 with f. */
int gl_tuf_write(const char *path, jv doc, struct gl_fail *f);

#endif
