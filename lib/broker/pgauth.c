/* pgauth.c — PostgreSQL's startup and SCRAM-SHA-256, the broker's side
 * (pgauth.h; docs/streams.md "Passwords"). */
#define _GNU_SOURCE
#include "broker/pgauth.h"

#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json/msg.h"

#define PG_CODE_SSL 80877103u
#define PG_CODE_GSS 80877104u
#define PG_CODE_CANCEL 80877102u
#define PG_PROTO_3 196608u

/* 'R' codes (protocol 3.0 "Message Formats") */
enum { AUTH_OK = 0, AUTH_SASL = 10, AUTH_SASL_CONTINUE = 11, AUTH_SASL_FINAL = 12 };
/* what the next 'R' may be */
enum { ST_START, ST_CONTINUE, ST_FINAL, ST_OK };

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(struct gl_buf *b, uint32_t v)
{
	unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 8), (unsigned char)v};
	gl_buf_add(b, x, 4);
}

enum gl_pg_startup gl_pg_startup_kind(const unsigned char *p, size_t n, size_t *len)
{
	if (n < 8)
		return GL_PG_NEED;
	uint32_t l = be32(p), code = be32(p + 4);
	if (l < 8 || l > GL_PG_STARTUP_MAX)
		return GL_PG_BAD;
	if (n < l)
		return GL_PG_NEED;
	*len = l;
	if ((code == PG_CODE_SSL || code == PG_CODE_GSS) && l == 8)
		return GL_PG_SSL;
	if (code == PG_CODE_CANCEL && l == 16)
		return GL_PG_CANCEL;
	return code == PG_PROTO_3 ? GL_PG_STARTUP : GL_PG_BAD;
}

void gl_pg_error(struct gl_buf *out, const char *msg)
{
	static const char head[] = "SFATAL\0VFATAL\0C28000\0Mgermline: ";
	size_t n = strlen(msg);
	gl_buf_addc(out, 'E');
	put32(out, (uint32_t)(4 + sizeof head - 1 + n + 2));
	gl_buf_add(out, head, sizeof head - 1);
	gl_buf_add(out, msg, n + 1);
	gl_buf_addc(out, 0);
}

void gl_pgauth_init(struct gl_pgauth *a, const char *password)
{
	*a = (struct gl_pgauth){.password = password, .plen = strlen(password)};
	unsigned char r[24];
	randombytes_buf(r, sizeof r);
	struct gl_buf b = {0};
	gl_b64_encode(&b, r, sizeof r); /* 32 characters, none of them ',' */
	memcpy(a->cnonce, b.data, 32);
	a->cnonce[32] = '\0';
	gl_buf_free(&b);
}

void gl_pgauth_free(struct gl_pgauth *a)
{
	gl_buf_free(&a->in);
	gl_buf_free(&a->auth_msg);
	sodium_memzero(a->server_key, sizeof a->server_key);
}

static void hmac(unsigned char out[32], const unsigned char *key, size_t klen, const void *p,
		 size_t n)
{
	crypto_auth_hmacsha256_state s;
	crypto_auth_hmacsha256_init(&s, key, klen);
	crypto_auth_hmacsha256_update(&s, p, n);
	crypto_auth_hmacsha256_final(&s, out);
}

/* Hi(password, salt, i) of RFC 5802: PBKDF2 with HMAC-SHA-256, one block. */
static void salted_password(unsigned char out[32], const char *pw, size_t plen,
			    const unsigned char *salt, size_t slen, unsigned iter)
{
	unsigned char u[32];
	crypto_auth_hmacsha256_state s;
	crypto_auth_hmacsha256_init(&s, (const unsigned char *)pw, plen);
	crypto_auth_hmacsha256_update(&s, salt, slen);
	crypto_auth_hmacsha256_update(&s, (const unsigned char *)"\0\0\0\1", 4);
	crypto_auth_hmacsha256_final(&s, u);
	memcpy(out, u, 32);
	for (unsigned i = 1; i < iter; i++) {
		hmac(u, (const unsigned char *)pw, plen, u, 32);
		for (int k = 0; k < 32; k++)
			out[k] ^= u[k];
	}
	sodium_memzero(u, sizeof u);
}

/* A 'p' message of body[0..n) (SASLInitialResponse with mech, or
 * SASLResponse without). */
