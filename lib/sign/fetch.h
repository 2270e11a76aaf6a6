/* fetch.h — the TUF repository transport: GET one file of a repository over
 * HTTP(S) with libcurl (issue 16, SPEC §3 "REPO is a directory or an http://
 * / https:// URL ... no redirects to another host, each file's length capped
 * before it is read").
 *
 * This is not the broker's client (lib/broker/http.c delivers a copy's requests);
 * it is the host's own client for metadata and archives, all of whose bytes
 * come from the adversary's mirror (paper §III: the adversary writes the
 * release and may serve it). Everything is bounded and fails closed:
 *
 *   - schemes http and https only (the URL and every redirect target);
 *     https verifies the peer's certificate and host name against the
 *     system's store (curl's default CA bundle);
 *   - a length cap per file: a Content-Length above the cap is refused before
 *     the body is read (CURLOPT_MAXFILESIZE), and a body that keeps coming is
 *     refused when byte cap+1 arrives (the write callback stops the transfer)
 *     — refusal `length`;
 *   - one total time bound for the whole fetch, redirects included — refusal
 *     `fetch` "timed out";
 *   - redirects: followed only within the same origin (scheme, host and
 *     port, compared after curl's own normalisation), at most
 *     GL_FETCH_REDIRECTS_MAX times; a redirect to another origin is refused
 *     `fetch` naming both URLs (a downgrade from https to http is another
 *     origin);
 *   - no proxy from the environment (http_proxy, ALL_PROXY, … are ignored):
 *     a proxy is used only when the caller names one or GL_PROXY is set;
 *   - an HTTP status other than 200 is refused `fetch` naming the URL and
 *     the status, and its body is not read. 403, 404 and 410 also set
 *     info->missing, which TUF's root-chain walk needs (specification
 *     §5.3.3: it stops at the first N+1.root.json that is not there; a
 *     static bucket answers 403 for a missing object, and python-tuf's
 *     client treats 403 and 404 alike);
 *   - the bytes as served: no content decoding (a gzip Content-Encoding is
 *     not undone, so the length and hashes are of what the server sent).
 */
#ifndef GL_FETCH_H
#define GL_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json/refusal.h"
#include "core/util.h"

#define GL_FETCH_REDIRECTS_MAX 3
#define GL_FETCH_TIMEOUT_MS 60000 /* a caller's usual total bound */

/* What happened (filled whether the fetch succeeded or not). */
struct gl_fetch_info {
	long status;        /* the last HTTP status, 0 if none arrived */
	bool missing;       /* status 403, 404 or 410: the file is not there */
	size_t len;         /* body bytes received (and delivered) */
	unsigned redirects; /* same-origin redirects followed */
};

/* An absolute deadline ms milliseconds from now, on CLOCK_MONOTONIC in
 * milliseconds (the scale of every deadline_ms below). */
int64_t gl_fetch_deadline(int64_t ms);

/* Set the proxy for every later fetch of this process (NULL: none; the
 * default is $GL_PROXY if set and non-empty). A copy of s is kept. */
void gl_fetch_set_proxy(const char *s);

/* GET url into *out (appended to; NUL-terminated, not counted), at most
 * max_len bytes, before deadline_ms. GL_E_OK, or GL_E_LENGTH / GL_E_FETCH
 * with f set; info may be NULL. */
enum gl_code gl_fetch_bytes(const char *url, size_t max_len, int64_t deadline_ms,
			       struct gl_buf *out, struct gl_fetch_info *info,
			       struct gl_fail *f);

/* The same, streaming the body into fd (for archives of tens of MB). On a
 * refusal fd may hold a prefix of the body: the caller discards the file.
 * A write error on fd is GL_E_IO. */
enum gl_code gl_fetch_fd(const char *url, size_t max_len, int64_t deadline_ms, int fd,
			    struct gl_fetch_info *info, struct gl_fail *f);

/* Is url an http:// or https:// URL (what gl-verify treats as a remote
 * repository rather than a directory)? Only the scheme is looked at. */
bool gl_fetch_is_url(const char *s);

#endif
