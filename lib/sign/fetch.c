/* fetch.c — the TUF repository transport over HTTP(S); see fetch.h. */
#define _GNU_SOURCE
#include "sign/fetch.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static char *proxy;
static bool proxy_chosen;

int64_t gl_fetch_deadline(int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + ms;
}

void gl_fetch_set_proxy(const char *s)
{
	free(proxy);
	proxy = s && *s ? gl_xstrdup(s) : NULL;
	proxy_chosen = true;
}

static const char *the_proxy(void)
{
	if (!proxy_chosen) {
		const char *e = getenv("GL_PROXY");
		gl_fetch_set_proxy(e);
	}
	return proxy;
}

bool gl_fetch_is_url(const char *s)
{
	return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

static int global_init(struct gl_fail *f)
{
	static bool done;
	if (done)
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return gl_fail(f, GL_E_IO, "libcurl: global initialisation failed");
	done = true;
	return 0;
}

/* "scheme://host:port" of url (host lowercased, default port filled in), or
 * NULL if curl cannot parse it or the scheme is not http/https. */
static char *origin_of(const char *url)
{
	CURLU *u = curl_url();
	if (!u)
		gl_die(GL_EXIT_USAGE, "out of memory");
	char *scheme = NULL, *host = NULL, *port = NULL, *o = NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
	    (!strcmp(scheme, "http") || !strcmp(scheme, "https"))) {
		for (char *c = host; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		o = gl_xasprintf("%s://%s:%s", scheme, host, port);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return o;
}

/* Where the body goes, and what the write callback saw. */
struct sink {
	CURL *h;
	struct gl_buf *buf; /* or */
	int fd;
	size_t max, got;
	bool over, not_200, write_failed;
	int write_errno;
	char location[2048]; /* the last response's Location ("" if none or too long) */
	long long content_length; /* the last response's, -1 if none */
};

/* Header lines of each response (a redirect's included): keep Location and
 * Content-Length of the latest one, bounded. */
static size_t on_header(char *p, size_t sz, size_t nm, void *ud)
{
	struct sink *s = ud;
	size_t n = sz * nm, k;
	if (n >= 5 && !strncmp(p, "HTTP/", 5)) { /* a new response */
		s->location[0] = 0;
		s->content_length = -1;
		return n;
	}
	size_t v = n;
	while (v > 0 && (p[v - 1] == '\n' || p[v - 1] == '\r'))
		v--;
	if (v > 9 && !strncasecmp(p, "location:", 9)) {
		for (k = 9; k < v && (p[k] == ' ' || p[k] == '\t'); k++)
			;
		if (v - k < sizeof s->location) {
			memcpy(s->location, p + k, v - k);
			s->location[v - k] = 0;
		} else {
			s->location[0] = 0;
		}
	} else if (v > 15 && !strncasecmp(p, "content-length:", 15)) {
		s->content_length = strtoll(p + 15, NULL, 10);
	}
	return n;
}

/* Location resolved against base (a relative reference is allowed), or NULL. */
static char *resolve(const char *base, const char *loc)
{
	CURLU *u = curl_url();
	if (!u)
		gl_die(GL_EXIT_USAGE, "out of memory");
	char *out = NULL, *r = NULL;
	if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_URL, loc, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &out, 0) == CURLUE_OK)
		r = gl_xstrdup(out);
	curl_free(out);
	curl_url_cleanup(u);
	return r;
}

static size_t on_body(char *p, size_t sz, size_t nm, void *ud)
{
	struct sink *s = ud;
	size_t n = sz * nm;
	long status = 0;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) { /* a redirect's or an error's body: never read */
		s->not_200 = true;
		return 0;
	}
	if (n > s->max - s->got) { /* byte max+1 arrived: stop now */
		s->over = true;
		return 0;
	}
	if (s->buf) {
		gl_buf_add(s->buf, p, n);
	} else if (gl_write_all(s->fd, p, n) < 0) {
		s->write_failed = true;
		s->write_errno = errno;
		return 0;
	}
	s->got += n;
	return n;
}

static void set_options(CURL *h, const char *url, struct sink *s, int64_t left, char *ebuf)
{
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* followed here, same origin only */
	const char *px = the_proxy();
	curl_easy_setopt(h, CURLOPT_PROXY, px ? px : ""); /* "": the environment's ignored */
	curl_easy_setopt(h, CURLOPT_NOPROXY, px ? "" : "*");
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)left);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)left);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "germline/" GL_VERSION);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL); /* the bytes as served */
	curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
	/* A Content-Length over the cap: refused before the body. */
	if (s->max < (size_t)INT64_MAX)
		curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s->max);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
}

