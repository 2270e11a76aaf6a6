/* pgauth.h — the broker's side of a PostgreSQL connection's authentication
 * (docs/streams.md "Passwords"): the copy's client sends its
 * StartupMessage and no password; the broker answers the server's
 * SCRAM-SHA-256 exchange (RFC 5802, RFC 7677; PostgreSQL's protocol 3.0
 * "SASL Authentication") with the operator's secret, and the copy's
 * client is shown what follows AuthenticationOk. The value never passes
 * through a copy, and SCRAM never sends it: only a proof that the server
 * checks, and the server proves in turn that it knows the verifier.
 *
 * Both parsers here read hostile bytes: the copy's (its startup) and the
 * destination's (every message until AuthenticationOk). Neither does I/O,
 * so fuzz/pgauth.c drives them with any bytes; every length is checked
 * before use, and the bytes either may make the broker keep are bounded
 * (GL_PG_STARTUP_MAX, GL_PG_AUTH_MSG_MAX, GL_PG_AUTH_MSGS_MAX). */
#ifndef GL_PGAUTH_H
#define GL_PGAUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

#define GL_PG_STARTUP_MAX 10000   /* a StartupMessage's length, as PostgreSQL's own bound */
#define GL_PG_AUTH_MSG_MAX 8192   /* one server message before AuthenticationOk */
#define GL_PG_AUTH_MSGS_MAX 16    /* server messages before AuthenticationOk */
#define GL_PG_SCRAM_ITER_MAX 100000 /* PBKDF2 rounds the broker computes */

/* What the copy's first bytes on a connection are. */
enum gl_pg_startup {
	GL_PG_NEED,    /* not a whole message yet */
	GL_PG_SSL,     /* SSLRequest or GSSENCRequest: answered 'N' by the broker */
	GL_PG_CANCEL,  /* CancelRequest: passed on as it is (no authentication) */
	GL_PG_STARTUP, /* StartupMessage of protocol 3: the broker authenticates */
	GL_PG_BAD,     /* anything else: the connection is closed */
};

/* The kind of the message at the start of p[0..n), and its length in
 * *len (for every kind but GL_PG_NEED and GL_PG_BAD). */
enum gl_pg_startup gl_pg_startup_kind(const unsigned char *p, size_t n, size_t *len);

enum gl_pgauth_status {
	GL_PGAUTH_MORE, /* send out, then feed the server's next bytes */
	GL_PGAUTH_OK,   /* authenticated: reply holds AuthenticationOk and what followed */
	GL_PGAUTH_FAIL, /* reply holds an ErrorResponse for the copy (the server's or ours) */
};

struct gl_pgauth {
	const char *password;
	size_t plen;
	char cnonce[33];         /* base64 of 24 random bytes */
	struct gl_buf in;        /* the server's bytes not yet read */
	struct gl_buf auth_msg;  /* RFC 5802's AuthMessage, once known */
	unsigned char server_key[32];
	int state;               /* what the next 'R' may be (pgauth.c) */
	unsigned msgs;
};

/* Start an exchange with password (borrowed, printable ASCII). */
void gl_pgauth_init(struct gl_pgauth *a, const char *password);
void gl_pgauth_free(struct gl_pgauth *a);

/* The server's bytes p[0..n): what to send it is appended to out, what the
 * copy is shown to reply. */
enum gl_pgauth_status gl_pgauth_feed(struct gl_pgauth *a, const void *p, size_t n,
				     struct gl_buf *out, struct gl_buf *reply);

/* An ErrorResponse (FATAL, SQLSTATE 28000) with message "germline: <msg>". */
void gl_pg_error(struct gl_buf *out, const char *msg);

#endif