static void send_p(struct gl_buf *out, const char *mech, const char *body, size_t n)
{
	size_t ml = mech ? strlen(mech) + 1 + 4 : 0;
	gl_buf_addc(out, 'p');
	put32(out, (uint32_t)(4 + ml + n));
	if (mech) {
		gl_buf_add(out, mech, strlen(mech) + 1);
		put32(out, (uint32_t)n);
	}
	gl_buf_add(out, body, n);
}

/* AuthenticationSASL's list of mechanisms (NUL-terminated names, then an
 * empty one): SCRAM-SHA-256 is answered, with the client-first message. */
static int sasl_start(struct gl_pgauth *a, const char *p, size_t n, struct gl_buf *out,
		      const char **why)
{
	bool scram = false;
	for (const char *q = p, *end = p + n; q < end && *q;) {
		const char *z = memchr(q, 0, (size_t)(end - q));
		if (!z)
			break;
		scram |= !strcmp(q, "SCRAM-SHA-256");
		q = z + 1;
	}
	if (!scram) {
		*why = "the server offers no SCRAM-SHA-256 (a secret is given by SCRAM-SHA-256 "
		       "only)";
		return -1;
	}
	char first[64];
	int fl = snprintf(first, sizeof first, "n,,n=,r=%s", a->cnonce);
	gl_buf_add(&a->auth_msg, first + 3, (size_t)fl - 3); /* client-first-message-bare */
	send_p(out, "SCRAM-SHA-256", first, (size_t)fl);
	return 0;
}

/* The value of attribute name ("r=") at the start of *p within end, up to
 * the next ',': its start and length, *p past it. */
static bool attr(const char **p, const char *end, char name, const char **v, size_t *vl)
{
	if (end - *p < 2 || (*p)[0] != name || (*p)[1] != '=')
		return false;
	*v = *p + 2;
	const char *c = memchr(*v, ',', (size_t)(end - *v));
	*vl = (size_t)((c ? c : end) - *v);
	*p = c ? c + 1 : end;
	return true;
}

/* server-first-message "r=…,s=…,i=…": the client-final message with its
 * proof, and the server key the final message is checked with. */
static int sasl_continue(struct gl_pgauth *a, const char *p, size_t n, struct gl_buf *out,
			 const char **why)
{
	const char *q = p, *end = p + n, *nonce, *salt64, *it;
	size_t nl, sl, il;
	*why = "the server's SCRAM first message is malformed";
	if (memchr(p, 0, n) || !attr(&q, end, 'r', &nonce, &nl) || !attr(&q, end, 's', &salt64, &sl) ||
	    !attr(&q, end, 'i', &it, &il) || il == 0 || il > 9)
		return -1;
	/* the server's nonce extends the client's */
	if (nl <= 32 || memcmp(nonce, a->cnonce, 32))
		return -1;
	unsigned iter = 0;
	for (size_t i = 0; i < il; i++) {
		if (it[i] < '0' || it[i] > '9')
			return -1;
		iter = iter * 10 + (unsigned)(it[i] - '0');
	}
	if (iter < 1 || iter > GL_PG_SCRAM_ITER_MAX) {
		*why = "the server's SCRAM iteration count is outside 1 to 100000";
		return -1;
	}
	size_t saltn = 0;
	unsigned char *salt = sl <= 128 ? gl_b64_decode(salt64, sl, &saltn) : NULL;
	if (!salt || saltn == 0) {
		free(salt);
		return -1;
	}
	struct gl_buf final = {0};
	gl_buf_add(&final, "c=biws,r=", 9);
	gl_buf_add(&final, nonce, nl);
	gl_buf_addc(&a->auth_msg, ',');
	gl_buf_add(&a->auth_msg, p, n);
	gl_buf_addc(&a->auth_msg, ',');
	gl_buf_add(&a->auth_msg, final.data, final.len);
	unsigned char sp[32], ck[32], sk[32], sig[32], proof[32];
	salted_password(sp, a->password, a->plen, salt, saltn, iter);
	free(salt);
	hmac(ck, sp, 32, "Client Key", 10);
	hmac(a->server_key, sp, 32, "Server Key", 10);
	crypto_hash_sha256(sk, ck, 32);
	hmac(sig, sk, 32, a->auth_msg.data, a->auth_msg.len);
	for (int k = 0; k < 32; k++)
		proof[k] = ck[k] ^ sig[k];
	gl_buf_add(&final, ",p=", 3);
	gl_b64_encode(&final, proof, 32);
	send_p(out, NULL, final.data, final.len);
	gl_buf_free(&final);
	sodium_memzero(sp, sizeof sp);
	sodium_memzero(ck, sizeof ck);
	sodium_memzero(proof, sizeof proof);
	return 0;
}

