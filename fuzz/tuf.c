/* tuf.c — TUF metadata as a repository serves it (lib/sign/tuf.c): the
 * TUF variant of the strict reader (gl_json_parse_tuf: control characters
 * verbatim in strings, as a PEM key has them), then gl_meta_parse as each
 * of the four roles. A document the parser took goes on to what reads it
 * next: a root verifies its own signatures with the keys it lists (so
 * every key type's parsing, lib/sign/pkey.c, runs on what the input
 * holds), a timestamp or snapshot names its file entries, a targets
 * document its target paths; every role's expiry is checked. */
#include "fuzz.h"

#include "sign/tuf.h"
#include "json/json.h"

static void after_parse(struct gl_meta *m, const uint8_t *data, size_t size)
{
	autofail struct gl_fail f = {0};
	gl_meta_check_expiry(m, 1700000000, &f);
	if (m->type == GL_META_ROOT) {
		autofail struct gl_fail v = {0};
		gl_meta_verify(m, m, "root", NULL, &v);
		jv_free(gl_meta_role(m, "targets"));
		gl_meta_consistent(m);
	} else if (m->type == GL_META_TIMESTAMP || m->type == GL_META_SNAPSHOT) {
		int64_t version, length;
		jv hashes = jv_invalid();
		if (gl_meta_file(m, m->type == GL_META_TIMESTAMP ? "snapshot.json" : "targets.json",
				 &version, &length, &hashes) == 0) {
			autofail struct gl_fail c = {0};
			gl_tuf_check_bytes("fuzz", data, size, length, hashes, &c);
		}
		jv_free(hashes);
	} else {
		jv t = gl_json_get(m->sig, "targets");
		if (jv_get_kind(t) == JV_KIND_OBJECT)
			jv_object_foreach(t, k, v)
			{
				gl_tuf_target_path_ok(jv_string_value(k));
				jv_free(k);
				jv_free(v);
			}
		jv_free(t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	jv v = gl_json_parse_tuf(buf, size);
	bool object = jv_get_kind(v) == JV_KIND_OBJECT;
	jv_free(v);
	if (!object)
		return 0;
	static const enum gl_meta_type types[] = {GL_META_ROOT, GL_META_TARGETS, GL_META_SNAPSHOT,
						  GL_META_TIMESTAMP};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		struct gl_meta m;
		autofail struct gl_fail f = {0};
		if (gl_meta_parse(&m, "fuzz.json", buf, size, types[i], &f) != GL_E_OK)
			continue; /* m is left empty */
		after_parse(&m, data, size);
		gl_meta_free(&m);
	}
	return 0;
}
