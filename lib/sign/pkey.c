/* pkey.c — TUF key objects: signature verification and keyids; see pkey.h. */
#define _GNU_SOURCE
#include "sign/pkey.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/sha.h"
#include "core/util.h"
#include "json/json.h"

/* ---- keyid: canonical JSON of the key object ---------------------------- */

/* TUF key objects hold objects, arrays and strings only, at most 4 levels
 * deep: anything else is refused before the bytes are written (by
 * gl_canon_dump_tuf, the one canonical writer: SPEC §3, a PEM's newlines
 * verbatim). Borrows v. 0, or -1 with f (bad_metadata). */
static int key_shape(jv v, int depth, struct gl_fail *f)
{
	if (depth > 4)
		return gl_fail(f, GL_E_BAD_METADATA, "key object nested deeper than 4 levels");
	int r = 0;
	switch (jv_get_kind(v)) {
	case JV_KIND_STRING:
		return 0;
	case JV_KIND_ARRAY:
		jv_array_foreach(v, i, e)
		{
			if (r == 0)
				r = key_shape(e, depth + 1, f);
			jv_free(e);
		}
		return r;
	case JV_KIND_OBJECT:
		jv_object_foreach(v, k, e)
		{
			if (r == 0)
				r = key_shape(e, depth + 1, f);
			jv_free(k);
			jv_free(e);
		}
		return r;
	default:
		return gl_fail(f, GL_E_BAD_METADATA,
			       "a key object holds a %s (only objects, arrays and strings)",
			       jv_kind_name(jv_get_kind(v)));
	}
}

int gl_pkey_keyid(jv key, char out[65], struct gl_fail *f)
{
	autobuf struct gl_buf b = {0};
	if (jv_get_kind(key) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_BAD_METADATA, "a key is not an object");
	if (key_shape(key, 0, f) < 0)
		return -1;
	if (gl_canon_dump_tuf(&b, key, f) < 0)
		return -1;
	unsigned char d[32];
	gl_sha256(d, (const unsigned char *)b.data, b.len);
	gl_hex(d, 32, out);
	return 0;
}

/* ---- verification --------------------------------------------------------- */

/* A string field of o (borrowed; valid while o lives), or NULL. */
static const char *str_field(jv o, const char *name, size_t *len)
{
	jv v = jv_object_get(jv_copy(o), jv_string(name));
	const char *s = NULL;
	if (jv_get_kind(v) == JV_KIND_STRING) {
		s = jv_string_value(v);
		*len = (size_t)jv_string_length_bytes(jv_copy(v));
	}
	jv_free(v); /* o still holds the string */
	return s;
}

static enum gl_code verify_ed25519(const char *pub, size_t publen, const unsigned char *msg,
				      size_t n, const char *sig_hex, size_t siglen,
				      struct gl_fail *f)
{
	unsigned char pk[32], sig[64];
	if (publen != 64 || gl_unhex(pub, 64, pk, 32) < 0)
		return gl_fail_set(f, GL_E_BAD_METADATA,
				   "ed25519 key: keyval.public is not 64 hex digits");
	if (siglen != 128 || gl_unhex(sig_hex, 128, sig, 64) < 0)
		return gl_fail_set(f, GL_E_BAD_SIGNATURE, "ed25519 signature is not 128 hex digits");
	if (crypto_sign_verify_detached(sig, msg, n, pk) != 0)
		return gl_fail_set(f, GL_E_BAD_SIGNATURE, "ed25519 signature does not verify");
	return GL_E_OK;
}

/* The PEM public key (a SubjectPublicKeyInfo), or NULL. */
static EVP_PKEY *read_pem(const char *pem, size_t len)
{
	static const char begin[] = "-----BEGIN PUBLIC KEY-----";
	if (len < sizeof begin - 1 || memcmp(pem, begin, sizeof begin - 1))
		return NULL;
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	if (!bio)
		gl_die(GL_EXIT_USAGE, "out of memory");
	EVP_PKEY *k = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	BIO_free(bio);
	ERR_clear_error();
	return k;
}

/* Check the key is what the scheme needs: P-256 for ECDSA, RSA of 2048 to
 * 8192 bits for PSS. GL_E_OK or a refusal. */
static enum gl_code key_fits(EVP_PKEY *k, bool ecdsa, struct gl_fail *f)
{
	if (ecdsa) {
		char group[64] = "";
		if (!EVP_PKEY_is_a(k, "EC") ||
		    !EVP_PKEY_get_group_name(k, group, sizeof group, NULL) ||
		    strcmp(group, "prime256v1"))
			return gl_fail_set(f, GL_E_BAD_METADATA,
					   "ecdsa-sha2-nistp256 key: not a P-256 key (%s)",
					   *group ? group : "not EC");
		return GL_E_OK;
	}
	int bits = EVP_PKEY_get_bits(k);
	if (!EVP_PKEY_is_a(k, "RSA"))
		return gl_fail_set(f, GL_E_BAD_METADATA, "rsassa-pss-sha256 key: not an RSA key");
	if (bits < 2048 || bits > 8192)
		return gl_fail_set(f, GL_E_UNSUPPORTED,
				   "rsassa-pss-sha256 key of %d bits (2048 to 8192 accepted)", bits);
	return GL_E_OK;
}

