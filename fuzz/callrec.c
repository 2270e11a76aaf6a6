/* callrec.c — a result record given to gl-verify call
 * (lib/evidence/call_binding.c, gl_call_verify) and to gl-replay's stream
 * (lib/evidence/trigger_list.c, gl_triggers_signer): the record is whatever
 * stood in a results file, the adversary's (paper §III: anyone between
 * gl-run and an auditor may edit it). The input is one line, read as
 * gl-verify call reads it (gl_json_parse); its receipts list is checked
 * and its statement rebuilt, canonicalised and checked against a fixed
 * public key (no input verifies: the path up to the signature check is
 * what is fuzzed); its triggers_signature read, its key derived and its
 * statement rebuilt the same way. */
#include "fuzz.h"

#include "evidence/call_binding.h"
#include "evidence/trigger_list.h"
#include "json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char pk[32] = {1};
	jv rec = gl_json_parse((const char *)data, size);
	if (jv_get_kind(rec) == JV_KIND_OBJECT) {
		autofail struct gl_fail f = {0};
		gl_call_verify(rec, pk, &f);
		char keyid[GL_KEYID_HEX];
		gl_triggers_signer(rec, keyid);
	}
	jv_free(rec);
	return 0;
}
