/* tuf.c — TUF metadata: parse and shape-check (TUF specification §4;
 * SPEC §3); see tuf.h. Writing is lib/sign/tuf_write.c. */
#define _GNU_SOURCE
#include "sign/tuf.h"

#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <string.h>

#include "core/sha.h"
#include "json/json.h"

static const char *const type_names[] = {"root", "targets", "snapshot", "timestamp"};

const char *gl_meta_type_name(enum gl_meta_type t)
{
	return type_names[t];
}

size_t gl_tuf_cap(enum gl_meta_type t)
{
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_META_CAP_OFF");
	if (off && !strcmp(off, "1"))
		return SIZE_MAX;
#endif
	static const size_t caps[] = {GL_TUF_META_MAX, GL_TUF_TARGETS_META_MAX, GL_TUF_SNAPSHOT_MAX,
				      GL_TUF_TIMESTAMP_MAX};
	return caps[t];
}

void gl_meta_free(struct gl_meta *m)
{
	free(m->name);
	m->name = NULL;
	jv_free(m->doc);
	jv_free(m->sig);
	m->doc = m->sig = jv_invalid();
	gl_buf_free(&m->raw);
	gl_buf_free(&m->signed_bytes);
}

/* ---- shape checks (any failure: "bad_metadata") ------------------------ */

static int bad(struct gl_fail *f, const char *fmt, ...) GL_PRINTF(2, 3);
static int bad(struct gl_fail *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gl_fail_vset(f, GL_E_BAD_METADATA, fmt, ap);
	va_end(ap);
	return -1;
}

static int is_hex(const char *s, size_t min, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	return s && n >= min && n <= max && n % 2 == 0 &&
	       strspn(s, "0123456789abcdefABCDEF") == n;
}

static int is_kind(jv v, jv_kind k)
{
	return jv_get_kind(v) == k;
}

/* obj.key is of kind k (borrowed obj). */
static int has_kind(jv obj, const char *key, jv_kind k)
{
	jv v = gl_json_get(obj, key);
	int ok = is_kind(v, k);
	jv_free(v);
	return ok;
}

/* doc.signatures is a bounded array of {keyid, sig} (borrowed doc). */
static int check_signatures(struct gl_fail *f, const char *name, jv doc)
{
	jv sigs = gl_json_get(doc, "signatures");
	int rc = 0;
	if (!is_kind(sigs, JV_KIND_ARRAY))
		rc = bad(f, "%s: \"signatures\" is not an array", name);
	else if (jv_array_length(jv_copy(sigs)) > GL_TUF_SIGS_MAX)
		rc = bad(f, "%s: more than %d signatures", name, GL_TUF_SIGS_MAX);
	else
		jv_array_foreach(sigs, i, s)
		{
			if (rc == 0 && (!is_kind(s, JV_KIND_OBJECT) ||
					!is_hex(gl_json_get_str(s, "keyid"), 64, 64) ||
					!is_hex(gl_json_get_str(s, "sig"), 2, 4096)))
				rc = bad(f,
					 "%s: signature %d is not {\"keyid\": 64 hex digits, "
					 "\"sig\": hex digits}",
					 name, i);
			jv_free(s);
		}
	jv_free(sigs);
	return rc;
}

/* RFC 3339 UTC with optional fractional seconds (tuf-js writes them). */
static int parse_expires(const char *s, int64_t *out)
{
	char buf[21];
	size_t n = strlen(s);
	if (n > 21 && s[19] == '.' && s[n - 1] == 'Z' &&
	    strspn(s + 20, "0123456789") == n - 21) {
		memcpy(buf, s, 19);
		buf[19] = 'Z';
		buf[20] = 0;
		s = buf;
	}
	return gl_time_parse(s, out);
}

