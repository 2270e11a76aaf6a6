/* tuf_verify.c — TUF metadata: signatures and thresholds (every key type
 * through one dispatch), expiry, and the length/hashes a parent role gives
 * (TUF specification §5; SPEC §3); see tuf.h. Parsing is lib/sign/tuf.c. */
#define _GNU_SOURCE
#include <sodium.h>
#include <string.h>

#include "core/sha.h"
#include "json/json.h"
#include "sign/pkey.h"
#include "sign/tuf.h"

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

/* Sort an array of strings (consumes, returns owned). */
static jv sort_strings(jv arr)
{
	return jv_sort(arr, jv_copy(arr));
}

/* Does hex sig verify over msg under key (borrowed)? 1 yes, 0 no, -1 the
 * key type is not one this host verifies, -2 the key's shape is wrong (kf
 * set). The one place a key type is dispatched: Ed25519 here (libsodium),
 * every other TUF scheme through lib/sign/pkey.h (OpenSSL's libcrypto). */
static int key_verify(jv key, const struct gl_buf *msg, const char *hex, struct gl_fail *kf)
{
	const char *kt = gl_json_get_str(key, "keytype"), *sc = gl_json_get_str(key, "scheme");
	if (!kt || !sc || strcmp(kt, "ed25519") || strcmp(sc, "ed25519")) {
		switch (gl_pkey_verify(key, (const unsigned char *)msg->data, msg->len, hex, kf)) {
		case GL_E_OK: return 1;
		case GL_E_UNSUPPORTED: return -1;
		case GL_E_BAD_METADATA: return -2;
		default: return 0;
		}
	}
	jv kv = gl_json_get(key, "keyval");
	const char *pub = gl_json_get_str(kv, "public");
	unsigned char pk[32], sig[64];
	int ok = pub && gl_unhex(pub, strlen(pub), pk, 32) == 0 &&
		 gl_unhex(hex, strlen(hex), sig, 64) == 0 &&
		 gl_key_verify(pk, msg->data, msg->len, sig);
	jv_free(kv);
	return ok;
}

/* Verify m against the role object r with keys (both consumed); by says
 * who made the role ("root version 2"). */
static enum gl_code verify_with(const struct gl_meta *m, jv keys, jv r, const char *role,
				   const char *by, jv *signers, struct gl_fail *f)
{
	jv ids = gl_json_get(r, "keyids");
	int64_t threshold = 0;
	gl_json_get_int(r, "threshold", &threshold);
	jv_free(r);
	jv sigs = gl_json_get(m->doc, "signatures");
	jv valid = jv_array();
	autofree char *unsup = NULL;
	enum gl_code rc = GL_E_OK;
	jv_array_foreach(sigs, i, s)
	{
		const char *kid = gl_json_get_str(s, "keyid");
		if (rc == GL_E_OK && array_has(ids, kid)) {
			jv key = gl_json_get(keys, kid);
			autofail struct gl_fail kf = {0};
			int ok = key_verify(key, &m->signed_bytes, gl_json_get_str(s, "sig"), &kf);
			if (ok == -2)
				rc = gl_fail_set(f, GL_E_BAD_METADATA, "%s: key %s: %s", m->name, kid,
						 kf.detail ? kf.detail : "malformed");
			else if (ok < 0 && !unsup) {
				const char *kt = gl_json_get_str(key, "keytype");
				unsup = gl_quote(kt ? kt : "?", kt ? strlen(kt) : 1);
			} else if (ok == 0)
				rc = gl_fail_set(f, GL_E_BAD_SIGNATURE,
						 "%s: signature %d by key %s (authorised for the %s "
						 "role of %s) does not verify",
						 m->name, i, kid, role, by);
			else if (ok > 0 && !array_has(valid, kid))
				valid = jv_array_append(valid, jv_string(kid));
			jv_free(key);
		}
		jv_free(s);
	}
	jv_free(sigs);
	jv_free(ids);
	jv_free(keys);
	int n = jv_array_length(jv_copy(valid));
	if (rc == GL_E_OK && n < threshold && unsup)
		rc = gl_fail_set(f, GL_E_UNSUPPORTED,
				 "%s: %d valid signature%s of the %s role (threshold %lld); a key "
				 "of type %s cannot be verified on this host",
				 m->name, n, n == 1 ? "" : "s", role, (long long)threshold, unsup);
	else if (rc == GL_E_OK && n < threshold)
		rc = gl_fail_set(
		    f, GL_E_THRESHOLD,
		    "%s: %d valid signature%s from distinct keys of the %s role of %s; its "
		    "threshold is %lld",
		    m->name, n, n == 1 ? "" : "s", role, by, (long long)threshold);
	if (rc == GL_E_OK && signers)
		*signers = sort_strings(jv_copy(valid));
	jv_free(valid);
	return rc;
}

