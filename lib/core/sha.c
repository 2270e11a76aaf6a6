/* sha.c — SHA-256 and SHA-512 through libcrypto's one-algorithm API (see
 * sha.h). That API is marked deprecated in OpenSSL 3 in favour of EVP,
 * whose contexts live on the heap and whose digests are fetched from a
 * provider on every use; the one-algorithm functions run the same assembly
 * (SHA extensions, AVX2) without either, and cannot fail for these inputs. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "core/sha.h"

#include <openssl/sha.h>

_Static_assert(sizeof(SHA256_CTX) <= sizeof(((struct gl_sha256 *)0)->ctx), "SHA256_CTX fits");
_Static_assert(sizeof(SHA512_CTX) <= sizeof(((struct gl_sha512 *)0)->ctx), "SHA512_CTX fits");
_Static_assert(_Alignof(SHA256_CTX) <= 16 && _Alignof(SHA512_CTX) <= 16, "aligned");

void gl_sha256_init(struct gl_sha256 *s)
{
	SHA256_Init((SHA256_CTX *)s->ctx);
}

void gl_sha256_update(struct gl_sha256 *s, const void *p, size_t n)
{
	if (n)
		SHA256_Update((SHA256_CTX *)s->ctx, p, n);
}

void gl_sha256_final(struct gl_sha256 *s, unsigned char out[GL_SHA256_BYTES])
{
	SHA256_Final(out, (SHA256_CTX *)s->ctx);
}

void gl_sha256(unsigned char out[GL_SHA256_BYTES], const void *p, size_t n)
{
	struct gl_sha256 s;
	gl_sha256_init(&s);
	gl_sha256_update(&s, p, n);
	gl_sha256_final(&s, out);
}

void gl_sha512_init(struct gl_sha512 *s)
{
	SHA512_Init((SHA512_CTX *)s->ctx);
}

void gl_sha512_update(struct gl_sha512 *s, const void *p, size_t n)
{
	if (n)
		SHA512_Update((SHA512_CTX *)s->ctx, p, n);
}

void gl_sha512_final(struct gl_sha512 *s, unsigned char out[GL_SHA512_BYTES])
{
	SHA512_Final(out, (SHA512_CTX *)s->ctx);
}

void gl_sha512(unsigned char out[GL_SHA512_BYTES], const void *p, size_t n)
{
	struct gl_sha512 s;
	gl_sha512_init(&s);
	gl_sha512_update(&s, p, n);
	gl_sha512_final(&s, out);
}
