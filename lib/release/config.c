/* config.c — reading the operator's configuration of a release (config.h;
 * SPEC §4 "config"; docs/secrets.md). Every text is checked before it can
 * reach an argv, an environment or a request header. */
#define _GNU_SOURCE
#include "release/config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/sha.h"
#include "core/util.h"
#include "json/json.h"
#include "release/manifest.h"

static jv strv_json(char *const *v)
{
	jv a = jv_array();
	for (size_t i = 0; v && v[i]; i++)
		a = jv_array_append(a, jv_string(v[i]));
	return a;
}

static bool text_ok(jv v)
{
	return jv_get_kind(v) == JV_KIND_STRING &&
	       jv_string_length_bytes(jv_copy(v)) <= GL_CONFIG_TEXT_MAX &&
	       strlen(jv_string_value(v)) == (size_t)jv_string_length_bytes(jv_copy(v));
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* Variables germline sets itself, or that would change how the germline
 * or its host runs (its thread count is G1's, its interpreter's flags the
 * twin's, its TLS trust the relay's: lib/runtime/exec_tls.h): an
 * operator's value for one is refused, never merged. */
static bool name_reserved(const char *s)
{
	static const char *const exact[] = {"PATH", "HOME", "TMPDIR", "LANG", "NODE_OPTIONS",
					    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
					    "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
					    "VECLIB_MAXIMUM_THREADS", "NODE_EXTRA_CA_CERTS",
					    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
					    "CURL_CA_BUNDLE", NULL};
	static const char *const prefix[] = {"LD_", "PYTHON", "GL_", "GERMLINE_", NULL};
	for (size_t i = 0; exact[i]; i++)
		if (!strcmp(s, exact[i]))
			return true;
	for (size_t i = 0; prefix[i]; i++)
		if (!strncmp(s, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

/* A secret's value: printable ASCII (no byte that could end a header
 * line or be read differently by another parser), long enough that taking
 * it out of replies cannot garble them, never the placeholder prefix. */
static bool value_ok(const char *s, size_t n)
{
	if (n < GL_SECRET_VALUE_MIN || n > GL_CONFIG_TEXT_MAX || strstr(s, GL_SECRET_PREFIX))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

static int args_in(jv o, const char *w, struct gl_config *c, struct gl_fail *f)
{
	jv a = gl_json_get(o, "args");
	int r = 0;
	c->args = gl_xcalloc(1, sizeof *c->args);
	if (!jv_is_valid(a)) {
		jv_free(a);
		return 0;
	}
	if (jv_get_kind(a) != JV_KIND_ARRAY || jv_array_length(jv_copy(a)) > GL_CONFIG_ARGS_MAX) {
		jv_free(a);
		return gl_fail(f, GL_E_USAGE, "%s.args: not an array of at most %d strings", w,
			       GL_CONFIG_ARGS_MAX);
	}
	size_t n = (size_t)jv_array_length(jv_copy(a));
	free(c->args);
	c->args = gl_xcalloc(n + 1, sizeof *c->args);
	for (size_t i = 0; i < n && r == 0; i++) {
		jv s = jv_array_get(jv_copy(a), (int)i);
		if (!text_ok(s))
			r = gl_fail(f, GL_E_USAGE, "%s.args[%zu]: not a string of at most %d bytes "
				    "without NUL", w, i, GL_CONFIG_TEXT_MAX);
		else
			c->args[c->nargs++] = gl_xstrdup(jv_string_value(s));
		jv_free(s);
	}
	jv_free(a);
	return r;
}

static int env_in(jv o, const char *w, struct gl_config *c, struct gl_fail *f)
{
	jv e = gl_json_get(o, "env");
	int r = 0;
	c->env = gl_xcalloc(1, sizeof *c->env);
	if (!jv_is_valid(e)) {
		jv_free(e);
		return 0;
	}
	if (jv_get_kind(e) != JV_KIND_OBJECT || jv_object_length(jv_copy(e)) > GL_CONFIG_ENV_MAX) {
		jv_free(e);
		return gl_fail(f, GL_E_USAGE, "%s.env: not an object of at most %d strings", w,
			       GL_CONFIG_ENV_MAX);
	}
	free(c->env);
	c->env = gl_xcalloc((size_t)jv_object_length(jv_copy(e)) + 1, sizeof *c->env);
	jv_object_foreach(e, k, v)
	{
		const char *ks = jv_string_value(k);
		autofree char *q = gl_quote(ks, strlen(ks));
		if (r == 0 && (!name_ok(ks) || name_reserved(ks)))
			r = gl_fail(f, GL_E_USAGE, "%s.env: %s is not a variable name an operator "
				    "may set ([A-Z_][A-Z0-9_]*, none that germline sets itself)", w, q);
		else if (r == 0 && !text_ok(v))
			r = gl_fail(f, GL_E_USAGE, "%s.env.%s: not a string of at most %d bytes "
				    "without NUL", w, ks, GL_CONFIG_TEXT_MAX);
		else if (r == 0)
			c->env[c->nenv++] = gl_xasprintf("%s=%s", ks, jv_string_value(v));
		jv_free(k);
		jv_free(v);
	}
	jv_free(e);
	return r;
}

/* "to": host names, or host:port stream destinations (only with
 * "auth:…", checked by secret_in). */
static char **hosts_in(jv to, const char *w, struct gl_fail *f)
{
	if (jv_get_kind(to) != JV_KIND_ARRAY || jv_array_length(jv_copy(to)) < 1 ||
	    jv_array_length(jv_copy(to)) > GL_CONFIG_TO_MAX) {
		gl_fail(f, GL_E_USAGE, "%s.to: not an array of 1 to %d destinations", w,
			GL_CONFIG_TO_MAX);
		return NULL;
	}
	size_t n = (size_t)jv_array_length(jv_copy(to));
	char **v = gl_xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		jv h = jv_array_get(jv_copy(to), (int)i);
		bool ok = jv_get_kind(h) == JV_KIND_STRING &&
			  gl_dest_ok(jv_string_value(h), (size_t)jv_string_length_bytes(jv_copy(h)));
		if (ok)
			v[i] = gl_xstrdup(jv_string_value(h));
		jv_free(h);
		if (!ok) {
			gl_strv_free(v);
			gl_fail(f, GL_E_USAGE, "%s.to[%zu]: not a destination as a manifest spells "
				"it (a lowercase host name, or host:port for \"auth:redis\" or "
				"\"auth:postgres\", docs/streams.md)", w, i);
			return NULL;
		}
	}
	return v;
}

/* "in": where the value may go. */
static int where_in(jv in, const char *w, struct gl_secret *s, struct gl_fail *f)
{
	s->header = gl_xcalloc(GL_CONFIG_TO_MAX + 1, sizeof *s->header);
	if (!jv_is_valid(in)) {
		s->in = GL_SECRET_IN_URL | GL_SECRET_IN_HEADERS | GL_SECRET_IN_BODY;
		return 0;
	}
	if (jv_get_kind(in) != JV_KIND_ARRAY || jv_array_length(jv_copy(in)) < 1 ||
	    jv_array_length(jv_copy(in)) > GL_CONFIG_TO_MAX)
		return gl_fail(f, GL_E_USAGE, "%s.in: not an array of 1 to %d of \"url\", "
			       "\"headers\", \"body\", \"header:NAME\"", w, GL_CONFIG_TO_MAX);
	size_t nh = 0;
	bool all_headers = false;
	int r = 0;
	jv_array_foreach(in, i, e)
	{
		const char *t = jv_get_kind(e) == JV_KIND_STRING ? jv_string_value(e) : "";
		if (!strcmp(t, "url")) {
			s->in |= GL_SECRET_IN_URL;
		} else if (!strcmp(t, "headers")) {
			s->in |= GL_SECRET_IN_HEADERS;
			all_headers = true;
		} else if (!strcmp(t, "body")) {
			s->in |= GL_SECRET_IN_BODY;
		} else if (!strncmp(t, "header:", 7) && t[7] && strlen(t) <= 7 + 128 &&
			   !strpbrk(t + 7, ": \t\r\n")) {
			s->in |= GL_SECRET_IN_HEADERS;
			char *h = gl_xstrdup(t + 7);
			for (char *p = h; *p; p++)
				*p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
			s->header[nh++] = h;
		} else if (!strcmp(t, "auth:redis") || !strcmp(t, "auth:postgres")) {
			s->auth = t[5] == 'r' ? GL_SECRET_AUTH_REDIS : GL_SECRET_AUTH_POSTGRES;
		} else if (r == 0) {
			r = gl_fail(f, GL_E_USAGE, "%s.in[%d]: not \"url\", \"headers\", \"body\", "
				    "\"header:NAME\", \"auth:redis\" or \"auth:postgres\"", w, i);
		}
		jv_free(e);
	}
	if (all_headers) /* "headers" with "header:NAME": every header */
		for (; nh > 0; nh--) {
			free(s->header[nh - 1]);
			s->header[nh - 1] = NULL;
		}
	return r;
}

/* A value as it goes in a URL's path or query: every byte but RFC 3986's
 * unreserved ones percent-encoded, with hex digits of case hex. */
static char *url_escape(const char *v, const char *hex)
{
	struct gl_buf b = {0};
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
			gl_buf_addc(&b, (char)*p);
		} else {
			gl_buf_addc(&b, '%');
			gl_buf_addc(&b, hex[*p >> 4]);
			gl_buf_addc(&b, hex[*p & 15]);
		}
	}
	gl_buf_addc(&b, 0);
	return b.data;
}

/* The value JSON-escaped as a JSON writer may write it: '"' and '\\' with
 * a backslash, and with slash '/' as "\/" (printable ASCII has nothing
 * else to escape). */
static char *json_escape(const char *v, bool slash)
{
	struct gl_buf b = {0};
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\' || (slash && *p == '/'))
			gl_buf_addc(&b, '\\');
		gl_buf_addc(&b, *p);
	}
	gl_buf_addc(&b, 0);
	return b.data;
}

/* s->in_url and s->form from s->value. */
static void forms(struct gl_secret *s)
{
	char *cand[] = {gl_xstrdup(s->value), url_escape(s->value, "0123456789ABCDEF"),
			url_escape(s->value, "0123456789abcdef"), json_escape(s->value, false),
			json_escape(s->value, true)};
	s->in_url = gl_xstrdup(cand[1]);
	size_t n = 0;
	for (size_t i = 0; i < 5; i++) {
		bool seen = false;
		for (size_t j = 0; j < n; j++)
			seen = seen || !strcmp(s->form[j], cand[i]);
		if (seen)
			free(cand[i]);
		else
			s->form[n++] = cand[i];
	}
}

/* A stream destination's password is given by the broker's own
 * authentication, never as text in the stream: a protocol frames it with
 * its length or hashes it in the client (docs/streams.md "Passwords").
 * So "auth:…" is alone in "in" and binds host:port destinations only,
 * and a host:port is bound by "auth:…" only. */
static int auth_ok(const struct gl_secret *s, jv in, const char *w, struct gl_fail *f)
{
	bool streams = true, hosts = true;
	for (size_t i = 0; s->to[i]; i++) {
		streams &= gl_dest_port(s->to[i]) != 0;
		hosts &= gl_dest_port(s->to[i]) == 0;
	}
	if (s->auth && (s->in || jv_array_length(jv_copy(in)) != 1 || !streams))
		return gl_fail(f, GL_E_USAGE, "%s: \"auth:…\" is the only entry of \"in\", and "
			       "\"to\" names host:port destinations only", w);
	if (!s->auth && !hosts)
		return gl_fail(f, GL_E_USAGE, "%s.to: a host:port destination takes a secret only "
			       "as \"in\": [\"auth:redis\"] or [\"auth:postgres\"] (the broker "
			       "authenticates the connection; docs/streams.md)", w);
	return 0;
}

static int secret_in(jv k, jv v, const char *w, bool public_only, struct gl_secret *s,
		     struct gl_fail *f)
{
	static const char *const keys[] = {"value", "to", "in", NULL};
	const char *ks = jv_string_value(k);
	autofree char *q = gl_quote(ks, strlen(ks));
	if (!name_ok(ks) || name_reserved(ks))
		return gl_fail(f, GL_E_USAGE, "%s.secrets: %s is not a variable name an operator "
			       "may set ([A-Z_][A-Z0-9_]*, none that germline sets itself)", w, q);
	autofree char *sw = gl_xasprintf("%s.secrets.%s", w, ks);
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_USAGE, "%s: not an object {\"value\",\"to\"[,\"in\"]}", sw);
	autofree char *unknown = gl_json_unknown_key(v, keys);
	if (unknown)
		return gl_fail(f, GL_E_USAGE, "%s: unknown field %s (value, to, in)", sw, unknown);
	s->name = gl_xstrdup(ks);
	s->placeholder = gl_xasprintf(GL_SECRET_PREFIX "%s", ks);
	jv val = gl_json_get(v, "value"), to = gl_json_get(v, "to"), in = gl_json_get(v, "in");
	int r = 0;
	if (public_only && jv_is_valid(val)) {
		r = gl_fail(f, GL_E_USAGE, "%s.value: present in a public configuration", sw);
	} else if (!public_only &&
		   (jv_get_kind(val) != JV_KIND_STRING ||
		    !value_ok(jv_string_value(val), (size_t)jv_string_length_bytes(jv_copy(val))))) {
		r = gl_fail(f, GL_E_USAGE, "%s.value: not %d to %d printable ASCII bytes (and never "
			    "containing " GL_SECRET_PREFIX ")", sw, GL_SECRET_VALUE_MIN,
			    GL_CONFIG_TEXT_MAX);
	} else if (!public_only) {
		s->value = gl_xstrdup(jv_string_value(val));
		s->value_len = strlen(s->value);
		forms(s);
	}
	if (r == 0 && !(s->to = hosts_in(to, sw, f)))
		r = -1;
	if (r == 0)
		r = where_in(in, sw, s, f);
	if (r == 0)
		r = auth_ok(s, in, sw, f);
	jv_free(val);
	jv_free(to);
	jv_free(in);
	return r;
}

