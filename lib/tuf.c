/* tuf.c — root and targets metadata: parse, check, verify, build, sign;
 * see tuf.h. */
#define _GNU_SOURCE
#include "tuf.h"

#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <string.h>

#include "json.h"

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

/* ---- shape checks ------------------------------------------------------ */

/* Every key of obj (borrowed object) is in allowed[0..n); the first
 * nreq of them are required. NULL, or the offending field (static or in obj). */
static const char *fields_ok(jv obj, const char *const *allowed, int n, int nreq,
			     const char **missing)
{
	*missing = NULL;
	for (int i = 0; i < nreq; i++) {
		if (!jv_object_has(jv_copy(obj), jv_string(allowed[i]))) {
			*missing = allowed[i];
			return allowed[i];
		}
	}
	const char *bad = NULL;
	jv_object_foreach(obj, k, v)
	{
		int found = 0;
		for (int i = 0; i < n && !found; i++)
			found = !strcmp(jv_string_value(k), allowed[i]);
		if (!found && !bad)
			bad = jv_string_value(k); /* obj keeps the key alive */
		jv_free(k);
		jv_free(v);
	}
	return bad;
}

/* A malformed document: "bad_signature" (no signature can be said to cover
 * it unambiguously). Returns -1. */
static int bad(struct gl_fail *f, const char *fmt, ...) GL_PRINTF(2, 3);
static int bad(struct gl_fail *f, const char *fmt, ...)
{
	char *d;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&d, fmt, ap) < 0)
		d = NULL;
	va_end(ap);
	gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s", d ? d : "malformed metadata");
	free(d);
	return -1;
}

static int is_lower_hex(const char *s, size_t n)
{
	return s && strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

static int check_fields(struct gl_fail *f, const char *name, const char *where, jv obj,
			const char *const *allowed, int n, int nreq)
{
	if (jv_get_kind(obj) != JV_KIND_OBJECT) {
		gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: %s is not an object", name, where);
		return -1;
	}
	const char *missing;
	const char *bad = fields_ok(obj, allowed, n, nreq, &missing);
	if (!bad)
		return 0;
	if (missing)
		gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: %s has no field \"%s\"", name, where,
			    missing);
	else
		gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: %s has an unknown field \"%s\"", name,
			    where, bad);
	return -1;
}

static int check_signatures(struct gl_fail *f, const char *name, jv sigs)
{
	static const char *const fields[] = {"keyid", "sig"};
	if (jv_get_kind(sigs) != JV_KIND_ARRAY)
		return bad(f, "%s: \"signatures\" is not an array", name);
	if (jv_array_length(jv_copy(sigs)) > GL_TUF_SIGS_MAX)
		return bad(f, "%s: more than %d signatures", name, GL_TUF_SIGS_MAX);
	int rc = 0;
	jv_array_foreach(sigs, i, s)
	{
		if (rc == 0 && check_fields(f, name, "a signature", s, fields, 2, 2) < 0)
			rc = -1;
		if (rc == 0 && (!is_lower_hex(gl_json_get_str(s, "keyid"), 64) ||
				!is_lower_hex(gl_json_get_str(s, "sig"), 128))) {
			gl_fail_set(
			    f, GL_R_BAD_SIGNATURE,
			    "%s: signature %d: keyid must be 64 and sig 128 lowercase hex digits",
			    name, i);
			rc = -1;
		}
		jv_free(s);
	}
	return rc;
}

/* _type, spec_version, version, expires: common to both types. */
static int check_common(struct gl_meta *m, const char *type, struct gl_fail *f)
{
	const char *t = gl_json_get_str(m->sig, "_type");
	const char *sv = gl_json_get_str(m->sig, "spec_version");
	const char *ex = gl_json_get_str(m->sig, "expires");
	if (!t || strcmp(t, type))
		return bad(f, "%s: signed._type is not \"%s\"", m->name, type);
	if (!sv || strncmp(sv, "1.", 2))
		return bad(f, "%s: signed.spec_version must be a 1.x version string", m->name);
	if (gl_json_get_int(m->sig, "version", &m->version) < 0 || m->version < 1)
		return bad(f, "%s: signed.version must be an integer >= 1", m->name);
	if (!ex || gl_time_parse(ex, &m->expires) < 0)
		return bad(f,
			   "%s: signed.expires is not an RFC 3339 UTC time "
			   "(YYYY-MM-DDTHH:MM:SSZ)",
			   m->name);
	return 0;
}

