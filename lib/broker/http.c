/* http.c — delivering a copy's request with libcurl; see http.h. */
#define _GNU_SOURCE
#include "broker/http.h"
#include "broker/secrets.h"

#include <ctype.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "core/sha.h"
#include "release/manifest.h"
#include "core/util.h"

/* Set when libcurl's global initialisation failed: no request is then
 * delivered (each fails closed, GL_HTTP_FAILED), rather than the broker
 * dying with the copies it serves. */
static bool curl_unusable;

void gl_http_global_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		curl_unusable = true;
		gl_warn("libcurl: global initialisation failed; no request will be delivered");
	}
}

/* Headers curl writes itself from the request it sends; a tool's copy of
 * them is dropped (and left out of the digest). */
static bool hop_header(const char *name)
{
	static const char *const own[] = {"host", "content-length", "transfer-encoding",
					  "connection"};
	for (size_t i = 0; i < sizeof own / sizeof *own; i++)
		if (!strcasecmp(name, own[i]))
			return true;
	return false;
}

/* A Host header value names req->host (optionally with a port)? */
static bool host_header_matches(const char *value, const char *host)
{
	size_t hl = strlen(host);
	const char *v = value;
	bool v6 = *v == '[';
	if (v6)
		v++;
	if (strncasecmp(v, host, hl))
		return false;
	v += hl;
	if (v6 && *v++ != ']')
		return false;
	if (*v == 0)
		return true;
	if (*v++ != ':' || !*v)
		return false;
	return strspn(v, "0123456789") == strlen(v);
}

static void put_field(struct gl_sha256 *st, const void *p, size_t n)
{
	unsigned char len[8];
	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
	gl_sha256_update(st, len, 8);
	gl_sha256_update(st, p, n);
}

