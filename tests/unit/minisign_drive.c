/* minisign_drive — a test driver for lib/sign/minisign.h (tests/minisign.bats).
 *
 *   minisign_drive KEY FILE [--sig PATH] [--pubkey-file PATH]
 *
 * Loads the secret key KEY (gl-sign's NAME.key; GL_PASSPHRASE if it is
 * encrypted), writes FILE.minisig (or --sig PATH) and, with --pubkey-file,
 * the public key file, and prints {"pubkey":"RW…","keyid":…}. */
#define _GNU_SOURCE
#include <jv.h>
#include <string.h>

#include "json/json.h"
#include "sign/keys.h"
#include "sign/minisign.h"

static const char usage[] = "usage: minisign_drive KEY FILE [--sig PATH] [--pubkey-file PATH]\n";

int main(int argc, char **argv)
{
	gl_prog = "minisign_drive";
	const char *sig = NULL, *pubfile = NULL, *pos[2] = {0}, *v;
	int npos = 0;
	for (int i = 1; i < argc; i++) {
		if ((v = gl_flag_value(argc, argv, &i, "--sig", usage)))
			sig = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--pubkey-file", usage)))
			pubfile = v;
		else if (npos < 2)
			pos[npos++] = argv[i];
		else
			gl_die(GL_EXIT_USAGE, "%s", usage);
	}
	if (npos != 2)
		gl_die(GL_EXIT_USAGE, "%s", usage);
	autofail struct gl_fail hf = {0};
	if (gl_keys_harden(&hf) < 0)
		return gl_fail_report(&hf);
	struct gl_key k = {0};
	autofail struct gl_fail kf = {0};
	if (gl_key_load(pos[0], GL_KEY_SECRET, &k, &kf) != GL_E_OK)
		gl_die(GL_EXIT_USAGE, "%s", kf.detail ? kf.detail : "cannot load the key");
	autofail struct gl_fail f = {0};
	enum gl_code r = gl_minisign_write(&k, pos[1], sig, &f);
	if (r == GL_E_OK && pubfile)
		r = gl_minisign_pubkey_write(&k, pubfile, &f);
	if (r != GL_E_OK) {
		gl_key_free(&k);
		return gl_fail_report(&f);
	}
	char pub[GL_MINISIGN_PUBKEY_LEN];
	if (gl_minisign_pubkey(&k, pub, sizeof pub, &f) < 0) {
		gl_key_free(&k);
		return gl_fail_report(&f);
	}
	jv o = jv_object();
	o = jv_object_set(o, jv_string("pubkey"), jv_string(pub));
	o = jv_object_set(o, jv_string("keyid"), jv_string(k.keyid));
	gl_json_emit(o);
	gl_key_free(&k);
	return 0;
}