static int check_keys(struct gl_meta *m, jv keys, struct gl_fail *f)
{
	if (jv_get_kind(keys) != JV_KIND_OBJECT ||
	    jv_object_length(jv_copy(keys)) > GL_TUF_KEYS_MAX)
		return bad(f,
			   "%s: signed.keys is not an object of at "
			   "most %d keys",
			   m->name, GL_TUF_KEYS_MAX);
	int rc = 0;
	jv_object_foreach(keys, k, v)
	{
		unsigned char pk[32];
		char kid[GL_KEYID_HEX];
		autofree char *err = NULL;
		if (rc == 0 && gl_pubkey_parse(v, pk, &err) < 0) {
			gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: signed.keys[%s]: %s", m->name,
				    jv_string_value(k), err);
			rc = -1;
		}
		if (rc == 0 && (gl_keyid(pk, kid), strcmp(kid, jv_string_value(k)))) {
			gl_fail_set(f, GL_R_BAD_SIGNATURE,
				    "%s: signed.keys: keyid %s is not the SHA-256 of its key (%s)",
				    m->name, jv_string_value(k), kid);
			rc = -1;
		}
		jv_free(k);
		jv_free(v);
	}
	return rc;
}

static int check_role(struct gl_meta *m, jv keys, jv role, const char *rname, struct gl_fail *f)
{
	static const char *const fields[] = {"keyids", "threshold"};
	autofree char *where = gl_xasprintf("signed.roles.%s", rname);
	if (check_fields(f, m->name, where, role, fields, 2, 2) < 0)
		return -1;
	jv ids = gl_json_get(role, "keyids");
	int64_t t;
	int n = gl_json_is_str_array(ids) ? jv_array_length(jv_copy(ids)) : -1;
	int rc = 0;
	if (n < 1 || gl_json_get_int(role, "threshold", &t) < 0 || t < 1 || t > n) {
		gl_fail_set(
		    f, GL_R_BAD_SIGNATURE,
		    "%s: %s needs a non-empty keyids array and 1 <= threshold <= its length",
		    m->name, where);
		rc = -1;
	}
	for (int i = 0; rc == 0 && i < n; i++) {
		jv id = jv_array_get(jv_copy(ids), i);
		if (!jv_object_has(jv_copy(keys), jv_copy(id))) {
			gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: %s: keyid %s is not in signed.keys",
				    m->name, where, jv_string_value(id));
			rc = -1;
		}
		for (int j = 0; rc == 0 && j < i; j++) {
			jv o = jv_array_get(jv_copy(ids), j);
			if (jv_equal(o, jv_copy(id))) {
				gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: %s: keyid %s listed twice",
					    m->name, where, jv_string_value(id));
				rc = -1;
			}
		}
		jv_free(id);
	}
	jv_free(ids);
	return rc;
}

static int check_root(struct gl_meta *m, struct gl_fail *f)
{
	static const char *const fields[] = {
	    "_type", "spec_version", "version", "expires", "keys", "roles", "consistent_snapshot"};
	static const char *const rfields[] = {"root", "targets"};
	if (check_fields(f, m->name, "signed", m->sig, fields, 7, 6) < 0 ||
	    check_common(m, "root", f) < 0)
		return -1;
	jv keys = gl_json_get(m->sig, "keys"), roles = gl_json_get(m->sig, "roles");
	jv cs = gl_json_get(m->sig, "consistent_snapshot");
	int rc = check_keys(m, keys, f);
	if (rc == 0 && jv_is_valid(cs) && jv_get_kind(cs) != JV_KIND_TRUE &&
	    jv_get_kind(cs) != JV_KIND_FALSE)
		rc = bad(f, "%s: signed.consistent_snapshot is not a boolean", m->name);
	jv_free(cs);
	if (rc == 0)
		rc = check_fields(f, m->name, "signed.roles", roles, rfields, 2, 2);
	for (int i = 0; rc == 0 && i < 2; i++) {
		jv r = gl_json_get(roles, rfields[i]);
		rc = check_role(m, keys, r, rfields[i], f);
		jv_free(r);
	}
	jv_free(keys);
	jv_free(roles);
	return rc;
}

