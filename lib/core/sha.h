/* sha.h — SHA-256 and SHA-512, the digests of every release, archive,
 * metadata file, witness and slot (TUF's "hashes", the release identity,
 * the receipts' bindings).
 *
 * libcrypto's implementation: on a processor with the SHA extensions it is
 * about 4.5 times faster than libsodium's portable one (gl_sha256_fd_hex
 * over 100 MB: 0.11 s of CPU against 0.51 s here), and a release tree of
 * node_modules is
 * hashed at install and at every session's verified launch (docs/exec.md
 * "One copy"; docs/performance.md "Hashing"). The digests are the same bytes
 * (FIPS 180-4); signatures stay libsodium's. */
#ifndef GL_SHA_H
#define GL_SHA_H

#include <stddef.h>

#define GL_SHA256_BYTES 32
#define GL_SHA512_BYTES 64

/* Room for libcrypto's SHA256_CTX and SHA512_CTX (checked in sha.c). */
struct gl_sha256 {
	_Alignas(16) unsigned char ctx[128];
};
struct gl_sha512 {
	_Alignas(16) unsigned char ctx[224];
};

void gl_sha256_init(struct gl_sha256 *s);
void gl_sha256_update(struct gl_sha256 *s, const void *p, size_t n);
void gl_sha256_final(struct gl_sha256 *s, unsigned char out[GL_SHA256_BYTES]);
/* The digest of p[0..n) in one call. */
void gl_sha256(unsigned char out[GL_SHA256_BYTES], const void *p, size_t n);

void gl_sha512_init(struct gl_sha512 *s);
void gl_sha512_update(struct gl_sha512 *s, const void *p, size_t n);
void gl_sha512_final(struct gl_sha512 *s, unsigned char out[GL_SHA512_BYTES]);
void gl_sha512(unsigned char out[GL_SHA512_BYTES], const void *p, size_t n);

#endif
