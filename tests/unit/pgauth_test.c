/* Unit tests of lib/broker/pgauth.c: the copy's first bytes on a PostgreSQL
 * connection (gl_pg_startup_kind) and the server's side of the broker's
 * SCRAM-SHA-256 exchange (gl_pgauth_feed), with bytes a server could send:
 * a message cut across two reads after one already answered (the second
 * read must not answer the first again), a nonce that does not extend the
 * client's, a wrong signature, a method other than SCRAM, the server's own
 * refusal, and AuthenticationOk with what follows it. That the proof is
 * right is shown against a real PostgreSQL 15 (tests/streams.bats). Run by
 * tests/lib.bats under the plain and the sanitizer build. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "broker/pgauth.h"
#include "json/msg.h"

#include "check.h"

static void put32(struct gl_buf *b, uint32_t v)
{
	unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 8), (unsigned char)v};
	gl_buf_add(b, x, 4);
}

/* An 'R' message of code and data[0..n). */
static void auth_msg(struct gl_buf *b, uint32_t code, const char *data, size_t n)
{
	gl_buf_addc(b, 'R');
	put32(b, (uint32_t)(8 + n));
	put32(b, code);
	gl_buf_add(b, data, n);
}

/* An exchange with the client nonce "A" × 32, as the fuzz target fixes it. */
static void start(struct gl_pgauth *a)
{
	gl_pgauth_init(a, "pencil-password");
	memset(a->cnonce, 'A', 32);
}

static bool has(const struct gl_buf *b, const char *s)
{
	return b->len && memmem(b->data, b->len, s, strlen(s));
}

static const char SASL[] = "SCRAM-SHA-256\0";
static const char FIRST[] = "r=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAserver,s=c2FsdHNhbHQ=,i=16";

static void startup_kinds(void)
{
	size_t len = 0;
	const unsigned char ssl[] = {0, 0, 0, 8, 4, 210, 22, 47};
	CHECK(gl_pg_startup_kind(ssl, sizeof ssl, &len) == GL_PG_SSL && len == 8);
	CHECK(gl_pg_startup_kind(ssl, 7, &len) == GL_PG_NEED);
	struct gl_buf st = {0};
	static const char params[] = "user\0postgres\0\0";
	put32(&st, 8 + sizeof params - 1);
	put32(&st, 196608);
	gl_buf_add(&st, params, sizeof params - 1);
	CHECK(gl_pg_startup_kind((unsigned char *)st.data, st.len, &len) == GL_PG_STARTUP &&
	      len == st.len);
	CHECK(gl_pg_startup_kind((unsigned char *)st.data, st.len - 1, &len) == GL_PG_NEED);
	const unsigned char huge[] = {0, 1, 0, 0, 0, 3, 0, 0};
	CHECK(gl_pg_startup_kind(huge, sizeof huge, &len) == GL_PG_BAD);
	gl_buf_free(&st);
}

/* R 10, and R 11 cut in two reads: each answered once, in order. */
static void cut_across_reads(void)
{
	struct gl_pgauth a;
	start(&a);
	struct gl_buf in = {0}, out = {0}, reply = {0};
	auth_msg(&in, 10, SASL, sizeof SASL);
	size_t first_len = in.len;
	auth_msg(&in, 11, FIRST, sizeof FIRST - 1);
	size_t cut = first_len + 10;
	CHECK(gl_pgauth_feed(&a, in.data, cut, &out, &reply) == GL_PGAUTH_MORE);
	CHECK(has(&out, "SCRAM-SHA-256") && has(&out, "n,,n=,r=AAAA") && !has(&out, "c=biws"));
	out.len = 0;
	CHECK(gl_pgauth_feed(&a, in.data + cut, in.len - cut, &out, &reply) == GL_PGAUTH_MORE,
	      "%.*s", (int)reply.len, reply.data ? reply.data : "");
	CHECK(has(&out, "c=biws,r=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAserver,p=") && !reply.len);
	/* a wrong signature ends it, with an ErrorResponse for the copy */
	struct gl_buf fin = {0};
	auth_msg(&fin, 12, "v=AAAA", 6);
	CHECK(gl_pgauth_feed(&a, fin.data, fin.len, &out, &reply) == GL_PGAUTH_FAIL);
	CHECK(reply.len && reply.data[0] == 'E' && has(&reply, "signature is wrong"));
	gl_pgauth_free(&a);
	gl_buf_free(&in);
	gl_buf_free(&out);
	gl_buf_free(&reply);
	gl_buf_free(&fin);
}

static enum gl_pgauth_status one(const struct gl_buf *in, struct gl_buf *reply)
{
	struct gl_pgauth a;
	start(&a);
	struct gl_buf out = {0};
	enum gl_pgauth_status st = gl_pgauth_feed(&a, in->data, in->len, &out, reply);
	gl_pgauth_free(&a);
	gl_buf_free(&out);
	return st;
}

static void refusals_and_ok(void)
{
	struct gl_buf in = {0}, reply = {0};
	/* a server nonce that does not extend the client's */
	auth_msg(&in, 10, SASL, sizeof SASL);
	auth_msg(&in, 11, "r=BBBBserver,s=c2FsdA==,i=16", 28);
	CHECK(one(&in, &reply) == GL_PGAUTH_FAIL && has(&reply, "malformed"));
	in.len = reply.len = 0;
	/* md5 */
	auth_msg(&in, 5, "salt", 4);
	CHECK(one(&in, &reply) == GL_PGAUTH_FAIL && has(&reply, "other than SCRAM-SHA-256"));
	in.len = reply.len = 0;
	/* the server's own refusal reaches the copy as it was sent */
	static const char err[] = "SFATAL\0C28P01\0Mpassword authentication failed\0\0";
	gl_buf_addc(&in, 'E');
	put32(&in, 4 + sizeof err - 1);
	gl_buf_add(&in, err, sizeof err - 1);
	CHECK(one(&in, &reply) == GL_PGAUTH_FAIL && reply.len == in.len &&
	      !memcmp(reply.data, in.data, in.len));
	in.len = reply.len = 0;
	/* trust: AuthenticationOk at once, and what follows it, are the copy's */
	auth_msg(&in, 0, "", 0);
	gl_buf_add(&in, "Z\0\0\0\5I", 6);
	CHECK(one(&in, &reply) == GL_PGAUTH_OK && reply.len == in.len &&
	      !memcmp(reply.data, in.data, in.len));
	in.len = reply.len = 0;
	/* a query's answer before authentication */
	gl_buf_add(&in, "Z\0\0\0\5I", 6);
	CHECK(one(&in, &reply) == GL_PGAUTH_FAIL && has(&reply, "before AuthenticationOk"));
	gl_buf_free(&in);
	gl_buf_free(&reply);
}

int main(void)
{
	startup_kinds();
	cut_across_reads();
	refusals_and_ok();
	return check_done();
}