int gl_tuf_target_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 255 || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return 0;
	}
	/* UTF-8 validity: ask the strict reader about the quoted name. */
	autobuf struct gl_buf q = {0};
	gl_buf_addc(&q, '"');
	for (size_t i = 0; i < n; i++) {
		if (name[i] == '"' || name[i] == '\\')
			gl_buf_addc(&q, '\\');
		gl_buf_addc(&q, name[i]);
	}
	gl_buf_addc(&q, '"');
	jv v = gl_json_parse(q.data, q.len);
	int ok = jv_is_valid(v);
	jv_free(v);
	return ok;
}

static int check_target(struct gl_meta *m, jv name, jv t, struct gl_fail *f)
{
	static const char *const fields[] = {"length", "hashes", "custom"};
	static const char *const hfields[] = {"sha256"};
	const char *n = jv_string_value(name);
	autofree char *where = gl_xasprintf("signed.targets[%s]", n);
	if (!gl_tuf_target_name_ok(n))
		return bad(f, "%s: %s: not a plain file name", m->name, where);
	if (check_fields(f, m->name, where, t, fields, 3, 2) < 0)
		return -1;
	int64_t len;
	jv h = gl_json_get(t, "hashes"), c = gl_json_get(t, "custom");
	int rc = 0;
	if (gl_json_get_int(t, "length", &len) < 0 || len < 0)
		rc = bad(f, "%s: %s.length is not an integer >= 0", m->name, where);
	if (rc == 0)
		rc = check_fields(f, m->name, "its hashes", h, hfields, 1, 1);
	if (rc == 0 && !is_lower_hex(gl_json_get_str(h, "sha256"), 64))
		rc = bad(f, "%s: %s.hashes.sha256 is not 64 lowercase hex digits", m->name, where);
	if (rc == 0 && jv_is_valid(c) && jv_get_kind(c) != JV_KIND_OBJECT)
		rc = bad(f, "%s: %s.custom is not an object", m->name, where);
	jv_free(h);
	jv_free(c);
	return rc;
}

static int check_targets(struct gl_meta *m, struct gl_fail *f)
{
	static const char *const fields[] = {"_type", "spec_version", "version", "expires",
					     "targets"};
	if (check_fields(f, m->name, "signed", m->sig, fields, 5, 5) < 0 ||
	    check_common(m, "targets", f) < 0)
		return -1;
	jv ts = gl_json_get(m->sig, "targets");
	int rc = 0;
	if (jv_get_kind(ts) != JV_KIND_OBJECT || jv_object_length(jv_copy(ts)) > GL_TUF_TARGETS_MAX)
		rc = bad(f,
			 "%s: signed.targets is not an object of "
			 "at most %d targets",
			 m->name, GL_TUF_TARGETS_MAX);
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

/* ---- loading ----------------------------------------------------------- */

enum gl_refusal gl_meta_parse(struct gl_meta *m, const char *name, const char *buf, size_t len,
			      enum gl_meta_type t, struct gl_fail *f)
{
	static const char *const env[] = {"signatures", "signed"};
	*m = (struct gl_meta){.name = gl_xstrdup(name), .doc = jv_invalid(), .sig = jv_invalid()};
	if (len > GL_TUF_META_MAX) {
		gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: larger than %u bytes", name,
			    GL_TUF_META_MAX);
		goto refused;
	}
	m->doc = gl_canon_parse(buf, len);
	if (!jv_is_valid(m->doc)) {
		jv msg = jv_invalid_get_msg(m->doc);
		m->doc = jv_invalid();
		gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: not canonical JSON: %s", name,
			    jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "invalid");
		jv_free(msg);
		goto refused;
	}
	jv sigs = gl_json_get(m->doc, "signatures");
	int rc = check_fields(f, name, "the document", m->doc, env, 2, 2);
	if (rc == 0)
		rc = check_signatures(f, name, sigs);
	jv_free(sigs);
	if (rc < 0)
		goto refused;
	m->sig = gl_json_get(m->doc, "signed");
	if ((t == GL_META_ROOT ? check_root(m, f) : check_targets(m, f)) < 0)
		goto refused;
	char *err = NULL;
	gl_canon_dump(&m->signed_bytes, m->sig, &err); /* cannot fail: the whole is canonical */
	free(err);
	gl_buf_add(&m->raw, buf, len);
	return GL_R_OK;