void gl_http_digest(struct gl_http_req *req)
{
	const struct gl_msg *m = req->msg;
	struct gl_sha256 st;
	gl_sha256_init(&st);
	put_field(&st, m->method, strlen(m->method));
	put_field(&st, req->norm_url, strlen(req->norm_url));
	size_t n = 0;
	for (size_t i = 0; i < m->nheader; i++)
		n += !hop_header(m->header[i].name);
	unsigned char cnt[8];
	for (int i = 0; i < 8; i++)
		cnt[i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
	gl_sha256_update(&st, cnt, 8);
	for (size_t i = 0; i < m->nheader; i++) {
		const char *name = m->header[i].name;
		if (hop_header(name))
			continue;
		autofree char *lower = gl_xstrdup(name);
		for (char *c = lower; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		put_field(&st, lower, strlen(lower));
		put_field(&st, m->header[i].value, strlen(m->header[i].value));
	}
	put_field(&st, m->body ? m->body : (const unsigned char *)"", m->body_len);
	gl_sha256_final(&st, req->digest);
}

int gl_http_req_init(struct gl_http_req *req, const struct gl_msg *msg, struct gl_fail *f)
{
	memset(req, 0, sizeof *req);
	req->msg = msg;
	req->url = curl_url();
	if (!req->url)
		gl_die(GL_EXIT_USAGE, "out of memory");
	/* No default scheme, no guessing: the tool names a whole URL. */
	CURLUcode uc = curl_url_set(req->url, CURLUPART_URL, msg->url, 0);
	if (uc != CURLUE_OK)
		return gl_fail(f, GL_E_BAD_DESTINATION, "URL refused by curl: %s", curl_url_strerror(uc));
	char *scheme = NULL, *host = NULL, *zone = NULL;
	if (curl_url_get(req->url, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(req->url, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		curl_free(scheme);
		return gl_fail(f, GL_E_BAD_DESTINATION, "URL has no scheme or host");
	}
	req->http = !strcmp(scheme, "http") || !strcmp(scheme, "https");
	curl_free(scheme);
	bool zoned = curl_url_get(req->url, CURLUPART_ZONEID, &zone, 0) == CURLUE_OK;
	curl_free(zone);
	/* Lowercase the host and write it back, so curl connects to exactly
	 * the string compared (DNS names are case-insensitive). */
	for (char *c = host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	uc = curl_url_set(req->url, CURLUPART_HOST, host, 0);
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']')
		req->host = strndup(host + 1, hl - 2);
	else
		req->host = gl_xstrdup(host);
	curl_free(host);
	if (!req->host)
		gl_die(GL_EXIT_USAGE, "out of memory");
	if (uc != CURLUE_OK || zoned || !gl_host_ok(req->host, strlen(req->host)))
		return gl_fail(f, GL_E_BAD_DESTINATION, "URL host is not a host name or IP literal");
	char *norm = NULL;
	if (curl_url_get(req->url, CURLUPART_URL, &norm, 0) != CURLUE_OK)
		return gl_fail(f, GL_E_BAD_DESTINATION, "URL cannot be re-serialised");
	req->norm_url = gl_xstrdup(norm);
	curl_free(norm);
	for (size_t i = 0; i < msg->nheader; i++)
		if (!strcasecmp(msg->header[i].name, "host") &&
		    !host_header_matches(msg->header[i].value, req->host))
			req->host_header_conflict = true;
	gl_http_digest(req);
	return 0;
}

void gl_http_req_free(struct gl_http_req *req)
{
	if (req->url)
		curl_url_cleanup(req->url);
	free(req->host);
	free(req->norm_url);
	memset(req, 0, sizeof *req);
}

void gl_http_reply_free(struct gl_http_reply *r)
{
	jv_free(r->headers);
	gl_buf_free(&r->body);
	r->headers = jv_invalid();
}

struct sink {
	struct gl_http_reply *out;
	bool too_big;
	int lines;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t len = size * n;
	if (s->out->body.len + len > GL_HTTP_BODY_MAX) {
		s->too_big = true;
		return 0; /* abort the transfer */
	}
	gl_buf_add(&s->out->body, p, len);
	return len;
}

/* One response header line. A status line starts a new header list (an
 * interim 1xx response is replaced by the final one). */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t len = size * n;
	if (len >= 5 && !memcmp(p, "HTTP/", 5)) {
		jv_free(s->out->headers);
		s->out->headers = jv_array();
		return len;
	}
	if (++s->lines > GL_HTTP_HEADERS_MAX)
		return 0;
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
		len--;
	const char *colon = memchr(p, ':', len);
	if (!colon || colon == p)
		return size * n; /* the blank line ending the block, or junk */
	size_t nl = (size_t)(colon - p), vo = nl + 1;
	while (vo < len && (p[vo] == ' ' || p[vo] == '\t'))
		vo++;
	autofree char *name = gl_sanitize(p, nl);
	autofree char *value = gl_sanitize(p + vo, len - vo);
	jv pair = JV_ARRAY(jv_string(name), jv_string(value));
	s->out->headers = jv_array_append(s->out->headers, pair);
	return size * n;
}

/* The tool's headers as curl sends them, and no others: curl's defaults
 * (Accept, Expect, Content-Type) disabled where the tool has none. With
 * secrets in the request (sub, lib/broker/secrets.h) their values, and
 * Accept-Encoding identity in place of the tool's, so that the reply is
 * bytes a search for the secrets can see. */
static struct curl_slist *request_headers(const struct gl_msg *m, const struct gl_subst *sub)
{
	struct curl_slist *hdrs = NULL;
	bool have_accept = false, have_ctype = false, have_expect = false;
	bool carried = sub && sub->used;
	for (size_t i = 0; i < m->nheader; i++) {
		const char *name = m->header[i].name, *value = m->header[i].value;
		if (hop_header(name) || (carried && !strcasecmp(name, "accept-encoding")))
			continue;
		if (sub && sub->header && sub->header[i])
			value = sub->header[i];
		have_accept |= !strcasecmp(name, "accept");
		have_ctype |= !strcasecmp(name, "content-type");
		have_expect |= !strcasecmp(name, "expect");
		/* "Name;" sends a header with an empty value (curl's syntax). */
		autofree char *line = *value ? gl_xasprintf("%s: %s", name, value)
					     : gl_xasprintf("%s;", name);
		hdrs = curl_slist_append(hdrs, line);
	}
	if (!have_accept)
		hdrs = curl_slist_append(hdrs, "Accept:");
	if (!have_expect)
		hdrs = curl_slist_append(hdrs, "Expect:");
	if (!have_ctype)
		hdrs = curl_slist_append(hdrs, "Content-Type:");
	if (carried)
		hdrs = curl_slist_append(hdrs, "Accept-Encoding: identity");
	return hdrs;
}

/* The method and body exactly as the tool sent them (its secrets in: sub). */
static void set_method(CURL *h, const struct gl_msg *m, const struct gl_subst *sub)
{
	const unsigned char *body = sub && sub->body ? sub->body : m->body;
	size_t len = sub && sub->body ? sub->body_len : m->body_len;
	if (!strcmp(m->method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(m->method, "GET") && m->body_len == 0) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m->method);
	}
}

/* TLS verified: the chain against the system's certificates and ca (the
 * policy's ca_file, in place of the default bundle file; the default CA
 * directory, Debian's /etc/ssl/certs, stays, so the system's roots still
 * count), the name against the URL's host. */
static void set_tls(CURL *h, const struct gl_buf *ca)
{
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca && ca->len) {
		struct curl_blob blob = {ca->data, ca->len, CURL_BLOB_NOCOPY};
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
}

enum gl_http_status gl_http_deliver(struct gl_http_req *req, const char *route,
				    const struct gl_subst *sub, const struct gl_buf *ca,
				    int64_t deadline, struct gl_http_reply *out, struct gl_fail *f)
{
	memset(out, 0, sizeof *out);
	out->headers = jv_invalid();
	int64_t left_ms = (deadline - gl_mono_ns()) / 1000000;
	if (left_ms <= 0) {
		gl_fail_set(f, GL_E_DEADLINE, "the copy's budget is spent");
		return GL_HTTP_NO_TIME;
	}
	out->headers = jv_array();
	long timeout = left_ms < GL_HTTP_TIMEOUT_MS ? (long)left_ms : GL_HTTP_TIMEOUT_MS;
	const struct gl_msg *m = req->msg;
	CURL *h = curl_unusable ? NULL : curl_easy_init();
	if (!h) {
		gl_fail_set(f, GL_E_FETCH, "libcurl: cannot create a handle");
		gl_http_reply_free(out);
		return GL_HTTP_FAILED;
	}
	struct curl_slist *hdrs = request_headers(m, sub), *connect_to = NULL;
	if (route) {
		/* "HOST:PORT:ADDR:PORT" with an empty PORT: any port of this host. */
		bool v6 = strchr(req->host, ':') != NULL;
		autofree char *ct = gl_xasprintf(v6 ? "[%s]::%s" : "%s::%s", req->host, route);
		connect_to = curl_slist_append(connect_to, ct);
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to);
	}
	struct sink s = {.out = out};
	curl_easy_setopt(h, CURLOPT_CURLU, sub && sub->url ? sub->url : req->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	set_tls(h, ca);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)GL_HTTP_BODY_MAX);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL); /* bytes as sent */
	curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
	curl_easy_setopt(h, CURLOPT_HTTP_TRANSFER_DECODING, 1L);
	set_method(h, m, sub);
	char ebuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	CURLcode rc = curl_easy_perform(h);
	enum gl_http_status st = GL_HTTP_OK;
	if (s.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		gl_fail_set(f, GL_E_OVERSIZED, "response body larger than %u bytes",
			    GL_HTTP_BODY_MAX);
		st = GL_HTTP_TOO_BIG;
	} else if (rc == CURLE_OPERATION_TIMEDOUT && timeout < GL_HTTP_TIMEOUT_MS) {
		/* The copy's budget, not the per-request cap, ended the wait. */
		gl_fail_set(f, GL_E_DEADLINE, "the copy's budget ran out during the request");
		st = GL_HTTP_NO_TIME;
	} else if (rc != CURLE_OK) {
		gl_fail_set(f, GL_E_FETCH, "%s", *ebuf ? ebuf : curl_easy_strerror(rc));
		st = GL_HTTP_FAILED;
	} else {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
	}
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(connect_to);
	if (st != GL_HTTP_OK)
		gl_http_reply_free(out);
	return st;
}
