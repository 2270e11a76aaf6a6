/* canon.c — the canonical JSON reader, gl_canon_parse (SPEC §3; what a
 * witness and signed metadata must be), on any bytes; what it takes is
 * written back by both canonical writers. */
#include "fuzz.h"

#include "json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jv v = gl_canon_parse((const char *)data, size);
	if (jv_is_valid(v)) {
		autobuf struct gl_buf a = {0}, b = {0};
		autofail struct gl_fail f = {0}, g = {0};
		gl_canon_dump(&a, v, &f);
		gl_canon_dump_tuf(&b, v, &g);
		fuzz_roundtrip(v, gl_canon_parse, true, "canonical reader");
	}
	jv_free(v);
	return 0;
}