/* server-final-message "v=…": the server proves it knows the verifier. */
static int sasl_final(struct gl_pgauth *a, const char *p, size_t n, const char **why)
{
	unsigned char want[32];
	hmac(want, a->server_key, 32, a->auth_msg.data, a->auth_msg.len);
	struct gl_buf b = {0};
	gl_b64_encode(&b, want, 32);
	bool ok = n >= 2 && !memcmp(p, "v=", 2) && n - 2 == b.len && !memcmp(p + 2, b.data, b.len);
	gl_buf_free(&b);
	if (!ok)
		*why = "the server's SCRAM signature is wrong: it does not know the password's "
		       "verifier";
	return ok ? 0 : -1;
}

/* One 'R' message's body p[0..n): 0 to go on, 1 authenticated, -1 *why. */
static int on_auth(struct gl_pgauth *a, const unsigned char *p, size_t n, struct gl_buf *out,
		   const char **why)
{
	*why = "the server's authentication messages are out of order";
	if (n < 4)
		return -1;
	uint32_t code = be32(p);
	const char *d = (const char *)p + 4;
	size_t dn = n - 4;
	if (code == AUTH_OK && (a->state == ST_START || a->state == ST_OK))
		return 1;
	if (code == AUTH_SASL && a->state == ST_START) {
		a->state = ST_CONTINUE;
		return sasl_start(a, d, dn, out, why);
	}
	if (code == AUTH_SASL_CONTINUE && a->state == ST_CONTINUE) {
		a->state = ST_FINAL;
		return sasl_continue(a, d, dn, out, why);
	}
	if (code == AUTH_SASL_FINAL && a->state == ST_FINAL) {
		a->state = ST_OK;
		return sasl_final(a, d, dn, why);
	}
	if (a->state == ST_START)
		*why = "the server asks for a password method other than SCRAM-SHA-256 (md5 or "
		       "cleartext: set password_encryption and pg_hba.conf to scram-sha-256)";
	return -1;
}

enum gl_pgauth_status gl_pgauth_feed(struct gl_pgauth *a, const void *p, size_t n,
				     struct gl_buf *out, struct gl_buf *reply)
{
	gl_buf_add(&a->in, p, n);
	const char *why = NULL;
	size_t off = 0;
	while (a->in.len - off >= 5) {
		const unsigned char *m = (const unsigned char *)a->in.data + off;
		uint32_t len = be32(m + 1);
		if (len < 4 || len > GL_PG_AUTH_MSG_MAX || ++a->msgs > GL_PG_AUTH_MSGS_MAX) {
			why = "the server's messages before AuthenticationOk are too long or too many";
			break;
		}
		if (a->in.len - off < (size_t)len + 1) {
			a->msgs--; /* counted when it is whole */
			break;
		}
		if (m[0] == 'E') { /* the server's refusal, as the copy's client expects it */
			gl_buf_add(reply, m, (size_t)len + 1);
			return GL_PGAUTH_FAIL;
		}
		const char *w = "the server sent a message before AuthenticationOk";
		int rc = m[0] == 'R' ? on_auth(a, m + 5, len - 4, out, &w)
		       : m[0] == 'N' ? 0 /* a NoticeResponse: nothing to answer */
				     : -1;
		if (rc < 0) {
			why = w;
			break;
		}
		if (rc == 1) { /* AuthenticationOk and all after it: the copy's */
			gl_buf_add(reply, m, a->in.len - off);
			return GL_PGAUTH_OK;
		}
		off += (size_t)len + 1;
	}
	if (why) {
		gl_pg_error(reply, why);
		return GL_PGAUTH_FAIL;
	}
	if (off) {
		memmove(a->in.data, a->in.data + off, a->in.len - off);
		a->in.len -= off;
	}
	return GL_PGAUTH_MORE;
}
