/* policy.c — the deployer's policy file: reading it and validating every
 * field (policy.h, docs/formats.md). The questions it answers are in
 * policy_query.c. */
#define _GNU_SOURCE
#include "plan/policy.h"
#include "plan/policy_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "release/manifest.h"
#include "sign/pkey.h"
#include "core/util.h"

static char *show(const char *s) { return gl_quote(s, strlen(s)); }

static bool printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* "addr:port": an IPv4 literal, "[IPv6]" or a host name, then 1..65535. */
static bool route_ok(const char *s)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s)
		return false;
	const char *port = colon + 1;
	size_t plen = strlen(port);
	if (plen == 0 || plen > 5 || port[0] == '0' || strspn(port, "0123456789") != plen ||
	    atoi(port) > 65535)
		return false;
	size_t alen = (size_t)(colon - s);
	if (s[0] == '[') {
		char a[INET6_ADDRSTRLEN];
		unsigned char bin[16];
		if (alen < 3 || s[alen - 1] != ']' || alen - 2 >= sizeof a)
			return false;
		memcpy(a, s + 1, alen - 2);
		a[alen - 2] = 0;
		return inet_pton(AF_INET6, a, bin) == 1;
	}
	return !memchr(s, ':', alen) && gl_host_ok(s, alen);
}

int gl_policy_by_name(const void *a, const void *b)
{
	return strcmp(((const struct gl_policy_clearance *)a)->name,
		      ((const struct gl_policy_clearance *)b)->name);
}

int gl_policy_by_host(const void *a, const void *b)
{
	return strcmp(((const struct gl_policy_route *)a)->host,
		      ((const struct gl_policy_route *)b)->host);
}

/* Each member of an object field, or -1 with *f. Borrows obj. */
static int object_field(jv doc, const char *key, bool required, jv *out, int max, struct gl_fail *f)
{
	*out = gl_json_get(doc, key);
	if (!jv_is_valid(*out))
		return required ? gl_fail(f, GL_E_USAGE, "%s: missing", key) : 0;
	if (jv_get_kind(*out) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_USAGE, "%s: not an object", key);
	if (jv_object_length(jv_copy(*out)) > max)
		return gl_fail(f, GL_E_USAGE, "%s: more than %d entries", key, max);
	return 0;
}

static int load_clearances(struct gl_policy *p, struct gl_fail *f)
{
	jv cl;
	int r = object_field(p->doc, "clearances", true, &cl, GL_POLICY_NAMES_MAX, f);
	if (r == 0) {
		p->clear = gl_xcalloc((size_t)jv_object_length(jv_copy(cl)), sizeof *p->clear);
		jv_object_foreach(cl, k, v)
		{
			/* p->doc holds k and v, so their bytes outlive these refs. */
			const char *name = jv_string_value(k);
			size_t len = (size_t)jv_string_length_bytes(jv_copy(k));
			if (r == 0 && (len == 0 || len > GL_NAME_MAX || !printable(name, len))) {
				autofree char *s = show(name);
				r = gl_fail(f, GL_E_USAGE,
					    "clearances: %s is not a name (1..%d bytes, no "
					    "control characters)",
					    s, GL_NAME_MAX);
			}
			struct gl_policy_clearance *c = &p->clear[p->nclear];
			/* gl_labels_from_jv's words, prefixed, as a usage error */
			if (r == 0 && gl_labels_from_jv(&c->tags, v, f) < 0) {
				autofree char *s = show(name);
				r = gl_fail(f, GL_E_USAGE, "clearances.%s: %s", s,
					    gl_fail_detail(f));
			}
			if (r == 0) {
				c->name = name;
				p->nclear++;
			}
			jv_free(k);
			jv_free(v);
		}
		qsort(p->clear, p->nclear, sizeof *p->clear, gl_policy_by_name);
	}
	jv_free(cl);
	return r;
}

