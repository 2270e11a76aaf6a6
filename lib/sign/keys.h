/* keys.h — Ed25519 keys and their files (SPEC §3), with libsodium.
 *
 *   NAME.pub  {"keytype":"ed25519","keyval":{"public":HEX},"scheme":"ed25519"}
 *   NAME.key  the same with keyval.private = the 32-byte seed (hex), or,
 *             under a passphrase, keyval without "private" and
 *             "encrypted":{"kdf":"argon2id13","opslimit","memlimit","salt",
 *             "nonce","ciphertext"} where ciphertext = secretbox(seed).
 *   keyid     hex SHA-256 of the canonical JSON of the .pub object.
 *
 * Secrets (seeds, secret keys, passphrases, derived keys) live only in
 * sodium_malloc'd memory (locked, guarded) and are wiped when freed; they
 * never pass through jv or ordinary heap buffers. Processes that load a
 * secret call gl_keys_harden() first (no core dumps, not dumpable). */
#ifndef GL_KEYS_H
#define GL_KEYS_H

#include <jv.h>
#include <stddef.h>

#include "core/fail.h"

#define GL_KEY_FILE_MAX 4096u
#define GL_KEYID_HEX 65 /* 64 hex + NUL */

/* The functions below return an enum gl_code: GL_E_OK; GL_E_IO (a missing,
 * unreadable or malformed file, one that exists, no GL_PASSPHRASE and no
 * terminal: exit 2, SPEC §2); GL_E_BAD_PASSPHRASE (secretbox refused: the
 * refusal "bad_passphrase", exit 1). enum gl_key_status is the same three
 * (and the no-passphrase case) for gl_receipts_load_key (lib/runtime/
 * receipt.h), which still returns it. */
enum gl_key_status {
	GL_KEY_OK = 0,
	GL_KEY_IO,
	GL_KEY_BAD_PASSPHRASE,
	GL_KEY_NO_PASSPHRASE,
};

struct gl_key {
	unsigned char pk[32];
	char keyid[GL_KEYID_HEX];
	unsigned char *sk; /* 64-byte libsodium secret key (sodium_malloc), or NULL */
	char *path;	   /* the file it came from (malloc'd), for messages */
};

enum gl_key_need {
	GL_KEY_PUBLIC, /* NAME.pub, else the public half of NAME.key */
	GL_KEY_SECRET, /* NAME.key, decrypted */
	GL_KEY_ANY,    /* the secret if NAME.key exists, else the public key */
};

/* Locked, guarded memory for secrets (sodium_malloc: mlock'd, guard
 * pages); sodium_free wipes it. autolocked frees at scope exit. */
void *gl_locked(size_t n);
void gl_locked_freep(void *pp);
#define autolocked __attribute__((cleanup(gl_locked_freep)))

/* Disable core dumps (RLIMIT_CORE 0) and make the process non-dumpable
 * (PR_SET_DUMPABLE 0). 0, or -1 with f (io) if either fails: the caller
 * must then not load a secret. */
int gl_keys_harden(struct gl_fail *f);

/* Resolve a --key argument: NAME, NAME.key or NAME.pub -> both paths (malloc'd). */
void gl_key_paths(const char *arg, char **keypath, char **pubpath);

/* Generate a key pair into prefix.key (mode 0600, never replacing an
 * existing file unless force) and prefix.pub. Encrypted under a passphrase
 * unless plain. Fills k (public part only). f filled on failure. */
enum gl_code gl_key_generate(const char *prefix, int plain, int force, struct gl_key *k,
			     struct gl_fail *f);

/* Load a key named by arg. f filled on failure (its detail never holds a
 * secret). */
enum gl_code gl_key_load(const char *arg, enum gl_key_need need, struct gl_key *k,
			 struct gl_fail *f);

/* Wipe and free k's secret and path. */
void gl_key_free(struct gl_key *k);

/* keyid of a raw public key. */
void gl_keyid(const unsigned char pk[32], char out[GL_KEYID_HEX]);

/* The public-key object {"keytype","keyval":{"public"},"scheme"}. Owned. */
jv gl_pubkey_json(const unsigned char pk[32]);

/* Parse a public-key object (borrowed) strictly: exactly these fields.
 * 0 and pk, or -1 with f (io: a key file is the host's, exit 2). */
int gl_pubkey_parse(jv obj, unsigned char pk[32], struct gl_fail *f);

/* Detached Ed25519 signature of msg: sig is 64 bytes. k->sk must be set. */
void gl_key_sign(const struct gl_key *k, const void *msg, size_t len, unsigned char sig[64]);
/* 1 if sig is a valid signature of msg by pk, else 0. */
int gl_key_verify(const unsigned char pk[32], const void *msg, size_t len,
		  const unsigned char sig[64]);

#endif
