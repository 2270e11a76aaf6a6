/* manifest.c — a release's manifest.json (lib/release/manifest.c): bytes
 * straight from the release archive. gl_manifest_parse (the strict reader,
 * then gl_manifest_check on every field); a manifest it took is read the
 * way the host reads it: runtime, protocol, and each declared function. */
#include "fuzz.h"

#include "json/json.h"
#include "release/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jv m = gl_manifest_parse((const char *)data, size);
	if (jv_is_valid(m)) {
		autofail struct gl_fail f = {0};
		gl_manifest_check(m, &f);
		gl_manifest_runtime(m);
		gl_manifest_protocol(m);
		jv fns = gl_json_get(m, "functions");
		if (jv_get_kind(fns) == JV_KIND_OBJECT)
			jv_object_foreach(fns, k, v)
			{
				jv fn = gl_manifest_function(m, jv_string_value(k));
				gl_manifest_stateless(fn);
				jv_free(fn);
				jv_free(k);
				jv_free(v);
			}
		jv_free(fns);
		jv_free(gl_manifest_function(m, "not-declared"));
	}
	jv_free(m);
	return 0;
}
