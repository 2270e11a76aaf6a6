/* json.c — the strict JSON reader, gl_json_parse (lib/json/json_read.c),
 * on any bytes: its node count first (gl_json_nodes, the pass that bounds
 * what a document may cost), then the parse; a value it took is walked by
 * the writers that follow it in the pipeline (compact and canonical) and
 * by the depth check, and must round-trip (fuzz_roundtrip). The same bytes
 * through the TUF variant (gl_json_parse_tuf) and its round trip. */
#include "fuzz.h"

#include "json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	gl_json_nodes(buf, size, GL_JSON_NODES_MAX);
	jv v = gl_json_parse(buf, size);
	if (jv_is_valid(v)) {
		autobuf struct gl_buf out = {0}, canon = {0};
		autofail struct gl_fail f = {0};
		gl_json_dump(&out, v);
		gl_canon_dump(&canon, v, &f);
		gl_json_depth(v, GL_JSON_MAX_DEPTH);
		fuzz_roundtrip(v, gl_json_parse, false, "strict reader");
	}
	jv_free(v);
	jv t = gl_json_parse_tuf(buf, size);
	if (jv_is_valid(t))
		fuzz_roundtrip(t, gl_json_parse_tuf, false, "TUF reader");
	jv_free(t);
	return 0;
}
