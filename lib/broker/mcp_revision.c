/* mcp_revision.c — negotiation and the per-revision shape of what
 * --serve-mcp sends (mcp_revision.h; docs/mcp.md "Revisions"). */
#include "broker/mcp_revision.h"

#include <string.h>

#include "core/util.h"
#include "json/json.h"

const char *const gl_mcp_revisions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
					NULL};

#define GERMLINE_NOTE                                                                   \
	"Every tools/call runs in sandboxed copies of a signed release (germline); each " \
	"result's label is in _meta.germline.label."

const char *gl_mcp_negotiate(const char *want)
{
	for (int i = 0; want && gl_mcp_revisions[i]; i++)
		if (!strcmp(want, gl_mcp_revisions[i]))
			return gl_mcp_revisions[i];
	return gl_mcp_revisions[0];
}

/* Revisions are dates: they order as strings. */
static bool before(const char *rev, const char *than)
{
	return strcmp(rev ? rev : gl_mcp_revisions[0], than) < 0;
}

jv gl_mcp_initialize(const char *rev, jv server)
{
	jv ours = JV_OBJECT(jv_string("name"), jv_string("germline"), jv_string("version"),
			    jv_string(GL_VERSION));
	jv info = gl_json_get(server, "serverInfo"), text = gl_json_get(server, "instructions");
	jv caps = JV_OBJECT(jv_string("tools"), JV_OBJECT(jv_string("listChanged"), jv_false()),
			    jv_string("logging"), jv_object());
	/* the lists the discovery brought (lib/broker/mcp_lists.h) */
	static const char *const listed[] = {"resources", "prompts"};
	for (size_t i = 0; i < 2; i++) {
		jv l = gl_json_get(server, listed[i]);
		if (jv_get_kind(l) == JV_KIND_ARRAY)
			caps = jv_object_set(caps, jv_string(listed[i]),
					     JV_OBJECT(jv_string("listChanged"), jv_false()));
		jv_free(l);
	}
	jv comp = gl_json_get(server, "completions");
	if (jv_get_kind(comp) == JV_KIND_OBJECT)
		caps = jv_object_set(caps, jv_string("completions"), jv_object());
	jv_free(comp);
	jv_free(server);
	jv meta = JV_OBJECT(jv_string("serverInfo"), jv_copy(ours), jv_string("instructions"),
			    jv_string(GERMLINE_NOTE), jv_string("label"), jv_array());
	return JV_OBJECT(
	    jv_string("protocolVersion"), jv_string(rev), jv_string("capabilities"), caps,
	    jv_string("serverInfo"), jv_is_valid(info) ? (jv_free(ours), info) : (jv_free(info), ours),
	    jv_string("instructions"),
	    jv_is_valid(text) ? text : (jv_free(text), jv_string(GERMLINE_NOTE)), jv_string("_meta"),
	    JV_OBJECT(jv_string("germline"), meta));
}

jv gl_mcp_list_for(jv list, const char *rev)
{
	if (!before(rev, "2025-06-18") || jv_get_kind(list) != JV_KIND_OBJECT)
		return list;
	jv tools = gl_json_get(list, "tools"), out = jv_array();
	jv_array_foreach(tools, i, t)
	{
		if (jv_get_kind(t) != JV_KIND_OBJECT) {
			out = jv_array_append(out, t);
			continue;
		}
		t = jv_object_delete(t, jv_string("title"));
		t = jv_object_delete(t, jv_string("outputSchema"));
		if (before(rev, "2025-03-26"))
			t = jv_object_delete(t, jv_string("annotations"));
		out = jv_array_append(out, t);
	}
	jv_free(tools);
	return jv_object_set(list, jv_string("tools"), out);
}

jv gl_mcp_result_for(jv result, const char *rev)
{
	if (!before(rev, "2025-06-18") || jv_get_kind(result) != JV_KIND_OBJECT)
		return result;
	return jv_object_delete(result, jv_string("structuredContent"));
}