refused:
	gl_meta_free(m);
	return f->code;
}

enum gl_refusal gl_meta_load(struct gl_meta *m, const char *path, enum gl_meta_type t,
			     struct gl_fail *f)
{
	autofree char *buf = NULL;
	size_t len;
	*m = (struct gl_meta){.doc = jv_invalid(), .sig = jv_invalid()};
	if (gl_read_file_capped(path, GL_TUF_META_MAX, &buf, &len) < 0) {
		if (errno == EFBIG)
			return gl_fail_set(f, GL_R_BAD_SIGNATURE, "%s: larger than %u bytes", path,
					   GL_TUF_META_MAX);
		return gl_fail_set(f, GL_R_IO, "%s: %s", path, strerror(errno));
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

static int array_has(jv arr, const char *s)
{
	int found = 0;
	jv_array_foreach(arr, i, e)
	{
		(void)i;
		if (!found && !strcmp(jv_string_value(e), s))
			found = 1;
		jv_free(e);
	}
	return found;
}

static int cmp_str(jv a, jv b)
{
	return strcmp(jv_string_value(a), jv_string_value(b));
}

/* Sort a borrowed-by-value array of strings (consumes, returns owned). */
static jv sort_strings(jv arr)
{
	int n = jv_array_length(jv_copy(arr));
	for (int i = 1; i < n; i++) {
		for (int j = i; j > 0; j--) {
			jv a = jv_array_get(jv_copy(arr), j - 1), b = jv_array_get(jv_copy(arr), j);
			int c = cmp_str(a, b);
			if (c <= 0) {
				jv_free(a);
				jv_free(b);
				break;
			}
			arr = jv_array_set(arr, j - 1, b);
			arr = jv_array_set(arr, j, a);
		}
	}
	return arr;
}

/* Does signature s (borrowed) verify over m's signed bytes under the key
 * of keyid in root's keys? */
static int sig_valid(const struct gl_meta *m, const struct gl_meta *root, jv s)
{
	const char *kid = gl_json_get_str(s, "keyid"), *hex = gl_json_get_str(s, "sig");
	jv keys = gl_json_get(root->sig, "keys");
	jv key = gl_json_get(keys, kid);
	unsigned char pk[32], sig[64];
	autofree char *err = NULL;
	int ok = gl_pubkey_parse(key, pk, &err) == 0 && gl_unhex(hex, 128, sig, 64) == 0 &&
		 gl_key_verify(pk, m->signed_bytes.data, m->signed_bytes.len, sig);
	jv_free(key);
	jv_free(keys);
	return ok;
}

enum gl_refusal gl_meta_verify(const struct gl_meta *m, const struct gl_meta *root,
			       const char *role, jv *signers, struct gl_fail *f)
{
	jv r = gl_meta_role(root, role);
	jv ids = gl_json_get(r, "keyids");
	int64_t threshold = 0;
	gl_json_get_int(r, "threshold", &threshold);
	jv_free(r);
	jv sigs = gl_json_get(m->doc, "signatures");
	jv valid = jv_array();
	enum gl_refusal rc = GL_R_OK;
	jv_array_foreach(sigs, i, s)
	{
		const char *kid = gl_json_get_str(s, "keyid");
		if (rc == GL_R_OK && array_has(ids, kid)) {
			if (!sig_valid(m, root, s))
				rc =
				    gl_fail_set(f, GL_R_BAD_SIGNATURE,
						"%s: signature %d by key %s (authorised for the %s "
						"role of root version %lld) does not verify",
						m->name, i, kid, role, (long long)root->version);
			else if (!array_has(valid, kid))
				valid = jv_array_append(valid, jv_string(kid));
		}
		jv_free(s);
	}
	jv_free(sigs);
	jv_free(ids);
	int n = jv_array_length(jv_copy(valid));
	if (rc == GL_R_OK && n < threshold)
		rc = gl_fail_set(
		    f, GL_R_THRESHOLD,
		    "%s: %d valid signature%s from distinct keys of the %s role of root "
		    "version %lld; its threshold is %lld",
		    m->name, n, n == 1 ? "" : "s", role, (long long)root->version,
		    (long long)threshold);
	if (rc == GL_R_OK && signers)
		*signers = sort_strings(jv_copy(valid));
	jv_free(valid);
	return rc;
}

enum gl_refusal gl_meta_check_expiry(const struct gl_meta *m, int64_t now, struct gl_fail *f)
{
	if (m->expires > now)
		return GL_R_OK;
	char t[21], n[21];
	gl_time_format(m->expires, t);
	gl_time_format(now, n);
	return gl_fail_set(f, GL_R_EXPIRED, "%s: version %lld expired at %s (now %s)", m->name,
			   (long long)m->version, t, n);
}

/* ---- writing ----------------------------------------------------------- */

jv gl_tuf_role(const struct gl_key *keys, size_t n, int64_t threshold)
{
	jv ids = jv_array();
	for (size_t i = 0; i < n; i++) {
		if (!array_has(ids, keys[i].keyid))
			ids = jv_array_append(ids, jv_string(keys[i].keyid));
	}
	jv r = jv_object_set(jv_object(), jv_string("keyids"), sort_strings(ids));
	return jv_object_set(r, jv_string("threshold"), jv_number((double)threshold));
}

jv gl_tuf_keys_add(jv keys, const struct gl_key *ks, size_t n)
{
	for (size_t i = 0; i < n; i++)
		keys = jv_object_set(keys, jv_string(ks[i].keyid), gl_pubkey_json(ks[i].pk));
	return keys;
}

static jv common_signed(const char *type, int64_t version, int64_t expires)
{
	char t[21];
	gl_time_format(expires, t);
	jv s = jv_object_set(jv_object(), jv_string("_type"), jv_string(type));
	s = jv_object_set(s, jv_string("spec_version"), jv_string(GL_TUF_SPEC_VERSION));
	s = jv_object_set(s, jv_string("version"), jv_number((double)version));
	return jv_object_set(s, jv_string("expires"), jv_string(t));
}

jv gl_tuf_root_signed(int64_t version, int64_t expires, jv keys, jv root_role, jv targets_role)
{
	jv roles = jv_object_set(jv_object(), jv_string("root"), root_role);
	roles = jv_object_set(roles, jv_string("targets"), targets_role);
	jv s = common_signed("root", version, expires);
	s = jv_object_set(s, jv_string("keys"), keys);
	return jv_object_set(s, jv_string("roles"), roles);
}

jv gl_tuf_targets_signed(int64_t version, int64_t expires, jv targets)
{
	return jv_object_set(common_signed("targets", version, expires), jv_string("targets"),
			     targets);
}

jv gl_tuf_sign(jv signed_, const struct gl_key *ks, size_t n)
{
	autobuf struct gl_buf b = {0};
	autofree char *err = NULL;
	if (gl_canon_dump(&b, signed_, &err) < 0)
		gl_die(GL_EXIT_USAGE, "cannot sign: %s", err);
	jv sigs = jv_array(), seen = jv_array();
	for (size_t i = 0; i < n; i++) {
		if (!ks[i].sk || array_has(seen, ks[i].keyid))
			continue;
		unsigned char sig[64];
		char hex[129];
		gl_key_sign(&ks[i], b.data, b.len, sig);
		gl_hex(sig, 64, hex);
		jv s = jv_object_set(jv_object(), jv_string("keyid"), jv_string(ks[i].keyid));
		sigs = jv_array_append(sigs, jv_object_set(s, jv_string("sig"), jv_string(hex)));
		seen = jv_array_append(seen, jv_string(ks[i].keyid));
	}
	jv_free(seen);
	jv doc = jv_object_set(jv_object(), jv_string("signed"), signed_);
	return jv_object_set(doc, jv_string("signatures"), sigs);
}

int gl_tuf_write(const char *path, jv doc, char **err)
{
	autobuf struct gl_buf b = {0};
	if (gl_canon_dump(&b, doc, err) < 0)
		return -1;
	if (gl_atomic_write(path, b.data, b.len, 0644) < 0) {
		*err = gl_xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