/* ECDSA P-256 / SHA-256 (DER signature) or RSASSA-PSS / SHA-256 through
 * libcrypto's EVP_DigestVerify. */
static enum gl_code verify_evp(bool ecdsa, const char *pub, size_t publen,
				  const unsigned char *msg, size_t n, const char *sig_hex,
				  size_t siglen, struct gl_fail *f)
{
	const char *scheme = ecdsa ? "ecdsa-sha2-nistp256" : "rsassa-pss-sha256";
	EVP_PKEY *k = read_pem(pub, publen);
	if (!k)
		return gl_fail_set(f, GL_E_BAD_METADATA,
				   "%s key: keyval.public is not a PEM public key", scheme);
	enum gl_code r = key_fits(k, ecdsa, f);
	size_t want = ecdsa ? 0 : (size_t)EVP_PKEY_get_size(k);
	autofree unsigned char *sig = gl_xmalloc(siglen / 2 + 1);
	if (r == GL_E_OK &&
	    (siglen % 2 || siglen == 0 || (want && siglen != 2 * want) ||
	     (ecdsa && siglen > 2 * 72) || gl_unhex(sig_hex, siglen, sig, siglen / 2) < 0))
		r = gl_fail_set(f, GL_E_BAD_SIGNATURE, "%s signature is not hex of the right length",
				scheme);
	EVP_MD_CTX *ctx = r == GL_E_OK ? EVP_MD_CTX_new() : NULL;
	EVP_PKEY_CTX *pctx = NULL;
	if (r == GL_E_OK) {
		if (!ctx || EVP_DigestVerifyInit(ctx, &pctx, EVP_sha256(), NULL, k) != 1 ||
		    (!ecdsa && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
				EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) != 1 ||
				EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_AUTO) != 1)))
			r = gl_fail_set(f, GL_E_UNSUPPORTED, "%s: libcrypto cannot set it up", scheme);
		else if (EVP_DigestVerify(ctx, sig, siglen / 2, msg, n) != 1)
			r = gl_fail_set(f, GL_E_BAD_SIGNATURE, "%s signature does not verify", scheme);
	}
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	ERR_clear_error();
	return r;
}

enum gl_code gl_pkey_verify(jv key, const unsigned char *msg, size_t n, const char *sig_hex,
			       struct gl_fail *f)
{
	size_t tl = 0, sl = 0, pl = 0;
	if (jv_get_kind(key) != JV_KIND_OBJECT)
		return gl_fail_set(f, GL_E_BAD_METADATA, "a key is not an object");
	const char *type = str_field(key, "keytype", &tl);
	const char *scheme = str_field(key, "scheme", &sl);
	jv keyval = jv_object_get(jv_copy(key), jv_string("keyval"));
	const char *pub = jv_get_kind(keyval) == JV_KIND_OBJECT ? str_field(keyval, "public", &pl)
								: NULL;
	jv_free(keyval); /* key still holds it, and pub with it */
	if (!type || !scheme || strlen(type) != tl || strlen(scheme) != sl)
		return gl_fail_set(f, GL_E_BAD_METADATA, "a key needs string keytype and scheme");
	if (!pub || strlen(pub) != pl || pl > GL_PKEY_PUBLIC_MAX)
		return gl_fail_set(f, GL_E_BAD_METADATA,
				   "%s key: keyval.public is not a string of at most %d bytes",
				   scheme, GL_PKEY_PUBLIC_MAX);
	size_t siglen = sig_hex ? strnlen(sig_hex, GL_PKEY_SIG_HEX_MAX + 1) : 0;
	if (siglen > GL_PKEY_SIG_HEX_MAX)
		return gl_fail_set(f, GL_E_BAD_SIGNATURE, "a signature of more than %d hex digits",
				   GL_PKEY_SIG_HEX_MAX);
	bool ed = !strcmp(scheme, "ed25519"), ec = !strcmp(scheme, "ecdsa-sha2-nistp256"),
	     rsa = !strcmp(scheme, "rsassa-pss-sha256");
	if (!ed && !ec && !rsa)
		return gl_fail_set(f, GL_E_UNSUPPORTED, "key type %s with scheme %s", type, scheme);
	bool type_ok = ed ? !strcmp(type, "ed25519")
		       : ec ? !strcmp(type, "ecdsa") || !strcmp(type, "ecdsa-sha2-nistp256")
			    : !strcmp(type, "rsa");
	if (!type_ok)
		return gl_fail_set(f, GL_E_BAD_METADATA, "key type %s does not go with scheme %s",
				   type, scheme);
	if (ed)
		return verify_ed25519(pub, pl, msg, n, sig_hex ? sig_hex : "", siglen, f);
	return verify_evp(ec, pub, pl, msg, n, sig_hex ? sig_hex : "", siglen, f);
}

int gl_pem_certificates(const char *buf, size_t len)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";
	int blocks = 0, read = 0;
	for (const char *p = buf, *end = buf + len;
	     (p = memmem(p, (size_t)(end - p), begin, sizeof begin - 1)); p += sizeof begin - 1)
		blocks++;
	if (blocks == 0 || len > INT32_MAX)
		return blocks == 0 ? 0 : -1;
	BIO *b = BIO_new_mem_buf(buf, (int)len);
	X509 *x;
	while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		X509_free(x);
		read++;
	}
	BIO_free(b);
	ERR_clear_error();
	return read == blocks ? read : -1;
}
