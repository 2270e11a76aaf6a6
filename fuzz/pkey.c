/* pkey.c — TUF key objects and signatures (lib/sign/pkey.c, keys.c): what
 * a root or a delegation lists as a key, and the hex signature a document
 * carries, are the adversary's (paper §III). The input is a JSON object
 * read by the TUF reader (a PEM key's raw newlines):
 *   {"key":{"keytype","scheme","keyval":{"public"}},"sig":HEX,"msg":TEXT}
 * and the key goes through its keyid (gl_pkey_keyid), the strict Ed25519
 * public-key parser (gl_pubkey_parse) and a verification of sig over msg
 * (gl_pkey_verify: ed25519 with libsodium; ECDSA P-256 and RSA-PSS with
 * OpenSSL, PEM parsing included).
 *
 * This target stands for the minisign one of the plan: lib/sign/minisign.c
 * only writes (FILE.minisig and the public key line) and parses nothing;
 * a minisign signature is checked by minisign itself (tests/minisign.bats). */
#include "fuzz.h"

#include "json/json.h"
#include "sign/keys.h"
#include "sign/pkey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jv in = gl_json_parse_tuf((const char *)data, size);
	if (jv_get_kind(in) != JV_KIND_OBJECT) {
		jv_free(in);
		return 0;
	}
	jv key = gl_json_get(in, "key");
	if (jv_is_valid(key)) {
		char keyid[65];
		unsigned char pk[32];
		autofail struct gl_fail f = {0}, g = {0}, h = {0};
		gl_pkey_keyid(key, keyid, &f);
		gl_pubkey_parse(key, pk, &g);
		const char *sig = gl_json_get_str(in, "sig"), *msg = gl_json_get_str(in, "msg");
		if (sig)
			gl_pkey_verify(key, (const unsigned char *)(msg ? msg : ""),
				       msg ? strlen(msg) : 0, sig, &h);
	}
	jv_free(key);
	jv_free(in);
	return 0;
}