/* _type, spec_version, version, expires: common to every role. */
static int check_common(struct gl_meta *m, struct gl_fail *f)
{
	const char *type = type_names[m->type];
	const char *t = gl_json_get_str(m->sig, "_type");
	const char *sv = gl_json_get_str(m->sig, "spec_version");
	const char *ex = gl_json_get_str(m->sig, "expires");
	if (!t || strcmp(t, type))
		return bad(f, "%s: signed._type is not \"%s\"", m->name, type);
	if (!sv)
		return bad(f, "%s: signed.spec_version is not a string", m->name);
	if (strncmp(sv, "1.", 2)) {
		autofree char *q = gl_quote(sv, strlen(sv));
		gl_fail_set(f, GL_E_UNSUPPORTED, "%s: spec_version %s: only TUF 1.x is supported",
			    m->name, q);
		return -1;
	}
	if (gl_json_get_int(m->sig, "version", &m->version) < 0 || m->version < 1)
		return bad(f, "%s: signed.version must be an integer >= 1", m->name);
	if (!ex || parse_expires(ex, &m->expires) < 0)
		return bad(f, "%s: signed.expires is not an RFC 3339 UTC time", m->name);
	return 0;
}

/* keyid = SHA-256 of the canonical form of the key object as given. */
static int keyid_of(jv key, char out[GL_KEYID_HEX])
{
	autobuf struct gl_buf b = {0};
	autofail struct gl_fail err = {0};
	if (gl_canon_dump_tuf(&b, key, &err) < 0)
		return -1;
	unsigned char h[GL_SHA256_BYTES];
	gl_sha256(h, (const unsigned char *)b.data, b.len);
	gl_hex(h, sizeof h, out);
	return 0;
}

static int check_key(struct gl_meta *m, jv k, jv v, struct gl_fail *f)
{
	const char *id = jv_string_value(k);
	char kid[GL_KEYID_HEX];
	if (!is_kind(v, JV_KIND_OBJECT) || !gl_json_get_str(v, "keytype") ||
	    !gl_json_get_str(v, "scheme") || !has_kind(v, "keyval", JV_KIND_OBJECT))
		return bad(f,
			   "%s: signed.keys[%.64s] is not {\"keytype\",\"scheme\",\"keyval\":{…}}",
			   m->name, id);
	if (keyid_of(v, kid) < 0 || strcmp(kid, id))
		return bad(f, "%s: signed.keys: keyid %.64s is not the SHA-256 of its key (%s)",
			   m->name, id, kid);
	return 0;
}

static int check_keys(struct gl_meta *m, jv keys, struct gl_fail *f)
{
	if (!is_kind(keys, JV_KIND_OBJECT) || jv_object_length(jv_copy(keys)) > GL_TUF_KEYS_MAX)
		return bad(f, "%s: signed.keys is not an object of at most %d keys", m->name,
			   GL_TUF_KEYS_MAX);
	int rc = 0;
	jv_object_foreach(keys, k, v)
	{
		if (rc == 0)
			rc = check_key(m, k, v, f);
		jv_free(k);
		jv_free(v);
	}
	return rc;
}

static int check_role(struct gl_meta *m, jv keys, jv role, const char *rname, struct gl_fail *f)
{
	if (!is_kind(role, JV_KIND_OBJECT))
		return bad(f, "%s: signed.roles has no object \"%s\"", m->name, rname);
	jv ids = gl_json_get(role, "keyids");
	int64_t t;
	int n = gl_json_is_str_array(ids) ? jv_array_length(jv_copy(ids)) : -1;
	int rc = 0;
	if (n < 1 || gl_json_get_int(role, "threshold", &t) < 0 || t < 1 || t > n)
		rc = bad(f,
			 "%s: signed.roles.%s needs a non-empty keyids array and 1 <= threshold "
			 "<= its length",
			 m->name, rname);
	for (int i = 0; rc == 0 && i < n; i++) {
		jv id = jv_array_get(jv_copy(ids), i);
		if (!jv_object_has(jv_copy(keys), jv_copy(id)))
			rc = bad(f, "%s: signed.roles.%s: keyid %.64s is not in signed.keys",
				 m->name, rname, jv_string_value(id));
		for (int j = 0; rc == 0 && j < i; j++) {
			jv o = jv_array_get(jv_copy(ids), j);
			if (jv_equal(o, jv_copy(id)))
				rc = bad(f, "%s: signed.roles.%s: keyid %.64s listed twice",
					 m->name, rname, jv_string_value(id));
		}
		jv_free(id);
	}
	jv_free(ids);
	return rc;
}

