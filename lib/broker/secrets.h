/* secrets.h — the operator's secrets on the wire (SPEC §4 "config";
 * lib/release/config.h; docs/secrets.md). A secret never enters a germline
 * or a copy: they hold the placeholder GERMLINE_SECRET_NAME. The broker
 * puts the value in that text's place only here, in the bytes it sends to
 * a host of the secret's "to" (after the tripwire compared the copies'
 * requests as they sent them: Algorithm 1 lines 14–20 see placeholders
 * only), and takes every secret's value out of every reply before a copy
 * or a record sees it. So a release that sends its environment or memory
 * to another declared destination sends the placeholder, and a bound
 * destination that echoes a request back echoes the placeholder.
 *
 * Bounds: the bytes a substitution adds to a request are at most
 * GL_SECRETS_GROWTH_MAX, and a redacted reply body at most
 * GL_HTTP_BODY_MAX, whatever a copy or a destination sends; past either
 * the exchange is refused (the copy gets a 502), never truncated. */
#ifndef GL_SECRETS_H
#define GL_SECRETS_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "broker/http.h"
#include "release/config.h"

#define GL_SECRETS_GROWTH_MAX (1u << 20)

/* What one request becomes on the wire. */
struct gl_subst {
	char **header;       /* per request header: its value with secrets (owned), or NULL */
	size_t nheader;
	unsigned char *body; /* the body with secrets (owned), or NULL: the copy's */
	size_t body_len;
	CURLU *url;          /* the URL with secrets in path and query (owned), or NULL */
	size_t used;         /* placeholders replaced */
};

/* The secrets of cfg (NULL: none) bound to req->host, in req as their
 * "in" allows, into *s (free with gl_subst_free, whatever the result).
 * 0, or -1 with f (oversized) when the request would grow past
 * GL_SECRETS_GROWTH_MAX or a URL with a value is refused by curl. */
int gl_secrets_apply(const struct gl_config *cfg, const struct gl_http_req *req,
		     struct gl_subst *s, struct gl_fail *f);
void gl_subst_free(struct gl_subst *s);

/* Every secret value of cfg in rep's body and header values replaced by
 * its placeholder (the longest values first). carried: the request held
 * a secret, so a body whose Content-Encoding is not identity (which no
 * search can see into) is refused. 0, or -1 with f (oversized, fetch). */
int gl_secrets_redact(const struct gl_config *cfg, struct gl_http_reply *rep, bool carried,
		      struct gl_fail *f);

#endif
