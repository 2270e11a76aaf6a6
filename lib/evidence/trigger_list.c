/* trigger_list.c — a result record's triggers, signed; see trigger_list.h. */
#include "evidence/trigger_list.h"

#include <string.h>

#include "core/fail.h"
#include "core/sha.h"
#include "core/util.h"
#include "evidence/witness_key.h"
#include "json/json.h"

/* The SHA-256 (hex) of the canonical statement rec's fields make. 0, or
 * -1 (not canonical JSON). */
static int digest(jv rec, char hex[65])
{
	jv st = JV_OBJECT(jv_string("_type"), jv_string(GL_TRIGGERS_TYPE), jv_string("call"),
			  gl_json_get_or_null(rec, "id"), jv_string("release"),
			  gl_json_get_or_null(rec, "release"), jv_string("triggers"),
			  gl_json_get_or_null(rec, "triggers"));
	autofail struct gl_fail f = {0};
	int rc = gl_statement_digest(st, hex, &f);
	jv_free(st);
	return rc;
}

jv gl_triggers_sign(jv rec, const struct gl_key *k)
{
	jv t = jv_object_get(jv_copy(rec), jv_string("triggers"));
	bool any = jv_get_kind(t) == JV_KIND_ARRAY && jv_array_length(jv_copy(t)) > 0;
	jv_free(t);
	char hex[65], sig[129], pk[65];
	if (!any || !k || !k->sk)
		return rec;
	if (digest(rec, hex) < 0) {
		gl_warn("a call's triggers are not signed: its id is a number but not an integer "
			"(a trigger of it that cannot be replayed counts for nobody)");
		return rec;
	}
	gl_statement_sign(k, GL_TRIGGERS_SIG_CONTEXT, hex, sig);
	gl_hex(k->pk, 32, pk);
	return jv_object_set(rec, jv_string("triggers_signature"),
			     JV_OBJECT(jv_string("keyid"), jv_string(k->keyid), jv_string("public"),
				       jv_string(pk), jv_string("signature"), jv_string(sig)));
}

int gl_triggers_signer(jv rec, char keyid[GL_KEYID_HEX])
{
	jv s = jv_object_get(jv_copy(rec), jv_string("triggers_signature"));
	const char *id = gl_json_get_str(s, "keyid"), *pub = gl_json_get_str(s, "public");
	const char *sig = gl_json_get_str(s, "signature");
	unsigned char pk[32];
	char want[GL_KEYID_HEX], hex[65];
	int rc = -1;
	if (id && pub && sig && strlen(pub) == 64 && gl_sha256_hex_ok(pub, 64) &&
	    gl_unhex(pub, 64, pk, sizeof pk) == 0) {
		gl_keyid(pk, want);
		if (!strcmp(want, id) && digest(rec, hex) == 0 &&
		    gl_statement_sig_ok(pk, GL_TRIGGERS_SIG_CONTEXT, hex, sig)) {
			memcpy(keyid, want, GL_KEYID_HEX);
			rc = 0;
		}
	}
	jv_free(s);
	return rc;
}