static int check_root(struct gl_meta *m, struct gl_fail *f)
{
	jv keys = gl_json_get(m->sig, "keys"), roles = gl_json_get(m->sig, "roles");
	jv cs = gl_json_get(m->sig, "consistent_snapshot");
	int rc = check_keys(m, keys, f);
	if (rc == 0 && jv_is_valid(cs) && !is_kind(cs, JV_KIND_TRUE) && !is_kind(cs, JV_KIND_FALSE))
		rc = bad(f, "%s: signed.consistent_snapshot is not a boolean", m->name);
	if (rc == 0 && !is_kind(roles, JV_KIND_OBJECT))
		rc = bad(f, "%s: signed.roles is not an object", m->name);
	for (int i = 0; rc == 0 && i < 4; i++) {
		jv r = gl_json_get(roles, type_names[i]);
		rc = check_role(m, keys, r, type_names[i], f);
		jv_free(r);
	}
	jv_free(cs);
	jv_free(keys);
	jv_free(roles);
	return rc;
}

/* hashes: a non-empty object of algorithm -> hex digits. */
static int hashes_ok(jv h)
{
	if (!is_kind(h, JV_KIND_OBJECT) || jv_object_length(jv_copy(h)) < 1 ||
	    jv_object_length(jv_copy(h)) > 16)
		return 0;
	int ok = 1;
	jv_object_foreach(h, k, v)
	{
		ok &= is_kind(v, JV_KIND_STRING) && is_hex(jv_string_value(v), 2, 256);
		jv_free(k);
		jv_free(v);
	}
	return ok;
}

static int check_target(struct gl_meta *m, jv name, jv t, struct gl_fail *f)
{
	const char *n = jv_string_value(name);
	size_t nl = (size_t)jv_string_length_bytes(jv_copy(name));
	int64_t len;
	if (nl == 0 || nl > GL_TUF_PATH_MAX || memchr(n, 0, nl))
		return bad(f, "%s: a target path is empty, longer than %d bytes or holds NUL",
			   m->name, GL_TUF_PATH_MAX);
	if (!is_kind(t, JV_KIND_OBJECT))
		return bad(f, "%s: signed.targets[%.200s] is not an object", m->name, n);
	jv h = gl_json_get(t, "hashes"), c = gl_json_get(t, "custom");
	int rc = 0;
	if (gl_json_get_int(t, "length", &len) < 0 || len < 0)
		rc = bad(f, "%s: signed.targets[%.200s].length is not an integer >= 0", m->name, n);
	if (rc == 0 && !hashes_ok(h))
		rc = bad(f, "%s: signed.targets[%.200s].hashes is not an object of hex digests",
			 m->name, n);
	if (rc == 0 && jv_is_valid(c) && !is_kind(c, JV_KIND_OBJECT))
		rc = bad(f, "%s: signed.targets[%.200s].custom is not an object", m->name, n);
	jv_free(h);
	jv_free(c);
	return rc;
}

/* delegations (optional; TUF §4.5): {"keys":{…},"roles":[{"name","keyids",
 * "threshold","paths"?,"terminating"?},…]}; roles without "paths" (e.g.
 * path_hash_prefixes) are kept and never match. */
static int check_delegations(struct gl_meta *m, struct gl_fail *f)
{
	jv d = gl_json_get(m->sig, "delegations");
	if (!jv_is_valid(d))
		return 0;
	jv keys = gl_json_get(d, "keys"), roles = gl_json_get(d, "roles");
	int rc = is_kind(d, JV_KIND_OBJECT) ? check_keys(m, keys, f)
					      : bad(f, "%s: signed.delegations is not an object",
						    m->name);
	if (rc == 0 && (!is_kind(roles, JV_KIND_ARRAY) ||
			jv_array_length(jv_copy(roles)) > GL_TUF_DELEGATIONS_MAX))
		rc = bad(f, "%s: signed.delegations.roles is not an array of at most %d roles",
			 m->name, GL_TUF_DELEGATIONS_MAX);
	if (rc == 0) {
		jv_array_foreach(roles, i, r)
		{
			const char *name = is_kind(r, JV_KIND_OBJECT) ? gl_json_get_str(r, "name")
								       : NULL;
			jv paths = gl_json_get(r, "paths"), term = gl_json_get(r, "terminating");
			if (rc == 0 && (!name || !gl_tuf_target_name_ok(name)))
				rc = bad(f, "%s: delegated role %d has no usable \"name\"", m->name,
					 i);
			if (rc == 0)
				rc = check_role(m, keys, r, name, f);
			if (rc == 0 && jv_is_valid(paths) && !gl_json_is_str_array(paths))
				rc = bad(f, "%s: delegated role %s: \"paths\" is not an array of strings",
					 m->name, name);
			if (rc == 0 && jv_is_valid(term) && !is_kind(term, JV_KIND_TRUE) &&
			    !is_kind(term, JV_KIND_FALSE))
				rc = bad(f, "%s: delegated role %s: \"terminating\" is not a boolean",
					 m->name, name);
			jv_free(paths);
			jv_free(term);
			jv_free(r);
		}
	}
	jv_free(keys);
	jv_free(roles);
	jv_free(d);
	return rc;
}

