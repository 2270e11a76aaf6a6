/* secrets.c — placeholders out, values in; values out of replies
 * (secrets.h; docs/secrets.md). */
#define _GNU_SOURCE
#include "broker/secrets.h"

#include <string.h>
#include <strings.h>

#include "core/util.h"

/* Test build only: every secret bound to every host, the mechanism this
 * file exists for switched off (tests/secrets.bats). */
static bool bound(const struct gl_secret *s, const char *host)
{
	return gl_secret_binds(s, host) || GL_TEST_SWITCH("GL_TEST_SECRETS_EVERYWHERE");
}

/* p[0..n) with every from replaced by to, appended to out; the count.
 * *room is what out may still grow by; past it *over is set. */
static size_t replace(struct gl_buf *out, const char *p, size_t n, const char *from, size_t fl,
		      const char *to, size_t tl, size_t *room, bool *over)
{
	size_t count = 0;
	const char *end = p + n;
	while (p < end) {
		const char *hit = memmem(p, (size_t)(end - p), from, fl);
		size_t keep = hit ? (size_t)(hit - p) : (size_t)(end - p);
		gl_buf_add(out, p, keep);
		if (!hit)
			break;
		if (tl > fl) {
			if (tl - fl > *room) {
				*over = true;
				return count;
			}
			*room -= tl - fl;
		}
		gl_buf_add(out, to, tl);
		count++;
		p = hit + fl;
	}
	return count;
}

/* p[0..n) with each pair's from replaced by its to, pair after pair: an
 * owned text (*len its length), or NULL when none occurred (or *over).
 * *used counts the replacements. */
static char *replace_pairs(const struct gl_secret_form *w, size_t nw, const char *p, size_t n,
			   size_t *len, size_t *room, bool *over, size_t *used)
{
	struct gl_buf cur = {0};
	bool changed = false;
	for (size_t i = 0; i < nw && !*over; i++) {
		struct gl_buf next = {0};
		size_t k = replace(&next, changed ? cur.data : p, changed ? cur.len : n, w[i].from,
				   w[i].len, w[i].to, strlen(w[i].to), room, over);
		if (k && !*over) {
			gl_buf_free(&cur);
			cur = next;
			changed = true;
			*used += k;
		} else {
			gl_buf_free(&next);
		}
	}
	if (!changed || *over) {
		gl_buf_free(&cur);
		return NULL;
	}
	gl_buf_addc(&cur, 0);
	*len = cur.len - 1;
	return cur.data;
}

/* One text with every secret that applies to it substituted: an owned
 * copy (*len its length), or NULL when nothing changed. ok(s) says
 * whether secret s applies; url: the value percent-encoded. */
static char *subst_text(const struct gl_config *cfg, const char *host, const char *p, size_t n,
			bool (*ok)(const struct gl_secret *, const void *), const void *arg,
			bool url, size_t *len, size_t *room, bool *over, size_t *used)
{
	struct gl_secret_form w[GL_CONFIG_SECRETS_MAX];
	size_t nw = 0;
	for (size_t i = 0; i < cfg->nsecret && nw < GL_CONFIG_SECRETS_MAX; i++) {
		const struct gl_secret *s = &cfg->secret[i];
		if (s->value && bound(s, host) && ok(s, arg))
			w[nw++] = (struct gl_secret_form){s->placeholder, url ? s->in_url : s->value,
						strlen(s->placeholder)};
	}
	return replace_pairs(w, nw, p, n, len, room, over, used);
}

static bool in_url(const struct gl_secret *s, const void *arg)
{
	(void)arg;
	return s->in & GL_SECRET_IN_URL;
}
static bool in_body(const struct gl_secret *s, const void *arg)
{
	(void)arg;
	return s->in & GL_SECRET_IN_BODY;
}
static bool in_header(const struct gl_secret *s, const void *name)
{
	return gl_secret_in_header(s, name);
}

/* The URL's path and query with their values (percent-encoded). */
static int subst_url(const struct gl_config *cfg, const struct gl_http_req *req,
		     struct gl_subst *s, size_t *room, bool *over, struct gl_fail *f)
{
	static const CURLUPart parts[] = {CURLUPART_PATH, CURLUPART_QUERY};
	for (size_t i = 0; i < 2; i++) {
		char *part = NULL;
		if (curl_url_get(req->url, parts[i], &part, 0) != CURLUE_OK || !part)
			continue;
		size_t len;
		autofree char *out = subst_text(cfg, req->host, part, strlen(part), in_url, NULL,
						true, &len, room, over, &s->used);
		curl_free(part);
		if (!out)
			continue;
		if (!s->url)
			s->url = curl_url_dup(req->url);
		if (!s->url || curl_url_set(s->url, parts[i], out, 0) != CURLUE_OK)
			return gl_fail(f, GL_E_OVERSIZED, "the URL with a secret in it is refused");
	}
	return 0;
}

