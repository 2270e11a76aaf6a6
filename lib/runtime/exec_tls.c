/* exec_tls.c — a session's certificate authority and its exec copies'
 * relay certificate; see exec_tls.h. */
#define _GNU_SOURCE
#include "runtime/exec_tls.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "release/manifest.h"

#define VALID_BEFORE (24L * 3600)      /* a skewed clock in the copy still accepts it */
#define VALID_DAYS 397L                 /* the longest a browser-grade leaf may live */

/* A certificate for pub named cn, with a random positive serial and the
 * validity above; NULL on failure. */
static X509 *cert_new(EVP_PKEY *pub, const char *cn)
{
	X509 *c = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	ASN1_INTEGER *ai = NULL;
	bool ok = c && RAND_bytes(serial, sizeof serial) == 1;
	if (ok) {
		serial[0] &= 0x7f;
		bn = BN_bin2bn(serial, sizeof serial, NULL);
		ai = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
	}
	ok = ok && ai && X509_set_version(c, 2) && X509_set_serialNumber(c, ai) &&
	     X509_gmtime_adj(X509_getm_notBefore(c), -VALID_BEFORE) &&
	     X509_gmtime_adj(X509_getm_notAfter(c), VALID_DAYS * 24 * 3600) &&
	     X509_NAME_add_entry_by_txt(X509_get_subject_name(c), "CN", MBSTRING_ASC,
					(const unsigned char *)cn, -1, -1, 0) &&
	     X509_set_pubkey(c, pub);
	ASN1_INTEGER_free(ai);
	BN_free(bn);
	if (!ok) {
		X509_free(c);
		return NULL;
	}
	return c;
}

/* Add the extension nid = value (OpenSSL's configuration syntax) to c,
 * issued by issuer. */
static bool add_ext(X509 *c, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, c, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	bool ok = e && X509_add_ext(c, e, -1);
	X509_EXTENSION_free(e);
	return ok;
}

/* "DNS:a,IP:127.0.0.1,…" for the hosts among hosts[0..n) (gl_host_ok
 * names: no comma; a host:port stream destination is no TLS name), or
 * NULL when there is none. */
static char *alt_names(const char *const *hosts, size_t n)
{
	struct gl_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		if (gl_dest_port(hosts[i]))
			continue;
		unsigned char ip[16];
		bool is_ip = inet_pton(AF_INET, hosts[i], ip) == 1 ||
			     inet_pton(AF_INET6, hosts[i], ip) == 1;
		gl_buf_adds(&b, b.len ? (is_ip ? ",IP:" : ",DNS:") : (is_ip ? "IP:" : "DNS:"));
		gl_buf_adds(&b, hosts[i]);
	}
	if (!b.len)
		return NULL;
	gl_buf_addc(&b, '\0');
	return b.data;
}

static bool pem_append(BIO *out, X509 *c, EVP_PKEY *k)
{
	return (!c || PEM_write_bio_X509(out, c)) &&
	       (!k || PEM_write_bio_PrivateKey(out, k, NULL, NULL, 0, NULL, NULL));
}

static char *bio_string(BIO *b)
{
	char *p;
	long n = BIO_get_mem_data(b, &p);
	return n > 0 ? gl_xasprintf("%.*s", (int)n, p) : NULL;
}

/* The authority: CA:TRUE (critical), certificate signing only, self-signed. */
static X509 *make_ca(EVP_PKEY *key)
{
	X509 *ca = cert_new(key, "germline session CA (trusted by its copies only)");
	if (ca && X509_set_issuer_name(ca, X509_get_subject_name(ca)) &&
	    add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
	    add_ext(ca, ca, NID_key_usage, "critical,keyCertSign") &&
	    add_ext(ca, ca, NID_subject_key_identifier, "hash") &&
	    X509_sign(ca, key, EVP_sha256()))
		return ca;
	X509_free(ca);
	return NULL;
}

/* The relay's certificate: the declared names only, serverAuth only. */
static X509 *make_relay(EVP_PKEY *key, X509 *ca, EVP_PKEY *ca_key, const char *const *hosts,
			size_t n)
{
	X509 *c = cert_new(key, "germline relay");
	autofree char *san = n ? alt_names(hosts, n) : NULL;
	if (c && X509_set_issuer_name(c, X509_get_subject_name(ca)) &&
	    add_ext(c, ca, NID_basic_constraints, "critical,CA:FALSE") &&
	    add_ext(c, ca, NID_key_usage, "critical,digitalSignature") &&
	    add_ext(c, ca, NID_ext_key_usage, "serverAuth") &&
	    add_ext(c, ca, NID_subject_key_identifier, "hash") &&
	    add_ext(c, ca, NID_authority_key_identifier, "keyid:always") &&
	    (!san || add_ext(c, ca, NID_subject_alt_name, san)) && X509_sign(c, ca_key, EVP_sha256()))
		return c;
	X509_free(c);
	return NULL;
}

int gl_exec_tls_make(struct gl_exec_tls *t, const char *const *hosts, size_t n, struct gl_fail *f)
{
	*t = (struct gl_exec_tls){0};
	EVP_PKEY *ca_key = EVP_EC_gen("P-256"), *key = EVP_EC_gen("P-256");
	X509 *ca = ca_key ? make_ca(ca_key) : NULL;
	X509 *relay = ca && key ? make_relay(key, ca, ca_key, hosts, n) : NULL;
	BIO *a = BIO_new(BIO_s_mem()), *r = BIO_new(BIO_s_mem());
	if (relay && a && r && pem_append(a, ca, NULL) && pem_append(r, relay, key)) {
		t->ca_pem = bio_string(a);
		t->relay_pem = bio_string(r);
	}
	BIO_free(a);
	BIO_free(r);
	X509_free(relay);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(ca_key); /* the authority signs nothing else, ever */
	ERR_clear_error();
	if (t->ca_pem && t->relay_pem)
		return 0;
	gl_exec_tls_free(t);
	return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "exec copy: cannot make the relay's certificate");
}

void gl_exec_tls_free(struct gl_exec_tls *t)
{
	free(t->ca_pem);
	if (t->relay_pem)
		OPENSSL_cleanse(t->relay_pem, strlen(t->relay_pem));
	free(t->relay_pem);
	*t = (struct gl_exec_tls){0};
}