static int check_targets(struct gl_meta *m, struct gl_fail *f)
{
	jv ts = gl_json_get(m->sig, "targets");
	int rc = check_delegations(m, f);
	if (rc < 0) {
		jv_free(ts);
		return rc;
	}
	if (!is_kind(ts, JV_KIND_OBJECT) || jv_object_length(jv_copy(ts)) > GL_TUF_TARGETS_MAX)
		rc = bad(f, "%s: signed.targets is not an object of at most %d targets", m->name,
			 GL_TUF_TARGETS_MAX);
	if (rc == 0) {
		jv_object_foreach(ts, k, v)
		{
			if (rc == 0)
				rc = check_target(m, k, v, f);
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(ts);
	return rc;
}

/* snapshot/timestamp "meta": file -> {version, length?, hashes?}. */
static int check_meta(struct gl_meta *m, const char *must, struct gl_fail *f)
{
	jv meta = gl_json_get(m->sig, "meta");
	int rc = 0;
	if (!is_kind(meta, JV_KIND_OBJECT) || jv_object_length(jv_copy(meta)) > GL_TUF_TARGETS_MAX)
		rc = bad(f, "%s: signed.meta is not an object", m->name);
	if (rc == 0) {
		jv_object_foreach(meta, k, v)
		{
			int64_t x;
			jv h = gl_json_get(v, "hashes"), l = gl_json_get(v, "length");
			if (rc == 0 && (!is_kind(v, JV_KIND_OBJECT) ||
					gl_json_get_int(v, "version", &x) < 0 || x < 1 ||
					(jv_is_valid(l) && (gl_json_get_int(v, "length", &x) < 0 ||
							    x < 0)) ||
					(jv_is_valid(h) && !hashes_ok(h))))
				rc = bad(f,
					 "%s: signed.meta[%.200s] is not {\"version\": >= 1, "
					 "\"length\"?, \"hashes\"?}",
					 m->name, jv_string_value(k));
			jv_free(h);
			jv_free(l);
			jv_free(k);
			jv_free(v);
		}
	}
	if (rc == 0 && !jv_object_has(jv_copy(meta), jv_string(must)))
		rc = bad(f, "%s: signed.meta lists no \"%s\"", m->name, must);
	jv_free(meta);
	return rc;
}

static int check_signed(struct gl_meta *m, struct gl_fail *f)
{
	if (check_common(m, f) < 0)
		return -1;
	switch (m->type) {
	case GL_META_ROOT: return check_root(m, f);
	case GL_META_TARGETS: return check_targets(m, f);
	case GL_META_SNAPSHOT: return check_meta(m, "targets.json", f);
	case GL_META_TIMESTAMP: return check_meta(m, "snapshot.json", f);
	}
	return -1;
}

int gl_tuf_target_name_ok(const char *name)
{
	return !strchr(name, '/') && strlen(name) <= 255 && gl_tuf_target_path_ok(name);
}

int gl_tuf_target_path_ok(const char *path)
{
	size_t n = strlen(path);
	if (n == 0 || n > GL_TUF_PATH_MAX || path[0] == '/' || path[n - 1] == '/')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c < 0x20 || c == 0x7f)
			return 0;
	}
	for (const char *s = path; *s;) {
		size_t l = strcspn(s, "/");
		if (l == 0 || (l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.') ||
		    l > 255)
			return 0;
		s += l + (s[l] == '/');
	}
	/* UTF-8 validity: ask the strict reader about the quoted path. */
	autobuf struct gl_buf q = {0};
	gl_buf_addc(&q, '"');
	for (size_t i = 0; i < n; i++) {
		if (path[i] == '"' || path[i] == '\\')
			gl_buf_addc(&q, '\\');
		gl_buf_addc(&q, path[i]);
	}
	gl_buf_addc(&q, '"');
	jv v = gl_json_parse(q.data, q.len);
	int ok = jv_is_valid(v);
	jv_free(v);
	return ok;
}

/* ---- loading ----------------------------------------------------------- */

enum gl_code gl_meta_parse(struct gl_meta *m, const char *name, const char *buf, size_t len,
			      enum gl_meta_type t, struct gl_fail *f)
{
	autofail struct gl_fail err = {0};
	*m = (struct gl_meta){
	    .name = gl_xstrdup(name), .type = t, .doc = jv_invalid(), .sig = jv_invalid()};
	if (len > gl_tuf_cap(t)) {
		gl_fail_set(f, GL_E_LENGTH, "%s: larger than %zu bytes (the cap for %s metadata)",
			    name, gl_tuf_cap(t), type_names[t]);
		goto refused;
	}
	m->doc = gl_json_parse_tuf(buf, len); /* PEM keys: raw newlines (SPEC §3) */
	if (!jv_is_valid(m->doc)) {
		jv msg = jv_invalid_get_msg(m->doc);
		m->doc = jv_invalid();
		bad(f, "%s: not valid JSON for this reader: %s", name,
		    is_kind(msg, JV_KIND_STRING) ? jv_string_value(msg) : "invalid");
		jv_free(msg);
		goto refused;
	}
	if (!is_kind(m->doc, JV_KIND_OBJECT) || !has_kind(m->doc, "signed", JV_KIND_OBJECT)) {
		bad(f, "%s: not {\"signed\":{…},\"signatures\":[…]}", name);
		goto refused;
	}
	if (check_signatures(f, name, m->doc) < 0)
		goto refused;
	m->sig = gl_json_get(m->doc, "signed");
	if (check_signed(m, f) < 0)
		goto refused;
	if (gl_canon_dump_tuf(&m->signed_bytes, m->sig, &err) < 0) {
		bad(f, "%s: signed has no canonical form: %s", name, gl_fail_detail(&err));
		goto refused;
	}
	gl_buf_add(&m->raw, buf, len);
	return GL_E_OK;
refused:
	gl_meta_free(m);
	return f->code;
}

enum gl_code gl_meta_load(struct gl_meta *m, const char *path, enum gl_meta_type t,
			     struct gl_fail *f)
{
	autofree char *buf = NULL;
	size_t len, cap = gl_tuf_cap(t);
	*m = (struct gl_meta){.doc = jv_invalid(), .sig = jv_invalid()};
	if (gl_read_file_capped(path, cap == SIZE_MAX ? SIZE_MAX - 1 : cap, &buf, &len) < 0) {
		if (errno == EFBIG)
			return gl_fail_set(f, GL_E_LENGTH, "%s: larger than %zu bytes", path, cap);
		return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno));
	}
	return gl_meta_parse(m, path, buf, len, t, f);
}

/* ---- verification ------------------------------------------------------ */

jv gl_meta_role(const struct gl_meta *root, const char *role)
{
	jv roles = gl_json_get(root->sig, "roles");
	jv r = gl_json_get(roles, role);
	jv_free(roles);
	return r;
}

int gl_meta_consistent(const struct gl_meta *root)
{
	return has_kind(root->sig, "consistent_snapshot", JV_KIND_TRUE);
}

int gl_meta_file(const struct gl_meta *m, const char *file, int64_t *version, int64_t *length,
		 jv *hashes)
{
	jv meta = gl_json_get(m->sig, "meta");
	jv e = gl_json_get(meta, file);
	jv_free(meta);
	*length = -1;
	if (!is_kind(e, JV_KIND_OBJECT) || gl_json_get_int(e, "version", version) < 0) {
		jv_free(e);
		return -1;
	}
	if (gl_json_get_int(e, "length", length) < 0)
		*length = -1;
	jv h = gl_json_get(e, "hashes");
	*hashes = jv_is_valid(h) ? h : jv_null();
	jv_free(e);
	return 0;
}