int gl_secrets_apply(const struct gl_config *cfg, const struct gl_http_req *req,
		     struct gl_subst *s, struct gl_fail *f)
{
	const struct gl_msg *m = req->msg;
	memset(s, 0, sizeof *s);
	if (!cfg || !cfg->nsecret)
		return 0;
	s->header = gl_xcalloc(m->nheader + 1, sizeof *s->header);
	s->nheader = m->nheader;
	bool any = false; /* a host no secret is bound to: nothing to scan or copy */
	for (size_t i = 0; i < cfg->nsecret; i++)
		any |= cfg->secret[i].value && bound(&cfg->secret[i], req->host);
	if (!any)
		return 0;
	size_t room = GL_SECRETS_GROWTH_MAX, len;
	bool over = false;
	if (subst_url(cfg, req, s, &room, &over, f) < 0)
		return -1;
	for (size_t i = 0; i < m->nheader && !over; i++)
		s->header[i] = subst_text(cfg, req->host, m->header[i].value,
					  strlen(m->header[i].value), in_header, m->header[i].name,
					  false, &len, &room, &over, &s->used);
	if (!over && m->body_len)
		s->body = (unsigned char *)subst_text(cfg, req->host, (const char *)m->body,
						      m->body_len, in_body, NULL, false,
						      &s->body_len, &room, &over, &s->used);
	if (over)
		return gl_fail(f, GL_E_OVERSIZED, "putting secrets in the request would add more "
			       "than %u bytes", GL_SECRETS_GROWTH_MAX);
	return 0;
}

void gl_subst_free(struct gl_subst *s)
{
	for (size_t i = 0; s->header && i < s->nheader; i++)
		free(s->header[i]);
	free(s->header);
	free(s->body);
	if (s->url)
		curl_url_cleanup(s->url);
	memset(s, 0, sizeof *s);
}

static int redact_headers(const struct gl_secret_form *w, size_t nw, struct gl_http_reply *rep,
			  bool carried, size_t *room, bool *over, struct gl_fail *f)
{
	jv out = jv_array();
	int r = 0;
	jv_array_foreach(rep->headers, i, pair)
	{
		jv name = jv_array_get(jv_copy(pair), 0), value = jv_array_get(jv_copy(pair), 1);
		const char *v = jv_string_value(value);
		if (carried && r == 0 && !strcasecmp(jv_string_value(name), "content-encoding") &&
		    strcasecmp(v, "identity") && *v)
			r = gl_fail(f, GL_E_FETCH, "the reply to a request carrying a secret is "
				    "encoded (%s): the secret could not be kept out of it",
				    v);
		size_t len, used = 0;
		autofree char *red = replace_pairs(w, nw, v, strlen(v), &len, room, over, &used);
		out = jv_array_append(out, JV_ARRAY(name, red ? jv_string(red) : value));
		if (red)
			jv_free(value);
		jv_free(pair);
	}
	jv_free(rep->headers);
	rep->headers = out;
	return r;
}

int gl_secrets_redact(const struct gl_config *cfg, struct gl_http_reply *rep, bool carried,
		      struct gl_fail *f)
{
	if (!cfg || !cfg->nsecret || GL_TEST_SWITCH("GL_TEST_SECRETS_NO_REDACT"))
		return 0;
	const struct gl_secret_form *w = cfg->forms;
	size_t nw = cfg->nforms;
	size_t room = GL_HTTP_BODY_MAX > rep->body.len ? GL_HTTP_BODY_MAX - rep->body.len : 0;
	bool over = false;
	if (redact_headers(w, nw, rep, carried, &room, &over, f) < 0)
		return -1;
	size_t len, used = 0;
	char *body = replace_pairs(w, nw, rep->body.data ? rep->body.data : "", rep->body.len, &len,
				   &room, &over, &used);
	if (body) {
		gl_buf_free(&rep->body);
		rep->body = (struct gl_buf){body, len, len + 1};
	}
	if (over)
		return gl_fail(f, GL_E_OVERSIZED, "the reply with its secrets taken out would pass "
			       "%u bytes", GL_HTTP_BODY_MAX);
	return 0;
}