static int load_routes(struct gl_policy *p, struct gl_fail *f)
{
	jv ro;
	int r = object_field(p->doc, "routes", false, &ro, GL_POLICY_NAMES_MAX, f);
	if (r == 0 && jv_is_valid(ro)) {
		p->route = gl_xcalloc((size_t)jv_object_length(jv_copy(ro)), sizeof *p->route);
		jv_object_foreach(ro, k, v)
		{
			const char *host = jv_string_value(k);
			size_t hlen = (size_t)jv_string_length_bytes(jv_copy(k));
			if (r == 0 && !gl_dest_ok(host, hlen)) {
				autofree char *s = show(host);
				r = gl_fail(f, GL_E_USAGE,
					    "routes: %s is not a lowercase host name or IP "
					    "literal, or host:port (a stream destination)",
					    s);
			} else if (r == 0 && (jv_get_kind(v) != JV_KIND_STRING ||
					      !route_ok(jv_string_value(v)))) {
				autofree char *s = show(host);
				r = gl_fail(f, GL_E_USAGE,
					    "routes.%s: not \"addr:port\" (an IPv4 literal, "
					    "[IPv6] or host name, and a port 1..65535)",
					    s);
			} else if (r == 0) {
				p->route[p->nroute].host = host;
				p->route[p->nroute].addr = jv_string_value(v);
				p->nroute++;
			}
			jv_free(k);
			jv_free(v);
		}
		qsort(p->route, p->nroute, sizeof *p->route, gl_policy_by_host);
	}
	jv_free(ro);
	return r;
}

/* An absolute glob: components non-empty and not "." or "..". */
static bool glob_ok(const char *s, size_t len)
{
	return len >= 2 && len <= GL_PATH_MAX && s[0] == '/' && printable(s, len) &&
	       gl_path_clean(s, len);
}

static void split_glob(struct gl_policy_glob *g)
{
	size_t n = 0;
	for (const char *c = g->glob; *c; c++)
		n += *c == '/';
	g->comp = gl_xcalloc(n, sizeof *g->comp);
	const char *c = g->glob + 1;
	for (;;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		g->comp[g->ncomp++] = strndup(c, len);
		if (!g->comp[g->ncomp - 1])
			gl_die(GL_EXIT_USAGE, "out of memory");
		if (!slash)
			break;
		c = slash + 1;
	}
}

/* "labels" keeps document order: gl_json_parse builds objects in source
 * order and jv iterates them in insertion order (tested in gl-plan.bats). */
