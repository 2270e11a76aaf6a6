/* pkey.h — TUF key objects: verify a signature with any key type TUF
 * defines, and compute a key's keyid (issue 16; SPEC §3 "Key types").
 *
 * A key object is {"keytype","scheme","keyval":{"public"},…} as a root or
 * a delegation lists it; other fields (securesystemslib's
 * keyid_hash_algorithms) are allowed and count in the keyid. Schemes:
 *
 *   ed25519              keytype ed25519; public 64 hex; signature 128 hex
 *                        (libsodium, as lib/sign/keys.c)
 *   ecdsa-sha2-nistp256  keytype ecdsa (or the older ecdsa-sha2-nistp256);
 *                        public a PEM SubjectPublicKeyInfo on P-256;
 *                        signature the hex of a DER ECDSA-Sig-Value over
 *                        SHA-256 (OpenSSL libcrypto)
 *   rsassa-pss-sha256    keytype rsa; public a PEM SubjectPublicKeyInfo of
 *                        2048 to 8192 bits; signature hex, RSASSA-PSS with
 *                        SHA-256 and MGF1-SHA-256, any salt length
 *                        (securesystemslib signs with the digest length, 32,
 *                        and verifies with PSS.AUTO: so do we)
 *
 * Everything about the key and the signature comes from the adversary's
 * metadata (paper §III): each field is checked for kind and bounded before
 * use. A key whose shape is wrong is `bad_metadata`; a scheme this host does
 * not implement is `unsupported` naming it; a signature that does not verify
 * (or is not hex of the right length) is `bad_signature`. */
#ifndef GL_PKEY_H
#define GL_PKEY_H

#include <jv.h>
#include <stddef.h>

#include "json/refusal.h"

#define GL_PKEY_PUBLIC_MAX 16384 /* bytes of keyval.public (an 8192-bit RSA PEM is ~1.5 KiB) */
#define GL_PKEY_SIG_HEX_MAX 2048 /* hex digits of a signature (8192-bit RSA: 2048) */

/* Verify sig_hex over msg[0..n) with key (borrowed). GL_E_OK, or
 * GL_E_BAD_SIGNATURE / GL_E_BAD_METADATA / GL_E_UNSUPPORTED with f set. */
enum gl_code gl_pkey_verify(jv key, const unsigned char *msg, size_t n, const char *sig_hex,
			       struct gl_fail *f);

/* keyid = hex SHA-256 of the canonical JSON (SPEC §3) of key (borrowed)
 * exactly as given, every field included. 0, or -1 with f (bad_metadata) if
 * key holds a value a key object cannot (a number, a bool, null, invalid
 * UTF-8) or is nested deeper than 4 levels. */
int gl_pkey_keyid(jv key, char out[65], struct gl_fail *f);

/* The X.509 certificates of PEM text buf (len bytes): how many there are
 * (0: no "BEGIN CERTIFICATE" block), or -1 when a block OpenSSL cannot
 * read is among them. A policy's ca_file is checked with it once, at
 * load, so that a bad file refuses the policy instead of every TLS
 * delivery (lib/plan/policy.c). */
int gl_pem_certificates(const char *buf, size_t len);

#endif
