/* Unit tests of the MCP revisions --serve-mcp speaks (lib/broker/
 * mcp_revision.c): negotiation, the fields each revision defines in a
 * tools/list and a CallToolResult, and the initialize answer with and
 * without what the server said of itself.
 *
 *   mcp_revision_test
 *
 * Run by tests/lib.bats. Exit 0 when every check holds. */
#define _GNU_SOURCE
#include <string.h>

#include "broker/mcp_revision.h"
#include "core/util.h"
#include "json/json.h"
#include "check.h"

static jv parse(const char *s)
{
	return gl_json_parse(s, strlen(s));
}

/* Whether v (consumed) equals the JSON text want. */
static bool is(jv v, const char *want)
{
	return jv_equal(v, parse(want));
}

int main(void)
{
	CHECK(!strcmp(gl_mcp_negotiate("2024-11-05"), "2024-11-05"));
	CHECK(!strcmp(gl_mcp_negotiate("2025-03-26"), "2025-03-26"));
	CHECK(!strcmp(gl_mcp_negotiate("2025-06-18"), "2025-06-18"));
	CHECK(!strcmp(gl_mcp_negotiate("2025-11-25"), "2025-11-25"));
	CHECK(!strcmp(gl_mcp_negotiate("2026-01-01"), "2025-11-25"));
	CHECK(!strcmp(gl_mcp_negotiate(NULL), "2025-11-25"));

	static const char list[] = "{\"tools\":[{\"name\":\"a\",\"title\":\"A\",\"inputSchema\":{},"
				   "\"outputSchema\":{},\"annotations\":{\"readOnlyHint\":true}},7]}";
	CHECK(is(gl_mcp_list_for(parse(list), "2025-11-25"), list));
	CHECK(is(gl_mcp_list_for(parse(list), NULL), list));
	CHECK(is(gl_mcp_list_for(parse(list), "2025-06-18"), list));
	CHECK(is(gl_mcp_list_for(parse(list), "2025-03-26"),
		 "{\"tools\":[{\"name\":\"a\",\"inputSchema\":{},\"annotations\":"
		 "{\"readOnlyHint\":true}},7]}"));
	CHECK(is(gl_mcp_list_for(parse(list), "2024-11-05"),
		 "{\"tools\":[{\"name\":\"a\",\"inputSchema\":{}},7]}"));

	static const char res[] = "{\"content\":[],\"structuredContent\":{\"x\":1},\"_meta\":{}}";
	CHECK(is(gl_mcp_result_for(parse(res), "2025-06-18"), res));
	CHECK(is(gl_mcp_result_for(parse(res), "2025-03-26"), "{\"content\":[],\"_meta\":{}}"));

	jv i = gl_mcp_initialize("2025-03-26", parse("{\"serverInfo\":{\"name\":\"s\",\"version\":\"2\"},"
						     "\"instructions\":\"use it\"}"));
	CHECK(!strcmp(gl_json_get_str(i, "protocolVersion"), "2025-03-26"));
	CHECK(is(gl_json_get(i, "serverInfo"), "{\"name\":\"s\",\"version\":\"2\"}"));
	CHECK(!strcmp(gl_json_get_str(i, "instructions"), "use it"));
	jv meta = gl_json_get(i, "_meta");
	jv g = gl_json_get(meta, "germline");
	jv gi = gl_json_get(g, "serverInfo");
	CHECK(!strcmp(gl_json_get_str(gi, "name"), "germline") && is(gl_json_get(g, "label"), "[]"));
	jv_free(gi);
	jv_free(g);
	jv_free(meta);
	jv_free(i);
	i = gl_mcp_initialize("2025-11-25", jv_null());
	jv si = gl_json_get(i, "serverInfo");
	CHECK(!strcmp(gl_json_get_str(si, "name"), "germline"));
	CHECK(!strncmp(gl_json_get_str(i, "instructions"), "Every tools/call", 16));
	jv_free(si);
	jv_free(i);
	return check_done();
}