static bool is_redirect(long st)
{
	return st == 301 || st == 302 || st == 303 || st == 307 || st == 308;
}

/* One GET of url; on a same-origin redirect *next is set (malloc'd) and
 * GL_E_OK returned with the body empty. */
static enum gl_code get_once(const char *url, struct sink *s, int64_t deadline_ms,
				struct gl_fetch_info *info, char **next, struct gl_fail *f)
{
	int64_t left = deadline_ms - gl_fetch_deadline(0);
	if (left <= 0)
		return gl_fail_set(f, GL_E_FETCH, "%s: timed out", url);
	CURL *h = curl_easy_init();
	if (!h)
		return gl_fail_set(f, GL_E_IO, "libcurl: cannot create a handle");
	char ebuf[CURL_ERROR_SIZE] = "";
	s->h = h;
	s->location[0] = 0;
	s->content_length = -1;
	set_options(h, url, s, left, ebuf);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &info->status);
	info->missing = info->status == 403 || info->status == 404 || info->status == 410;
	info->len = s->got;
	enum gl_code r = GL_E_OK;
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		r = gl_fail_set(f, GL_E_FETCH, "%s: timed out", url);
	} else if (rc == CURLE_FILESIZE_EXCEEDED) {
		r = gl_fail_set(f, GL_E_LENGTH, "%s: Content-Length %lld is over the cap of %zu bytes",
				url, s->content_length, s->max);
	} else if (s->over) {
		r = gl_fail_set(f, GL_E_LENGTH, "%s: more than the cap of %zu bytes", url, s->max);
	} else if (s->write_failed) {
		r = gl_fail_set(f, GL_E_IO, "%s: writing the body: %s", url, strerror(s->write_errno));
	} else if (rc != CURLE_OK && !s->not_200) {
		r = gl_fail_set(f, GL_E_FETCH, "%s: %s", url, *ebuf ? ebuf : curl_easy_strerror(rc));
	} else if (is_redirect(info->status)) {
		if (!*s->location || !(*next = resolve(url, s->location)))
			r = gl_fail_set(f, GL_E_FETCH, "%s: HTTP status %ld without a usable Location",
					url, info->status);
	} else if (info->status != 200) {
		r = gl_fail_set(f, GL_E_FETCH, "%s: HTTP status %ld", url, info->status);
	}
	curl_easy_cleanup(h);
	return r;
}

/* The loop over same-origin redirects (fetch.h). */
static enum gl_code fetch(const char *url, struct sink *s, int64_t deadline_ms,
			     struct gl_fetch_info *info, struct gl_fail *f)
{
	if (global_init(f) < 0)
		return f->code;
	struct gl_fetch_info dummy;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof *info);
	autofree char *origin = origin_of(url);
	if (!origin)
		return gl_fail_set(f, GL_E_FETCH, "%s: not an http:// or https:// URL", url);
	autofree char *cur = gl_xstrdup(url);
	for (;;) {
		char *next = NULL;
		enum gl_code r = get_once(cur, s, deadline_ms, info, &next, f);
		if (r != GL_E_OK || !next)
			return r;
		autofree char *to = next;
		autofree char *o = origin_of(to);
		if (!o || strcmp(o, origin))
			return gl_fail_set(f, GL_E_FETCH,
					   "%s: redirected to %s, another host (redirects are "
					   "followed within %s only)",
					   cur, to, origin);
		if (info->redirects == GL_FETCH_REDIRECTS_MAX)
			return gl_fail_set(f, GL_E_FETCH, "%s: more than %d redirects", url,
					   GL_FETCH_REDIRECTS_MAX);
		info->redirects++;
		s->not_200 = false;
		free(cur);
		cur = steal_pointer(&to);
	}
}

enum gl_code gl_fetch_bytes(const char *url, size_t max_len, int64_t deadline_ms,
			       struct gl_buf *out, struct gl_fetch_info *info, struct gl_fail *f)
{
	size_t start = out->len;
	struct sink s = {.buf = out, .fd = -1, .max = max_len};
	enum gl_code r = fetch(url, &s, deadline_ms, info, f);
	if (r != GL_E_OK)
		out->len = start;
	gl_buf_reserve(out, 1);
	out->data[out->len] = 0;
	return r;
}

enum gl_code gl_fetch_fd(const char *url, size_t max_len, int64_t deadline_ms, int fd,
			    struct gl_fetch_info *info, struct gl_fail *f)
{
	struct sink s = {.fd = fd, .max = max_len};
	return fetch(url, &s, deadline_ms, info, f);
}
