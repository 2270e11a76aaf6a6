/* schema.c — the inputSchema check of gl-run --serve-mcp
 * (lib/json/jsonschema.c): a release's server lists the schema, an agent
 * sends the arguments, both hostile. The input's first line is the
 * schema, the rest the value; each goes through the strict reader, as
 * both do in gl-run, and a pair it took is checked. */
#include "fuzz.h"

#include "json/json.h"
#include "json/jsonschema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	const char *nl = memchr(buf, '\n', size);
	if (!nl)
		return 0;
	jv schema = gl_json_parse(buf, (size_t)(nl - buf));
	jv value = gl_json_parse(nl + 1, size - (size_t)(nl - buf) - 1);
	if (jv_is_valid(schema) && jv_is_valid(value)) {
		autofail struct gl_fail f = {0};
		gl_schema_check(schema, value, "arguments", &f);
	}
	jv_free(schema);
	jv_free(value);
	return 0;
}
