/* minisign.h — a release checkable without us (issue 16): FILE.minisig in
 * minisign's format, signed with the targets key (Ed25519), and the public
 * key line, so that `minisign -Vm FILE -P RW…` verifies what `gl-verify`
 * would install (paper §III: a host that does not run germline can still
 * check the publisher's signature; A1, the signing key is the publisher's).
 *
 * The signature file minisign 0.11 writes by default (the prehashed "ED"
 * algorithm):
 *
 *   untrusted comment: signature from germline targets key KEYID
 *   base64("ED" || keynum[8] || Ed25519(BLAKE2b-512(FILE)))
 *   trusted comment: timestamp:UNIX\tfile:BASENAME\thashed
 *   base64(Ed25519(signature[64] || trusted comment))
 *
 * The public key: base64("Ed" || keynum[8] || pk[32]) (56 characters, "RW…"),
 * and as a file "untrusted comment: minisign public key KEYNUM\n" then that
 * line.
 *
 * keynum: minisign picks 8 random bytes per key pair; ours is derived, so
 * that the same key always has the same keynum: the first 8 bytes of the
 * keyid (SPEC §3: SHA-256 of the canonical public-key object), in that order.
 * minisign prints a keynum as the little-endian integer of those bytes in
 * upper-case hex (KEYNUM above). */
#ifndef GL_MINISIGN_H
#define GL_MINISIGN_H

#include <stddef.h>

#include "sign/keys.h"
#include "json/refusal.h"

#define GL_MINISIGN_PUBKEY_LEN 57 /* 56 base64 characters + NUL */

/* keynum of k (the first 8 bytes of its keyid). 0, or -1 with f (io) when
 * k has no keyid. */
int gl_minisign_keynum(const struct gl_key *k, unsigned char out[8], struct gl_fail *f);

/* The public key line "RW…" into out (at least GL_MINISIGN_PUBKEY_LEN bytes).
 * 0, or -1 with f (io) if out is too small or k has no keyid. */
int gl_minisign_pubkey(const struct gl_key *k, char *out, size_t outlen, struct gl_fail *f);

/* Write the public key file (minisign.pub's format) atomically. GL_E_OK or
 * GL_E_IO with f set. */
enum gl_code gl_minisign_pubkey_write(const struct gl_key *k, const char *path,
					 struct gl_fail *f);

/* Sign file (read in a stream, prehashed with BLAKE2b-512) with k (k->sk
 * set) and write sig_path (NULL: FILE.minisig) atomically, mode 0644.
 * GL_E_OK or GL_E_IO with f set. */
enum gl_code gl_minisign_write(const struct gl_key *k, const char *file, const char *sig_path,
				  struct gl_fail *f);

#endif