enum gl_code gl_meta_verify(const struct gl_meta *m, const struct gl_meta *root,
			       const char *role, jv *signers, struct gl_fail *f)
{
	char by[48];
	snprintf(by, sizeof by, "root version %lld", (long long)root->version);
	return verify_with(m, gl_json_get(root->sig, "keys"), gl_meta_role(root, role), role, by,
			   signers, f);
}

enum gl_code gl_meta_verify_delegated(const struct gl_meta *m, const struct gl_meta *parent,
					 jv role, jv *signers, struct gl_fail *f)
{
	jv d = gl_json_get(parent->sig, "delegations");
	jv keys = gl_json_get(d, "keys");
	jv_free(d);
	const char *name = gl_json_get_str(role, "name");
	autofree char *by = gl_xasprintf("the delegation in %s", parent->name);
	return verify_with(m, keys, jv_copy(role), name ? name : "?", by, signers, f);
}

enum gl_code gl_meta_check_expiry(const struct gl_meta *m, int64_t now, struct gl_fail *f)
{
	if (m->expires > now)
		return GL_E_OK;
	char t[21], n[21];
	gl_time_format(m->expires, t);
	gl_time_format(now, n);
	return gl_fail_set(f, GL_E_EXPIRED, "%s: %s version %lld expired at %s (now %s)", m->name,
			   gl_meta_type_name(m->type), (long long)m->version, t, n);
}

/* ---- hashes ------------------------------------------------------------ */

enum gl_code gl_tuf_check_bytes(const char *name, const void *data, size_t len,
				   int64_t want_len, jv hashes, struct gl_fail *f)
{
	if (want_len >= 0 && (uint64_t)want_len != len)
		return gl_fail_set(f, GL_E_LENGTH, "%s: %zu bytes, but its parent role says %lld",
				   name, len, (long long)want_len);
	if (jv_get_kind(hashes) != JV_KIND_OBJECT)
		return GL_E_OK;
	int checked = 0;
	const char *want;
	char hex[129];
	if ((want = gl_json_get_str(hashes, "sha256"))) {
		unsigned char d[GL_SHA256_BYTES];
		gl_sha256(d, data, len);
		gl_hex(d, sizeof d, hex);
		if (strcasecmp(hex, want))
			return gl_fail_set(f, GL_E_HASH, "%s: SHA-256 is %s, but its parent role says %.64s",
					   name, hex, want);
		checked++;
	}
	if ((want = gl_json_get_str(hashes, "sha512"))) {
		unsigned char d[GL_SHA512_BYTES];
		gl_sha512(d, data, len);
		gl_hex(d, sizeof d, hex);
		if (strcasecmp(hex, want))
			return gl_fail_set(f, GL_E_HASH, "%s: SHA-512 is %s, but its parent role says %.128s",
					   name, hex, want);
		checked++;
	}
	if (!checked)
		return gl_fail_set(f, GL_E_UNSUPPORTED,
				   "%s: its parent role lists no hash this host supports (sha256, "
				   "sha512)",
				   name);
	return GL_E_OK;
}
