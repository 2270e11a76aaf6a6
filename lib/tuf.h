/* tuf.h — TUF-style root and targets metadata (SPEC §3).
 *
 * A metadata file is hostile input until verified: it is size-capped,
 * parsed strictly, refused unless its bytes are exactly the canonical form
 * of what they parse to (so a signature covers one unambiguous document),
 * and its shape is checked field by field. Any of these failing is the
 * refusal "bad_signature" with a detail naming the file and the problem.
 *
 * Signatures: a signature by a keyid of the role that does not verify
 * refuses the document ("bad_signature") even if others would meet the
 * threshold; signatures by keyids outside the role are ignored; each keyid
 * counts once, so the same key listed twice never meets a threshold of 2
 * ("threshold"). */
#ifndef GL_TUF_H
#define GL_TUF_H

#include <jv.h>
#include <stdint.h>

#include "keys.h"
#include "refusal.h"
#include "util.h"

#define GL_TUF_META_MAX (1u << 20) /* bytes of one metadata file */
#define GL_TUF_SIGS_MAX 1024	   /* signatures in one document */
#define GL_TUF_KEYS_MAX 1024	   /* keys in one root */
#define GL_TUF_TARGETS_MAX 100000  /* targets in one targets.json */
#define GL_TUF_SPEC_VERSION "1.0.0"

enum gl_meta_type { GL_META_ROOT, GL_META_TARGETS };

/* A parsed, shape-checked (not yet verified) metadata document. */
struct gl_meta {
	char *name;		    /* for messages, e.g. "repo/2.root.json" */
	jv doc;			    /* {"signed":…,"signatures":[…]} */
	jv sig;			    /* doc.signed */
	struct gl_buf raw;	    /* the file's bytes (canonical) */
	struct gl_buf signed_bytes; /* canonical bytes of "signed": what is signed */
	int64_t version, expires;
};
void gl_meta_free(struct gl_meta *m);
static inline void gl_meta_freep(struct gl_meta *m)
{
	gl_meta_free(m);
}
#define autometa __attribute__((cleanup(gl_meta_freep)))

/* Parse buf[0..len) as metadata of type t; name is used in messages.
 * On success m owns everything; on refusal m is left empty. */
enum gl_refusal gl_meta_parse(struct gl_meta *m, const char *name, const char *buf, size_t len,
			      enum gl_meta_type t, struct gl_fail *f);
/* Read path (capped at GL_TUF_META_MAX) and parse it. A missing or
 * unreadable file is GL_R_IO. */
enum gl_refusal gl_meta_load(struct gl_meta *m, const char *path, enum gl_meta_type t,
			     struct gl_fail *f);

/* Verify m's signatures against the role ("root" or "targets") of the root
 * document root (which may be m itself). On success *signers (if not NULL)
 * receives the sorted keyids that validly signed (owned). */
enum gl_refusal gl_meta_verify(const struct gl_meta *m, const struct gl_meta *root,
			       const char *role, jv *signers, struct gl_fail *f);

/* "expired" when expires <= now. */
enum gl_refusal gl_meta_check_expiry(const struct gl_meta *m, int64_t now, struct gl_fail *f);

/* The role object {"keyids":[…],"threshold":t} of a root (owned). */
jv gl_meta_role(const struct gl_meta *root, const char *role);

/* A target file name: non-empty, at most 255 bytes, no '/', not "." or
 * "..", no control character, valid UTF-8. */
int gl_tuf_target_name_ok(const char *name);

/* ---- writing -------------------------------------------------------- */

/* {"keyids":[sorted distinct keyids of keys],"threshold":t}. Owned. */
jv gl_tuf_role(const struct gl_key *keys, size_t n, int64_t threshold);
/* keys (consumed) with every key of ks added (keyid -> public-key object). */
jv gl_tuf_keys_add(jv keys, const struct gl_key *ks, size_t n);
/* Root / targets "signed" objects. Consume their jv arguments. */
jv gl_tuf_root_signed(int64_t version, int64_t expires, jv keys, jv root_role, jv targets_role);
jv gl_tuf_targets_signed(int64_t version, int64_t expires, jv targets);
/* {"signed":signed,"signatures":[…]} signed by every key of ks that has a
 * secret, each keyid once. Consumes signed_. */
jv gl_tuf_sign(jv signed_, const struct gl_key *ks, size_t n);
/* Write doc (borrowed) in canonical form, atomically. 0, or -1 with *err. */
int gl_tuf_write(const char *path, jv doc, char **err);

#endif
