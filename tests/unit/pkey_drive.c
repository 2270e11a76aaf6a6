/* pkey_drive — a test driver for lib/sign/pkey.h (tests/pkey.bats).
 *
 *   pkey_drive KEY.json MSGFILE SIGHEX     verify; prints {"ok",…,"keyid"}
 *   pkey_drive KEY.json                    prints {"keyid":…}
 *
 * KEY.json is one TUF key object (any JSON encoding). Exit 0 if the
 * signature verifies, 1 if refused, 2 on I/O. */
#define _GNU_SOURCE
#include <jv.h>
#include <string.h>

#include "json/json.h"
#include "sign/pkey.h"

int main(int argc, char **argv)
{
	gl_prog = "pkey_drive";
	if (argc != 2 && argc != 4)
		gl_die(GL_EXIT_USAGE, "usage: pkey_drive KEY.json [MSGFILE SIGHEX]");
	autofree char *text = NULL, *msg = NULL;
	autofail struct gl_fail kf = {0};
	size_t tlen, mlen = 0;
	if (gl_read_file_capped(argv[1], 1 << 20, &text, &tlen) < 0)
		gl_die_errno(GL_EXIT_USAGE, "%s", argv[1]);
	jv key = jv_parse_sized(text, (int)tlen);
	if (!jv_is_valid(key))
		gl_die(GL_EXIT_USAGE, "%s: not JSON", argv[1]);
	jv o = jv_object();
	char id[65];
	if (gl_pkey_keyid(key, id, &kf) == 0)
		o = jv_object_set(o, jv_string("keyid"), jv_string(id));
	else
		o = jv_object_set(o, jv_string("keyid_error"), jv_string(gl_fail_detail(&kf)));
	enum gl_code r = GL_E_OK;
	if (argc == 4) {
		if (gl_read_file_capped(argv[2], 1 << 26, &msg, &mlen) < 0)
			gl_die_errno(GL_EXIT_USAGE, "%s", argv[2]);
		autofail struct gl_fail f = {0};
		r = gl_pkey_verify(key, (const unsigned char *)msg, mlen, argv[3], &f);
		o = jv_object_set(o, jv_string("ok"), jv_bool(r == GL_E_OK));
		if (r != GL_E_OK) {
			o = jv_object_set(o, jv_string("error"), jv_string(gl_code_name(r)));
			o = jv_object_set(o, jv_string("detail"),
					  jv_string(f.detail ? f.detail : ""));
		}
	}
	jv_free(key);
	gl_json_emit(o);
	return gl_code_exit(r);
}