static int load_globs(struct gl_policy *p, struct gl_fail *f)
{
	jv lb;
	int r = object_field(p->doc, "labels", false, &lb, GL_POLICY_GLOBS_MAX, f);
	if (r == 0 && jv_is_valid(lb)) {
		p->glob = gl_xcalloc((size_t)jv_object_length(jv_copy(lb)), sizeof *p->glob);
		jv_object_foreach(lb, k, v)
		{
			const char *glob = jv_string_value(k);
			struct gl_policy_glob *g = &p->glob[p->nglob];
			if (r == 0 && !glob_ok(glob, (size_t)jv_string_length_bytes(jv_copy(k)))) {
				autofree char *s = show(glob);
				r = gl_fail(f, GL_E_USAGE,
					    "labels: %s is not an absolute glob (no empty, "
					    "'.' or '..' component, no trailing '/')",
					    s);
			} else if (r == 0 && gl_labels_from_jv(&g->tags, v, f) < 0) {
				autofree char *s = show(glob);
				r = gl_fail(f, GL_E_USAGE, "labels.%s: %s", s, gl_fail_detail(f));
			} else if (r == 0) {
				g->glob = glob;
				split_glob(g);
				p->nglob++;
			}
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(lb);
	return r;
}

/* "read_paths": an array of absolute globs, validated as "labels" keys are
 * (SPEC §4; lib/plan/readpaths.h applies them). */
static int load_read_paths(struct gl_policy *p, struct gl_fail *f)
{
	jv rp = gl_json_get(p->doc, "read_paths");
	int r = 0;
	if (!jv_is_valid(rp)) {
		jv_free(rp);
		return 0;
	}
	if (jv_get_kind(rp) != JV_KIND_ARRAY) {
		jv_free(rp);
		return gl_fail(f, GL_E_USAGE, "read_paths: not an array of absolute globs");
	}
	int n = jv_array_length(jv_copy(rp));
	if (n > GL_POLICY_READ_PATHS_MAX) {
		jv_free(rp);
		return gl_fail(f, GL_E_USAGE, "read_paths: more than %d globs",
			       GL_POLICY_READ_PATHS_MAX);
	}
	p->rpath = gl_xcalloc((size_t)n + 1, sizeof *p->rpath);
	jv_array_foreach(rp, i, v)
	{
		if (r == 0 && jv_get_kind(v) != JV_KIND_STRING) {
			r = gl_fail(f, GL_E_USAGE, "read_paths: element %d is not a string", i);
		} else if (r == 0 &&
			   !glob_ok(jv_string_value(v), (size_t)jv_string_length_bytes(jv_copy(v)))) {
			autofree char *s = show(jv_string_value(v));
			r = gl_fail(f, GL_E_USAGE,
				    "read_paths: element %d %s is not an absolute glob (no empty, "
				    "'.' or '..' component, no trailing '/')",
				    i, s);
		} else if (r == 0) {
			struct gl_policy_glob *g = &p->rpath[p->nrpath++];
			g->glob = jv_string_value(v); /* p->doc holds it */
			split_glob(g);
		}
		jv_free(v);
	}
	jv_free(rp);
	return r;
}

static int load_limits(struct gl_policy *p, struct gl_fail *f)
{
	jv v = gl_json_get(p->doc, "limits");
	int r = gl_limits_parse(v, &p->limits, f);
	jv_free(v);
	return r;
}

static int by_release(const void *a, const void *b)
{
	return strcmp(((const struct gl_config *)a)->release, ((const struct gl_config *)b)->release);
}

/* "config" (optional, SPEC §4): per release name, the operator's args, env
 * and secrets (lib/release/config.h, docs/secrets.md). */
static int load_config(struct gl_policy *p, struct gl_fail *f)
{
	jv v = gl_json_get(p->doc, "config");
	int r = 0;
	if (!jv_is_valid(v)) {
		jv_free(v);
		return 0;
	}
	if (jv_get_kind(v) != JV_KIND_OBJECT ||
	    jv_object_length(jv_copy(v)) > GL_CONFIG_RELEASES_MAX) {
		jv_free(v);
		return gl_fail(f, GL_E_USAGE, "config: not an object of at most %d release names",
			       GL_CONFIG_RELEASES_MAX);
	}
	p->config = gl_xcalloc((size_t)jv_object_length(jv_copy(v)) + 1, sizeof *p->config);
	jv_object_foreach(v, k, o)
	{
		if (r == 0 && gl_config_parse(o, jv_string_value(k), false, &p->config[p->nconfig],
					      f) == 0)
			p->nconfig++;
		else
			r = -1;
		jv_free(k);
		jv_free(o);
	}
	jv_free(v);
	if (r == 0 && p->nconfig)
		qsort(p->config, p->nconfig, sizeof *p->config, by_release);
	return r;
}

/* "ca_file" (optional, SPEC §4): an absolute path to PEM certificates the
 * broker trusts for upstream TLS besides the system store (a private CA,
 * the tests'). Read once here, at most 1 MiB, and every certificate in it
 * parsed: a file that names no certificate, or holds one OpenSSL cannot
 * read, refuses the policy rather than failing every delivery later. */
static int load_ca_file(struct gl_policy *p, struct gl_fail *f)
{
	const char *path = gl_json_get_str(p->doc, "ca_file");
	jv v = gl_json_get(p->doc, "ca_file");
	bool has = jv_is_valid(v);
	jv_free(v);
	if (!has)
		return 0;
	if (!path || path[0] != '/')
		return gl_fail(f, GL_E_USAGE, "ca_file: not an absolute path");
	autofree char *buf = NULL;
	size_t len;
	if (gl_read_file_capped(path, GL_POLICY_CA_MAX, &buf, &len) < 0)
		return gl_fail(f, GL_E_USAGE, "ca_file: %s: %s", path,
			       errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
	int n = gl_pem_certificates(buf, len);
	if (n <= 0)
		return gl_fail(f, GL_E_USAGE, "ca_file: %s: %s", path,
			       n == 0 ? "no PEM certificate in it"
				      : "a certificate in it cannot be read");
	gl_buf_add(&p->ca_pem, buf, len);
	return 0;
}

/* "concurrency" (optional, default "same-clearance", SPEC §4): which calls gl-run --jobs may run
 * at the same time (docs/formats.md, docs/gl-run.md "--jobs"). */
static int load_concurrency(struct gl_policy *p, struct gl_fail *f)
{
	static const char *const names[] = {"any", "same-clearance", "none"};
	jv v = gl_json_get(p->doc, "concurrency");
	p->concurrency = GL_CONCURRENCY_SAME_CLEARANCE;
	int r = 0;
	if (jv_is_valid(v)) {
		r = -1;
		for (int i = 0; i < 3; i++)
			if (jv_get_kind(v) == JV_KIND_STRING && !strcmp(jv_string_value(v), names[i])) {
				p->concurrency = (enum gl_concurrency)i;
				r = 0;
			}
		if (r < 0)
			gl_fail(f, GL_E_USAGE,
				"concurrency: must be \"any\", \"same-clearance\" or \"none\"");
	}
	jv_free(v);
	return r;
}

int gl_policy_parse(struct gl_policy *p, const char *buf, size_t len, struct gl_fail *f)
{
	static const char *const keys[] = {"clearances", "routes",	 "labels", "read_paths",
					   "limits",	 "concurrency", "config", "ca_file", NULL};
	memset(p, 0, sizeof *p);
	p->doc = jv_null();
	if (len > GL_POLICY_MAX)
		return gl_fail(f, GL_E_USAGE, "%zu bytes (at most %u)", len, GL_POLICY_MAX);
	jv doc = gl_json_parse(buf, len);
	if (!jv_is_valid(doc)) {
		jv msg = jv_invalid_get_msg(doc);
		gl_fail(f, GL_E_USAGE, "not JSON: %s", jv_string_value(msg));
		jv_free(msg);
		return -1;
	}
	p->doc = doc;
	if (jv_get_kind(doc) != JV_KIND_OBJECT) {
		gl_policy_free(p);
		return gl_fail(f, GL_E_USAGE, "not a JSON object");
	}
	int r = 0;
	jv_object_foreach(doc, k, v)
	{
		bool known = false;
		for (size_t i = 0; keys[i]; i++)
			known = known || strcmp(jv_string_value(k), keys[i]) == 0;
		if (!known && r == 0) {
			autofree char *s = show(jv_string_value(k));
			r = gl_fail(f, GL_E_USAGE,
				    "unknown field %s (clearances, routes, labels, "
				    "read_paths, limits, concurrency, config, ca_file)",
				    s);
		}
		jv_free(k);
		jv_free(v);
	}
	if (r < 0 || load_clearances(p, f) < 0 || load_routes(p, f) < 0 || load_globs(p, f) < 0 ||
	    load_read_paths(p, f) < 0 || load_limits(p, f) < 0 || load_concurrency(p, f) < 0 ||
	    load_config(p, f) < 0 || load_ca_file(p, f) < 0) {
		gl_policy_free(p);
		return -1;
	}
	return 0;
}

int gl_policy_load(struct gl_policy *p, const char *path, struct gl_fail *f)
{
	autofree char *buf = NULL;
	size_t len;
	memset(p, 0, sizeof *p);
	p->doc = jv_null();
	if (gl_read_file_capped(path, GL_POLICY_MAX, &buf, &len) < 0)
		return gl_fail(f, GL_E_IO, "%s: %s", path,
			       errno == EFBIG ? "larger than 4 MiB" : strerror(errno));
	if (gl_policy_parse(p, buf, len, f) < 0)
		return gl_fail(f, GL_E_USAGE, "%s: %s", path, gl_fail_detail(f));
	return 0;
}

void gl_policy_free(struct gl_policy *p)
{
	for (size_t i = 0; i < p->nclear; i++)
		gl_labels_free(&p->clear[i].tags);
	for (size_t i = 0; i < p->nglob; i++) {
		for (size_t j = 0; j < p->glob[i].ncomp; j++)
			free(p->glob[i].comp[j]);
		free(p->glob[i].comp);
		gl_labels_free(&p->glob[i].tags);
	}
	for (size_t i = 0; i < p->nrpath; i++) {
		for (size_t j = 0; j < p->rpath[i].ncomp; j++)
			free(p->rpath[i].comp[j]);
		free(p->rpath[i].comp);
	}
	gl_limits_free(&p->limits);
	for (size_t i = 0; i < p->nconfig; i++)
		gl_config_free(&p->config[i]);
	free(p->config);
	gl_buf_free(&p->ca_pem);
	free(p->clear);
	free(p->route);
	free(p->glob);
	free(p->rpath);
	jv_free(p->doc);
	memset(p, 0, sizeof *p);
	p->doc = jv_null();
}
