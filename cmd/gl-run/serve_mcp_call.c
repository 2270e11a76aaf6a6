/* serve_mcp_call.c — gl-run --serve-mcp's calls (serve_mcp.c is the
 * loop): a tools/call's checks and envelope, and the resources and prompts
 * a release declares (docs/mcp.md "Resources and prompts"): their lists,
 * and a resources/read or prompts/get as the envelope of a call. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "broker/mcp_lists.h"
#include "core/util.h"
#include "json/json.h"
#include "json/jsonrpc.h"
#include "json/jsonschema.h"
#include "json/log.h"
#include "release/manifest.h"

#include "serve_mcp_impl.h"

/* The inputSchema of tool name in the list (borrowed), or jv_invalid(). */
static jv input_schema(jv list, const char *name)
{
	jv ts = gl_json_get(list, "tools");
	jv t = gl_json_array_find(ts, "name", name);
	jv out = jv_is_valid(t) ? gl_json_get(t, "inputSchema") : jv_invalid();
	jv_free(t);
	jv_free(ts);
	return out;
}

/* The function a call request names (params borrowed): a tools/call's
 * tool, or the method itself (resources/read, prompts/get); or NULL. */
const char *serve_fn_of(const char *method, jv params)
{
	if (strcmp(method, "tools/call"))
		return method;
	return jv_get_kind(params) == JV_KIND_OBJECT ? gl_json_get_str(params, "name") : NULL;
}

static int bad_params(int *code, char **message, jv *data, const char *what)
{
	*code = GL_RPC_INVALID_PARAMS;
	*message = gl_xstrdup(what);
	*data = jv_null();
	return -1;
}

/* The test build's switch (GL_TEST_SCHEMA_OFF, tests/serve-mcp-ops.bats):
 * arguments reach the server unchecked, as before issue 17. */
static bool schema_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_SCHEMA_OFF");
}

/* The call line of function name with args (consumed), under a new call id. */
static void envelope(struct serve *v, const char *name, jv args, struct gl_buf *line)
{
	snprintf(v->call_id, sizeof v->call_id, "mcp-%lu", ++v->calls);
	jv env = JV_OBJECT(jv_string("id"), jv_string(v->call_id), jv_string("release"),
			   jv_string(v->release), jv_string("function"), jv_string(name),
			   jv_string("args"), args, jv_string("items"), jv_array(),
			   jv_string("consumers"), jv_array_append(jv_array(), jv_string(v->consumer)));
	gl_json_dump(line, env);
	jv_free(env);
}

/* Has params (borrowed) the field k of kind want? */
static bool has(jv params, const char *k, jv_kind want)
{
	jv x = gl_json_get(params, k);
	bool ok = jv_get_kind(x) == want;
	jv_free(x);
	return ok;
}

/* resources/read, prompts/get and completion/complete (docs/mcp.md
 * "Resources and prompts"): a call of the function of that name, the
 * params (without _meta) its args; a read needs a string uri, a get a
 * string name, a completion the objects ref and argument. */
static int method_envelope(struct serve *v, const char *method, jv params, struct gl_buf *line,
			   int *code, char **message, jv *data)
{
	bool complete = !strcmp(method, GL_MCP_COMPLETE);
	const char *need = !strcmp(method, GL_MCP_RESOURCE_READ) ? "uri" : "name";
	bool ok = jv_get_kind(params) == JV_KIND_OBJECT &&
		  (complete ? has(params, "ref", JV_KIND_OBJECT) && has(params, "argument", JV_KIND_OBJECT)
			    : has(params, need, JV_KIND_STRING));
	if (!ok) {
		serve_warn_call(method, "refused", "bad_params", NULL);
		autofree char *m =
		    complete ? gl_xasprintf("%s needs the objects \"ref\" and \"argument\"", method)
			     : gl_xasprintf("%s needs a string \"%s\"", method, need);
		return bad_params(code, message, data, m);
	}
	envelope(v, method, jv_object_delete(jv_copy(params), jv_string("_meta")), line);
	return 0;
}

/* tools/call's checks, in the main process and at once (bad params, the
 * tool's inputSchema), then its envelope: 0 with *line, or -1 with an
 * error (code, message, data). */
int serve_call_envelope(struct serve *v, const char *method, jv params, struct gl_buf *line,
			int *code, char **message, jv *data)
{
	v->call_id[0] = '\0';
	if (strcmp(method, "tools/call"))
		return method_envelope(v, method, params, line, code, message, data);
	const char *name = jv_get_kind(params) == JV_KIND_OBJECT ? gl_json_get_str(params, "name")
								 : NULL;
	jv args = jv_get_kind(params) == JV_KIND_OBJECT ? gl_json_get(params, "arguments")
							 : jv_invalid();
	if (!name || (jv_is_valid(args) && jv_get_kind(args) != JV_KIND_OBJECT &&
		      jv_get_kind(args) != JV_KIND_NULL)) {
		jv_free(args);
		serve_warn_call(name, "refused", "bad_params", NULL);
		return bad_params(code, message, data,
				  "tools/call needs a string \"name\" and an object \"arguments\"");
	}
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		args = jv_object();
	}
	/* The tool's inputSchema (from the server's discovery, lib/broker/mcp.h):
	 * a wrong argument never reaches a copy. A failed tools/list is met
	 * again, with its cause, by gl_session_line. */
	autofail struct gl_fail f = {0};
	jv list = serve_tools(v, &f);
	gl_fail_clear(&f);
	jv schema = jv_is_valid(list) && !schema_off() ? input_schema(list, name) : jv_invalid();
	if (jv_is_valid(schema) && gl_schema_check(schema, args, "arguments", &f) < 0) {
		const char *why = gl_fail_detail(&f);
		jv_free(schema);
		jv_free(args);
		serve_warn_call(name, "refused", "bad_args", why);
		gl_log_event("refusal", JV_OBJECT(jv_string("release"), jv_string(v->release),
						  jv_string("error"), jv_string("bad_args")));
		*code = GL_RPC_INVALID_PARAMS;
		*message = gl_xasprintf("germline: bad_args: %s", why);
		*data = JV_OBJECT(jv_string("error"), jv_string("bad_args"), jv_string("detail"),
				  jv_string(why));
		return -1;
	}
	jv_free(schema);
	envelope(v, name, args, line);
	return 0;
}

/* Is method a call: tools/call, or a resources/read, prompts/get or
 * completion/complete the release declares (its discovery says so)? */
bool serve_calls(struct serve *v, const char *method)
{
	if (!strcmp(method, "tools/call"))
		return true;
	if (!gl_mcp_method_fn(method))
		return false;
	autofail struct gl_fail f = {0};
	serve_tools(v, &f);
	jv server = gl_session_server(v->s, v->release);
	bool declared = gl_mcp_served(server, method);
	jv_free(server);
	return declared;
}

/* resources/list, resources/templates/list and prompts/list: the lists of
 * the discovery copy (lib/broker/mcp_lists.h), one page. */
bool serve_lists(struct serve *v, const char *method, jv *res)
{
	if (strncmp(method, "resources/", 10) && strncmp(method, "prompts/", 8))
		return false;
	autofail struct gl_fail f = {0};
	serve_tools(v, &f);
	jv server = gl_session_server(v->s, v->release);
	*res = gl_mcp_list_answer(server, method);
	jv_free(server);
	return jv_is_valid(*res);
}
