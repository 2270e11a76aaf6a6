/* tuf_write.c — building and signing TUF metadata (gl-sign; TUF
 * specification §4); see tuf.h. Everything is written canonical. */
#define _GNU_SOURCE
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "core/sha.h"
#include "json/json.h"
#include "sign/tuf.h"

static int has_str(jv arr, const char *s)
{
	int found = 0;
	jv_array_foreach(arr, i, e)
	{
		(void)i;
		found |= !strcmp(jv_string_value(e), s);
		jv_free(e);
	}
	return found;
}

jv gl_tuf_role(const struct gl_key *keys, size_t n, int64_t threshold)
{
	jv ids = jv_array();
	for (size_t i = 0; i < n; i++) {
		if (!has_str(ids, keys[i].keyid))
			ids = jv_array_append(ids, jv_string(keys[i].keyid));
	}
	jv r = jv_object_set(jv_object(), jv_string("keyids"), jv_sort(ids, jv_copy(ids)));
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

jv gl_tuf_root_signed(int64_t version, int64_t expires, jv keys, jv roles, int consistent)
{
	jv s = common_signed("root", version, expires);
	s = jv_object_set(s, jv_string("consistent_snapshot"), jv_bool(consistent));
	s = jv_object_set(s, jv_string("keys"), keys);
	return jv_object_set(s, jv_string("roles"), roles);
}

jv gl_tuf_targets_signed(int64_t version, int64_t expires, jv targets)
{
	return jv_object_set(common_signed("targets", version, expires), jv_string("targets"),
			     targets);
}

jv gl_tuf_snapshot_signed(int64_t version, int64_t expires, jv meta)
{
	return jv_object_set(common_signed("snapshot", version, expires), jv_string("meta"), meta);
}

jv gl_tuf_timestamp_signed(int64_t version, int64_t expires, jv meta)
{
	return jv_object_set(common_signed("timestamp", version, expires), jv_string("meta"),
			     meta);
}

jv gl_tuf_meta_entry(int64_t version, const void *data, size_t len)
{
	jv e = jv_object_set(jv_object(), jv_string("version"), jv_number((double)version));
	if (!data)
		return e;
	unsigned char d[GL_SHA256_BYTES];
	char hex[2 * sizeof d + 1];
	gl_sha256(d, data, len);
	gl_hex(d, sizeof d, hex);
	e = jv_object_set(e, jv_string("length"), jv_number((double)len));
	return jv_object_set(e, jv_string("hashes"),
			     jv_object_set(jv_object(), jv_string("sha256"), jv_string(hex)));
}

jv gl_tuf_sign(jv signed_, const struct gl_key *ks, size_t n, struct gl_fail *f)
{
	autobuf struct gl_buf b = {0};
	if (gl_canon_dump_tuf(&b, signed_, f) < 0) {
		jv_free(signed_);
		gl_fail_set(f, GL_E_IO, "cannot sign: %s", gl_fail_detail(f));
		return jv_invalid();
	}
	jv sigs = jv_array(), seen = jv_array();
	for (size_t i = 0; i < n; i++) {
		if (!ks[i].sk || has_str(seen, ks[i].keyid))
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

int gl_tuf_dump(struct gl_buf *b, jv doc, struct gl_fail *f)
{
	return gl_canon_dump_tuf(b, doc, f);
}

int gl_tuf_write(const char *path, jv doc, struct gl_fail *f)
{
	autobuf struct gl_buf b = {0};
	if (gl_tuf_dump(&b, doc, f) < 0)
		return -1;
	if (gl_atomic_write(path, b.data, b.len, 0644) < 0)
		return gl_fail(f, GL_E_IO, "%s: %s", path, strerror(errno));
	return 0;
}
