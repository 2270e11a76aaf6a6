/* mcp_lists.c — an MCP server's resources and prompts; see mcp_lists.h. */
#define _GNU_SOURCE
#include "broker/mcp_lists.h"

#include <string.h>

#include "core/util.h"
#include "json/json.h"
#include "release/manifest.h"

bool gl_mcp_declares(jv manifest, const char *fn)
{
	jv fns = gl_json_get(manifest, "functions");
	bool has = jv_get_kind(fns) == JV_KIND_OBJECT && jv_object_has(jv_copy(fns), jv_string(fn));
	jv_free(fns);
	return has;
}

jv gl_mcp_discovery_args(jv manifest)
{
	jv lists = jv_array();
	if (gl_mcp_declares(manifest, GL_MCP_RESOURCE_READ))
		lists = jv_array_append(lists, jv_string("resources"));
	if (gl_mcp_declares(manifest, GL_MCP_PROMPT_GET))
		lists = jv_array_append(lists, jv_string("prompts"));
	return JV_OBJECT(jv_string("lists"), lists);
}

/* Has the object e (borrowed) a string field k? */
static bool has_str(jv e, const char *k)
{
	return k == NULL || gl_json_get_str(e, k) != NULL;
}

/* value[key] (borrowed) if it is an array of at most GL_MCP_LIST_MAX
 * objects each with string fields a and b (NULL: none), else []. */
static jv typed_list(jv value, const char *key, const char *a, const char *b)
{
	jv l = jv_get_kind(value) == JV_KIND_OBJECT ? gl_json_get(value, key) : jv_invalid();
	bool ok = jv_get_kind(l) == JV_KIND_ARRAY && jv_array_length(jv_copy(l)) <= GL_MCP_LIST_MAX;
	if (ok)
		jv_array_foreach(l, i, e)
		{
			(void)i;
			ok = ok && jv_get_kind(e) == JV_KIND_OBJECT && has_str(e, a) && has_str(e, b);
			jv_free(e);
		}
	if (ok)
		return l;
	jv_free(l);
	return jv_array();
}

jv gl_mcp_lists_add(jv server, jv value, jv manifest)
{
	jv lists = jv_object();
	if (gl_mcp_declares(manifest, GL_MCP_RESOURCE_READ)) {
		lists = jv_object_set(lists, jv_string("resources"),
				      typed_list(value, "resources", "uri", "name"));
		lists = jv_object_set(lists, jv_string("resourceTemplates"),
				      typed_list(value, "resourceTemplates", "uriTemplate", "name"));
	}
	if (gl_mcp_declares(manifest, GL_MCP_PROMPT_GET))
		lists = jv_object_set(lists, jv_string("prompts"),
				      typed_list(value, "prompts", "name", NULL));
	/* no list: the capability only, for initialize and the method's dispatch */
	if (gl_mcp_declares(manifest, GL_MCP_COMPLETE))
		server = jv_object_set(server, jv_string("completions"), jv_object());
	struct gl_buf b = {0};
	gl_json_dump(&b, lists);
	bool fits = b.len <= GL_MCP_LISTS_BYTES;
	free(b.data);
	jv_object_foreach(lists, k, l)
	{
		server = jv_object_set(server, k, fits ? l : (jv_free(l), jv_array()));
	}
	jv_free(lists);
	return server;
}

/* Each method function: the key its discovery puts in the server object
 * and that key's kind, and its result's key and kind. */
static const struct method {
	const char *fn, *served;
	jv_kind served_kind;
	const char *result;
	jv_kind result_kind;
} methods[] = {
    {GL_MCP_RESOURCE_READ, "resources", JV_KIND_ARRAY, "contents", JV_KIND_ARRAY},
    {GL_MCP_PROMPT_GET, "prompts", JV_KIND_ARRAY, "messages", JV_KIND_ARRAY},
    {GL_MCP_COMPLETE, "completions", JV_KIND_OBJECT, "completion", JV_KIND_OBJECT},
};

static const struct method *method_of(const char *fn)
{
	for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
		if (!strcmp(fn, methods[i].fn))
			return &methods[i];
	return NULL;
}

/* Is o[key] (borrowed) of kind want? */
static bool has_kind(jv o, const char *key, jv_kind want)
{
	jv x = jv_get_kind(o) == JV_KIND_OBJECT ? gl_json_get(o, key) : jv_invalid();
	bool ok = jv_get_kind(x) == want;
	jv_free(x);
	return ok;
}

bool gl_mcp_served(jv server, const char *fn)
{
	const struct method *m = method_of(fn);
	return m && has_kind(server, m->served, m->served_kind);
}

jv gl_mcp_list_answer(jv server, const char *method)
{
	static const char *const map[][2] = {{"resources/list", "resources"},
					     {"resources/templates/list", "resourceTemplates"},
					     {"prompts/list", "prompts"}};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
		if (strcmp(method, map[i][0]))
			continue;
		jv l = gl_json_get(server, map[i][1]);
		if (jv_get_kind(l) != JV_KIND_ARRAY) {
			jv_free(l);
			return jv_invalid();
		}
		return JV_OBJECT(jv_string(map[i][1]), l);
	}
	return jv_invalid();
}

bool gl_mcp_result_shape(const char *fn, jv value)
{
	const struct method *m = method_of(fn);
	return !m || has_kind(value, m->result, m->result_kind);
}
