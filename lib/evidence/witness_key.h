/* witness_key.h — who produced a witness, and whom an auditor trusts
 * (SPEC §7; docs/witness.md "Who made a witness").
 *
 * A witness is evidence that travels: gl-replay may read one that another
 * host wrote, or one a forger wrote to frame a benign release (paper
 * §III: the adversary knows our mechanism and can write any file). Its
 * self-digest (record_sha256) only shows it was not changed after it was
 * sealed; a forger seals too. So gl-run signs every witness with its host
 * key and the record names that key ("producer"); gl-replay checks the
 * signature and says whether the key is trusted, and only verdicts on
 * trusted witnesses carry weight in gl-damp.
 *
 * The key: gl-run --host-key K (the key its receipts are signed with),
 * else the host's own witness key GL_HOME/keys/witness.key, an unencrypted
 * Ed25519 key (mode 0600) created at the first gl-run. Whatever signs, its
 * public half is recorded as GL_HOME/keys/trusted/<keyid>.pub, and
 * gl-replay trusts every key there (the host's own, in its own GL_HOME)
 * and every key given with --trust.
 *
 * The signed bytes are GL_WITNESS_SIG_CONTEXT followed by the SHA-256 (64
 * hex) of the canonical record without "record_sha256" and "signature":
 * the context keeps a witness signature from ever being taken for a
 * receipt's or a TUF document's (those sign canonical JSON, which never
 * starts so). */
#ifndef GL_WITNESS_KEY_H
#define GL_WITNESS_KEY_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"
#include "sign/keys.h"

#define GL_WITNESS_SIG_CONTEXT "germline.witness.v4\n"
#define GL_WITNESS_TRUST_MAX 256 /* keys trusted at once (--trust and keys/trusted/) */

/* The host's own witness key in home (GL_HOME/keys/witness.key), created
 * (unencrypted, mode 0600) when there is none: concurrent first runs
 * agree on one key (the first link wins). 0 with k (secret loaded), or -1
 * with f (io). */
int gl_witness_key_own(const char *home, struct gl_key *k, struct gl_fail *f);

/* Record k's public half as home/keys/trusted/<keyid>.pub (atomic; the
 * same bytes every time). 0, or -1 with f (io). */
int gl_witness_key_record(const char *home, const struct gl_key *k, struct gl_fail *f);

/* The SHA-256 (64 hex and a NUL) of v's (borrowed) canonical JSON (SPEC
 * §3): the digest a statement is signed over. 0, or -1 with f (not
 * canonical JSON). */
int gl_statement_digest(jv v, char hex[65], struct gl_fail *f);

/* The SHA-256 (64 hex and a NUL) of rec's canonical bytes without
 * "record_sha256", and without "signature" when without_signature: with
 * it, the digest a witness is signed over; without it, the record's
 * self-digest (record_sha256). Both cover the carried snapshots, so a
 * changed byte anywhere in a witness is a bad witness, never evidence.
 * rec is borrowed. 0, or -1 with f (not canonical JSON). */
int gl_witness_digest(jv rec, bool without_signature, char hex[65], struct gl_fail *f);

/* The signature (128 hex and a NUL) of a statement of the host: the bytes
 * context (at most 63 bytes, ending in a newline: what kind of statement,
 * so that no signature is ever taken for another kind's) followed by its
 * digest (64 hex). gl_witness_sign is the witness's; lib/evidence/
 * call_binding.h signs a call's receipts the same way. */
void gl_statement_sign(const struct gl_key *k, const char *context, const char digest[65],
		       char sig[129]);
/* Does sig (hex) verify for context and digest with the public key pk? */
bool gl_statement_sig_ok(const unsigned char pk[32], const char *context, const char digest[65],
			 const char *sig);

/* The signature (128 hex and a NUL) of the record whose signed digest is
 * digest (64 hex). */
void gl_witness_sign(const struct gl_key *k, const char digest[65], char sig[129]);

/* Does sig (hex) verify for digest with the public key pk? */
bool gl_witness_sig_ok(const unsigned char pk[32], const char digest[65], const char *sig);

/* The keys an auditor trusts, by keyid. */
struct gl_witness_trust {
	char (*id)[65];
	size_t n;
};

/* Add the public key named by arg (KEY.pub, KEY.key or KEY, as gl-sign
 * names keys). 0, or -1 with f (io: unreadable or not a key; too many). */
int gl_witness_trust_add(struct gl_witness_trust *t, const char *arg, struct gl_fail *f);
bool gl_witness_trusted(const struct gl_witness_trust *t, const char *keyid);
/* The same, also trusting home/keys/trusted/<keyid>.pub when that file
 * holds the key of that keyid (then added to t). Looked up when asked, not
 * read once at start: in a pipeline gl-replay starts beside the gl-run
 * whose first run in a GL_HOME creates the key. keyid: 64 lowercase hex. */
bool gl_witness_trusted_home(struct gl_witness_trust *t, const char *home, const char *keyid);
/* Is keyid one of this host's own (home/keys/trusted/<keyid>.pub holds
 * it: a key this host's gl-run signed with)? A witness it signed names
 * this host's files; one trusted by --trust alone names another's. */
bool gl_witness_key_local(const char *home, const char *keyid);
void gl_witness_trust_free(struct gl_witness_trust *t);

/* GL_TESTING builds with GL_TEST_WITNESS_TRUST_OFF=1: every witness is
 * taken as trusted, signed or not, and gl-damp counts every verdict (the
 * framing tests/witness-trust.bats shows). Always false otherwise. */
bool gl_witness_trust_off(void);

#endif
