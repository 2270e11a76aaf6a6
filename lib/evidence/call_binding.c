/* call_binding.c — a call's receipts, signed; see call_binding.h. */
#include "evidence/call_binding.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "evidence/receipt_set.h"
#include "evidence/witness_key.h"
#include "json/json.h"

#define IDS_MAX 256 /* receipts one record may name (gl-verify receipt's own cap) */

/* The SHA-256 (hex) of the canonical statement rec's fields make. 0, or
 * -1 with f (not canonical JSON: an id that is not a JSON scalar). */
static int digest(jv rec, char hex[65], struct gl_fail *f)
{
	jv st = JV_OBJECT(jv_string("_type"), jv_string(GL_CALL_TYPE), jv_string("call"),
			  gl_json_get_or_null(rec, "id"), jv_string("mode"),
			  gl_json_get_or_null(rec, "mode"), jv_string("receipts"),
			  gl_json_get_or_null(rec, "receipts"), jv_string("release"),
			  gl_json_get_or_null(rec, "release"));
	int rc = gl_statement_digest(st, hex, f);
	jv_free(st);
	return rc;
}

jv gl_call_sign(jv rec, const struct gl_key *k)
{
	char hex[65], sig[129];
	autofail struct gl_fail f = {0};
	/* An envelope id may be any JSON number; one canonical JSON refuses
	 * (1.5) leaves the statement unsigned — the session goes on, and
	 * gl-verify call answers the record bad_signature ("missing"). */
	if (digest(rec, hex, &f) < 0) {
		gl_warn("a call's receipts are not signed: %s (gl-verify call cannot bind them)",
			gl_fail_detail(&f));
		return rec;
	}
	gl_statement_sign(k, GL_CALL_SIG_CONTEXT, hex, sig);
	return jv_object_set(rec, jv_string("receipts_signature"), jv_string(sig));
}

/* GL_TESTING builds with GL_TEST_CALL_BINDING_OFF=1: the signature is not
 * checked (the record's own list of receipts is believed, as before
 * gl-verify call: tests/receipts.bats). */
static bool binding_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_CALL_BINDING_OFF");
}

int gl_call_verify(jv rec, const unsigned char pk[32], struct gl_fail *f)
{
	jv ids = jv_object_get(jv_copy(rec), jv_string("receipts"));
	bool ok = jv_get_kind(ids) == JV_KIND_ARRAY && jv_array_length(jv_copy(ids)) <= IDS_MAX;
	if (ok)
		jv_array_foreach(ids, i, id)
		{
			ok &= jv_get_kind(id) == JV_KIND_STRING &&
			      gl_sha256_hex_ok(jv_string_value(id),
					       (size_t)jv_string_length_bytes(jv_copy(id)));
			jv_free(id);
		}
	jv_free(ids);
	if (!ok)
		return gl_fail(f, GL_E_BAD_RECORD,
			       "receipts: not an array of at most %d receipt ids (64 lowercase hex)",
			       IDS_MAX);
	if (binding_off())
		return 0;
	const char *sig = gl_json_get_str(rec, "receipts_signature");
	char hex[65];
	autofail struct gl_fail why = {0};
	if (!sig)
		return gl_fail(f, GL_E_BAD_SIGNATURE,
			       "receipts_signature: missing (gl-run signs a call's receipts "
			       "whenever it writes receipts)");
	if (digest(rec, hex, &why) < 0 || !gl_statement_sig_ok(pk, GL_CALL_SIG_CONTEXT, hex, sig))
		return gl_fail(f, GL_E_BAD_SIGNATURE,
			       "receipts_signature: does not verify with the host key for this "
			       "record's id, mode, receipts and release (changed after gl-run "
			       "wrote it, or signed by another key)");
	return 0;
}

/* The receipts rec (borrowed, verified) names, each from dir; *all false
 * when one does not verify. The list (owned), or jv_invalid() with f (io). */
static jv receipts(jv rec, const unsigned char pk[32], const char *dir, const char *profile,
		   int64_t now, bool *all, struct gl_fail *f)
{
	const char *rel = gl_json_get_str(rec, "release");
	struct gl_receipt_expect x = {.profile = profile};
	if (rel && gl_sha256_hex_ok(rel, strlen(rel)))
		x.release = rel;
	jv ids = jv_object_get(jv_copy(rec), jv_string("receipts")), list = jv_array();
	*all = true;
	jv_array_foreach(ids, i, v)
	{
		autofree char *p = gl_xasprintf("%s/%s.json", dir, jv_string_value(v));
		const char *files[1] = {p};
		jv r;
		x.receipt = jv_string_value(v);
		int rc = gl_receipt_set_verify(files, 1, pk, &x, now, &r, f);
		jv_free(v);
		if (rc < 0) {
			jv_free(list);
			list = jv_invalid();
			break;
		}
		*all &= gl_json_get_bool(r, "ok", 0) == 1;
		list = jv_array_append(list, r);
	}
	jv_free(ids);
	return list;
}

int gl_call_check(jv rec, const unsigned char pk[32], const char *dir, const char *profile,
		  int64_t now, jv *out, struct gl_fail *f)
{
	*out = jv_object();
	autofail struct gl_fail why = {0};
	if (jv_get_kind(rec) != JV_KIND_OBJECT) {
		gl_fail(&why, GL_E_BAD_RECORD, "not a JSON object");
	} else {
		jv id = jv_object_get(jv_copy(rec), jv_string("id"));
		jv_kind k = jv_get_kind(id);
		if (k == JV_KIND_STRING || k == JV_KIND_NUMBER || k == JV_KIND_NULL)
			*out = jv_object_set(*out, jv_string("call"), id);
		else
			jv_free(id);
	}
	if (!why.code && gl_call_verify(rec, pk, &why) == 0) {
		bool all;
		jv list = receipts(rec, pk, dir, profile, now, &all, f);
		if (!jv_is_valid(list)) {
			jv_free(rec);
			jv_free(*out);
			*out = jv_invalid();
			return -1;
		}
		*out = jv_object_set(*out, jv_string("receipts"), list);
		if (!all)
			gl_fail(&why, GL_E_MISMATCH, "a receipt the record names does not verify");
	}
	jv_free(rec);
	*out = jv_object_set(*out, jv_string("ok"), jv_bool(!why.code));
	if (why.code) {
		*out = jv_object_set(*out, jv_string("error"), jv_string(gl_code_name(why.code)));
		*out = jv_object_set(*out, jv_string("detail"), jv_string(gl_fail_detail(&why)));
	}
	return 0;
}