static int secrets_in(jv o, const char *w, bool public_only, struct gl_config *c,
		      struct gl_fail *f)
{
	jv sec = gl_json_get(o, "secrets");
	if (!jv_is_valid(sec)) {
		jv_free(sec);
		return 0;
	}
	int r = 0;
	if (jv_get_kind(sec) != JV_KIND_OBJECT ||
	    jv_object_length(jv_copy(sec)) > GL_CONFIG_SECRETS_MAX) {
		jv_free(sec);
		return gl_fail(f, GL_E_USAGE, "%s.secrets: not an object of at most %d secrets", w,
			       GL_CONFIG_SECRETS_MAX);
	}
	c->secret = gl_xcalloc((size_t)jv_object_length(jv_copy(sec)) + 1, sizeof *c->secret);
	jv_object_foreach(sec, k, v)
	{
		if (r == 0)
			r = secret_in(k, v, w, public_only, &c->secret[c->nsecret++], f);
		jv_free(k);
		jv_free(v);
	}
	jv_free(sec);
	for (size_t i = 0; r == 0 && i < c->nsecret; i++)
		for (size_t t = 0; r == 0 && c->secret[i].auth && c->secret[i].to[t]; t++)
			if (gl_config_stream_auth(c, c->secret[i].to[t]) != &c->secret[i])
				r = gl_fail(f, GL_E_USAGE, "%s.secrets: %s is authenticated by two "
					    "secrets", w, c->secret[i].to[t]);
	return r;
}

