/* http.h — the broker's HTTP client: delivers one request of a copy to a
 * declared destination with libcurl (paper §VI "Broker", A3 "the broker
 * delivers each request to its named destination only (no redirects)",
 * Table III "Destinations: URL host name, compared literally; redirects not
 * followed"). docs/gl-run.md describes what a tool sees.
 *
 * The URL is parsed once with curl_url(); its host is lowercased and written
 * back into the same handle, which is then given to curl (CURLOPT_CURLU),
 * so the host the broker compares with the declared destinations is the
 * host curl connects to. No second parser ever sees the URL string.
 *
 * Delivery: schemes http and https only (https verified: the peer's chain
 * against the system store and the policy's ca_file, its name against
 * the URL's host, so no certificate widens what is declared); redirects
 * never followed (a 3xx is
 * the destination's reply); proxy variables ignored; a policy route becomes
 * CURLOPT_CONNECT_TO so the Host header stays the tool's; a timeout of the
 * lesser of 10 s and the copy's remaining budget; a capped response body;
 * response headers kept as [name, value] pairs in order. */
#ifndef GL_HTTP_H
#define GL_HTTP_H

#include <curl/curl.h>
#include <jv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json/msg.h"

#define GL_HTTP_BODY_MAX (16u << 20)   /* bytes of a response body */
#define GL_HTTP_HEADERS_MAX 256        /* response header lines */
#define GL_HTTP_TIMEOUT_MS 10000       /* per request, before the budget */

/* One request of a copy, its URL parsed once. */
struct gl_http_req {
	CURLU *url;     /* owned; the handle curl connects with */
	char *host;     /* owned; lowercase, IPv6 without brackets: what is compared */
	char *norm_url; /* owned; the URL as curl re-serialises it (digest input) */
	bool http;      /* scheme is http or https */
	const struct gl_msg *msg; /* borrowed: method, headers, body */
	bool host_header_conflict; /* a Host header naming another host */
	unsigned char digest[32];  /* see gl_http_digest */
};

/* Parse msg's URL (msg borrowed; it must outlive req). 0, or -1 with f
 * (bad_destination) when curl's URL API refuses it or the host is no host
 * name (gl_host_ok after lowercasing). On success the digest is computed
 * too. */
int gl_http_req_init(struct gl_http_req *req, const struct gl_msg *msg, struct gl_fail *f);
void gl_http_req_free(struct gl_http_req *req);

/* The request digest the tripwire compares (Algorithm 1 lines 19–20):
 * SHA-256 over length-prefixed fields
 *   method | normalised URL | header count | (lowercased name | value)… | body
 * each field as an 8-byte big-endian length then its bytes. The headers are
 * those the broker forwards (all the tool's, in its order, except Host,
 * Content-Length, Transfer-Encoding and Connection, which curl sets), so
 * two requests with the same digest put the same bytes on the wire. */
void gl_http_digest(struct gl_http_req *req);

/* The reply, as the copy receives it. */
struct gl_http_reply {
	long status;
	jv headers;          /* owned: [[name, value]…] in order */
	struct gl_buf body;  /* owned */
};

enum gl_http_status {
	GL_HTTP_OK,          /* a reply (any status, 3xx included) */
	GL_HTTP_FAILED,      /* no reply: connection refused, DNS, TLS, timeout */
	GL_HTTP_TOO_BIG,     /* the body exceeded GL_HTTP_BODY_MAX */
	GL_HTTP_NO_TIME,     /* the copy's budget ran out before or during it */
};

struct gl_subst;
/* Deliver req. route is "addr:port" from the policy or NULL; sub is what
 * the operator's secrets make of the request on the wire (secrets.h), or
 * NULL: the request as the copy sent it; ca is the policy's ca_file (PEM,
 * trusted for TLS besides the system's certificates; NULL or empty: the
 * system's alone); deadline is
 * the copy's absolute budget (gl_mono_ns scale). On GL_HTTP_OK *out is
 * filled (free with gl_http_reply_free); otherwise f says why (the status
 * is what the broker acts on; f's code is deadline for GL_HTTP_NO_TIME,
 * oversized for GL_HTTP_TOO_BIG, fetch for GL_HTTP_FAILED). */
enum gl_http_status gl_http_deliver(struct gl_http_req *req, const char *route,
				    const struct gl_subst *sub, const struct gl_buf *ca,
				    int64_t deadline, struct gl_http_reply *out, struct gl_fail *f);
void gl_http_reply_free(struct gl_http_reply *r);

/* curl_global_init once per process (not thread-safe; call from main). If it
 * fails, every later delivery fails (GL_HTTP_FAILED): closed, not a crash. */
void gl_http_global_init(void);

#endif