static int by_length_desc(const void *a, const void *b)
{
	size_t x = ((const struct gl_secret_form *)a)->len, y = ((const struct gl_secret_form *)b)->len;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* c->forms: built once here, not per reply. */
static void reply_forms(struct gl_config *c)
{
	c->forms = gl_xcalloc(c->nsecret * 5 + 1, sizeof *c->forms);
	for (size_t i = 0; i < c->nsecret; i++)
		for (size_t f = 0; c->secret[i].form[f]; f++)
			c->forms[c->nforms++] = (struct gl_secret_form){
			    c->secret[i].form[f], c->secret[i].placeholder,
			    strlen(c->secret[i].form[f])};
	qsort(c->forms, c->nforms, sizeof *c->forms, by_length_desc);
}

/* No name both a public variable and a secret; the copies' environment. */
static int copy_env(const char *w, struct gl_config *c, struct gl_fail *f)
{
	c->copy_env = gl_xcalloc(c->nenv + c->nsecret + 1, sizeof *c->copy_env);
	for (size_t i = 0; i < c->nenv; i++)
		c->copy_env[c->ncopy_env++] = gl_xstrdup(c->env[i]);
	for (size_t i = 0; i < c->nsecret; i++) {
		const struct gl_secret *s = &c->secret[i];
		size_t n = strlen(s->name);
		for (size_t j = 0; j < c->nenv; j++)
			if (!strncmp(c->env[j], s->name, n) && c->env[j][n] == '=')
				return gl_fail(f, GL_E_USAGE, "%s: %s is both in env and in secrets", w,
					       s->name);
		c->copy_env[c->ncopy_env++] = gl_xasprintf("%s=%s", s->name, s->placeholder);
	}
	if (c->nargs) {
		jv a = strv_json(c->args);
		jv t = jv_dump_string(a, 0);
		c->args_env = gl_xasprintf("GL_RELEASE_ARGS=%s", jv_string_value(t));
		jv_free(t);
	}
	return 0;
}

int gl_config_parse(jv o, const char *name, bool public_only, struct gl_config *c,
		    struct gl_fail *f)
{
	static const char *const keys[] = {"args", "env", "secrets", NULL};
	memset(c, 0, sizeof *c);
	autofree char *q = gl_quote(name, strlen(name));
	autofree char *w = gl_xasprintf("config.%s", q);
	c->release = gl_xstrdup(name);
	int r = 0;
	if (jv_get_kind(o) != JV_KIND_OBJECT) {
		r = gl_fail(f, GL_E_USAGE, "%s: not an object {\"args\",\"env\",\"secrets\"}", w);
	} else {
		autofree char *unknown = gl_json_unknown_key(o, keys);
		if (unknown)
			r = gl_fail(f, GL_E_USAGE, "%s: unknown field %s (args, env, secrets)", w,
				    unknown);
	}
	if (r < 0 || args_in(o, w, c, f) < 0 || env_in(o, w, c, f) < 0 ||
	    secrets_in(o, w, public_only, c, f) < 0 || copy_env(w, c, f) < 0) {
		gl_config_free(c);
		return -1;
	}
	if (!public_only)
		reply_forms(c);
	return 0;
}

void gl_config_free(struct gl_config *c)
{
	if (!c)
		return;
	free(c->release);
	free(c->forms);
	gl_strv_free(c->args);
	gl_strv_free(c->env);
	gl_strv_free(c->copy_env);
	free(c->args_env);
	for (size_t i = 0; c->secret && i < c->nsecret; i++) {
		struct gl_secret *s = &c->secret[i];
		free(s->name);
		free(s->placeholder);
		if (s->value) /* no copy of it outlives the configuration */
			explicit_bzero(s->value, s->value_len);
		free(s->value);
		for (size_t f = 0; s->form[f]; f++) {
			explicit_bzero(s->form[f], strlen(s->form[f]));
			free(s->form[f]);
		}
		if (s->in_url)
			explicit_bzero(s->in_url, strlen(s->in_url));
		free(s->in_url);
		gl_strv_free(s->to);
		gl_strv_free(s->header);
	}
	free(c->secret);
	memset(c, 0, sizeof *c);
}

jv gl_config_public(const struct gl_config *c)
{
	jv env = jv_object(), sec = jv_object();
	for (size_t i = 0; i < c->nenv; i++) {
		const char *eq = strchr(c->env[i], '=');
		env = jv_object_set(env, jv_string_sized(c->env[i], (int)(eq - c->env[i])),
				    jv_string(eq + 1));
	}
	for (size_t i = 0; i < c->nsecret; i++) {
		const struct gl_secret *s = &c->secret[i];
		jv in = jv_array();
		if (s->in & GL_SECRET_IN_URL)
			in = jv_array_append(in, jv_string("url"));
		if ((s->in & GL_SECRET_IN_HEADERS) && !s->header[0])
			in = jv_array_append(in, jv_string("headers"));
		for (size_t h = 0; s->header[h]; h++)
			in = jv_array_append(in, jv_string_fmt("header:%s", s->header[h]));
		if (s->in & GL_SECRET_IN_BODY)
			in = jv_array_append(in, jv_string("body"));
		if (s->auth)
			in = jv_array_append(in, jv_string(s->auth == GL_SECRET_AUTH_REDIS
								  ? "auth:redis" : "auth:postgres"));
		sec = jv_object_set(sec, jv_string(s->name),
				    JV_OBJECT(jv_string("to"), strv_json(s->to), jv_string("in"), in));
	}
	return JV_OBJECT(jv_string("args"), strv_json(c->args), jv_string("env"), env,
			 jv_string("secrets"), sec);
}

void gl_config_digest(const struct gl_config *c, char hex[65])
{
	autobuf struct gl_buf b = {0};
	autofail struct gl_fail f = {0};
	jv pub = gl_config_public(c);
	if (gl_canon_dump(&b, pub, &f) < 0) /* strings and arrays only: cannot fail */
		gl_die(GL_EXIT_USAGE, "config: %s", gl_fail_detail(&f));
	jv_free(pub);
	unsigned char d[GL_SHA256_BYTES];
	gl_sha256(d, b.data, b.len);
	gl_hex(d, sizeof d, hex);
}

bool gl_secret_binds(const struct gl_secret *s, const char *host)
{
	for (size_t i = 0; s->to && s->to[i]; i++)
		if (!strcmp(s->to[i], host))
			return true;
	return false;
}

const struct gl_secret *gl_config_stream_auth(const struct gl_config *c, const char *dest)
{
	for (size_t i = 0; c && i < c->nsecret; i++)
		if (c->secret[i].auth && gl_secret_binds(&c->secret[i], dest))
			return &c->secret[i];
	return NULL;
}

bool gl_secret_in_header(const struct gl_secret *s, const char *name)
{
	if (!(s->in & GL_SECRET_IN_HEADERS))
		return false;
	if (!s->header[0])
		return true;
	for (size_t i = 0; s->header[i]; i++)
		if (!strcasecmp(s->header[i], name))
			return true;
	return false;
}
