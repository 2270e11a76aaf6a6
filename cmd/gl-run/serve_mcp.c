/* serve_mcp.c — gl-run --serve-mcp: gl-run as an MCP server on stdio for
 * one release (SPEC §11; docs/mcp.md), for agent hosts that speak MCP.
 *
 * Newline-delimited JSON-RPC 2.0 (lib/jsonrpc.h) on stdin/stdout:
 *   initialize      our capabilities (tools), serverInfo "germline"
 *   ping            {}
 *   tools/list      from the signed manifest (lib/mcp.h gl_mcp_tools_list)
 *   tools/call      an envelope {release, function: name, args: arguments,
 *                   consumers: [consumer]} run exactly as gl-run runs a
 *                   JSON Lines envelope (items from items_from_args, plan
 *                   recomputed, germline execution); the tool result with
 *                   its label in _meta.germline.label, a refusal as an MCP
 *                   error with the SPEC §2 code in data.error and its label
 *                   in data.label; only what the consumer's clearance
 *                   covers (SPEC §6; lib/mcp.h), else "not_cleared"
 *   other requests  -32601; notifications and responses are ignored
 * A line that is not JSON is answered with -32700, one that is not a
 * JSON-RPC message with -32600 (id null), and the stream goes on. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "jsonrpc.h"
#include "manifest.h"
#include "mcp.h"
#include "util.h"

#include "run.h"

/* Protocol revisions we speak; the first is ours. */
static const char *const revisions[] = {"2025-06-18", "2025-03-26", "2024-11-05", NULL};

/* Write m (consumed). An answer above the line cap (a release's huge
 * result or tool list) becomes an internal error for the same id. */
static void send_msg(jv m)
{
	if (gl_rpc_write(1, -1, m) < 0) {
		if (errno != EMSGSIZE)
			gl_die_errno(GL_EXIT_USAGE, "stdout");
		jv e = gl_rpc_error(gl_json_get(m, "id"), GL_RPC_INTERNAL_ERROR,
				    "germline: the answer is larger than the 8 MiB line cap",
				    JV_OBJECT(jv_string("error"), jv_string("too_long"),
					      jv_string("detail"),
					      jv_string("the answer is larger than the 8 MiB line cap")));
		if (gl_rpc_write(1, -1, e) < 0)
			gl_die_errno(GL_EXIT_USAGE, "stdout");
		jv_free(e);
	}
	jv_free(m);
}

static jv initialize(jv params)
{
	const char *want = jv_get_kind(params) == JV_KIND_OBJECT
			       ? gl_json_get_str(params, "protocolVersion")
			       : NULL;
	const char *rev = revisions[0];
	for (int i = 0; want && revisions[i]; i++)
		if (!strcmp(want, revisions[i]))
			rev = revisions[i];
	return JV_OBJECT(
	    jv_string("protocolVersion"), jv_string(rev), jv_string("capabilities"),
	    JV_OBJECT(jv_string("tools"), JV_OBJECT(jv_string("listChanged"), jv_false())),
	    jv_string("serverInfo"),
	    JV_OBJECT(jv_string("name"), jv_string("germline"), jv_string("version"),
		      jv_string(GL_VERSION)),
	    jv_string("instructions"),
	    jv_string("Every tools/call runs in sandboxed copies of a signed release "
		      "(germline); each result's label is in _meta.germline.label."));
}

/* tools/call: 0 with *result, or -1 with an error (code, message, data). */
static int tools_call(struct session *s, const char *release, const char *consumer,
		      unsigned long n, jv params, jv *result, int *code, char **message, jv *data)
{
	const char *name = jv_get_kind(params) == JV_KIND_OBJECT ? gl_json_get_str(params, "name")
								 : NULL;
	jv args = jv_get_kind(params) == JV_KIND_OBJECT ? gl_json_get(params, "arguments")
							 : jv_invalid();
	if (!name || (jv_is_valid(args) && jv_get_kind(args) != JV_KIND_OBJECT &&
		      jv_get_kind(args) != JV_KIND_NULL)) {
		jv_free(args);
		*code = GL_RPC_INVALID_PARAMS;
		*message = gl_xstrdup("tools/call needs a string \"name\" and an object \"arguments\"");
		*data = jv_null();
		return -1;
	}
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		args = jv_object();
	}
	char id[32];
	snprintf(id, sizeof id, "mcp-%lu", n);
	jv env = JV_OBJECT(jv_string("id"), jv_string(id), jv_string("release"), jv_string(release),
			   jv_string("function"), jv_string(name), jv_string("args"), args,
			   jv_string("items"), jv_array(), jv_string("consumers"),
			   jv_array_append(jv_array(), jv_string(consumer)));
	autobuf struct gl_buf line = {0};
	gl_json_dump(&line, env);
	jv_free(env);
	jv rec = gl_run_line(s, &line);
	/* SPEC §6: what reaches the consumer is what its clearance covers */
	jv clearance = gl_run_clearance(s, consumer);
	int r = gl_mcp_result(rec, consumer, clearance, result, code, message, data);
	jv_free(clearance);
	jv_free(rec);
	return r;
}

int gl_serve_mcp(struct session *s, const char *release, const char *consumer)
{
	struct gl_rpc_reader in;
	gl_rpc_reader_init(&in, 0);
	unsigned long calls = 0;
	int refused = 0;
	for (;;) {
		jv msg;
		enum gl_rpc_kind kind;
		char *err = NULL;
		enum gl_rpc_status st = gl_rpc_read(&in, -1, GL_RPC_LINE_MAX, &msg, &kind, &err);
		if (st == GL_RPC_EOF || st == GL_RPC_IO || st == GL_RPC_DEADLINE) {
			free(err);
			jv_free(msg);
			break;
		}
		if (st != GL_RPC_OK) {
			/* Echo a usable id of an invalid message; else null. */
			jv id = jv_invalid();
			if (jv_get_kind(msg) == JV_KIND_OBJECT)
				id = gl_json_get(msg, "id");
			jv_kind k = jv_get_kind(id);
			if (k != JV_KIND_STRING && k != JV_KIND_NUMBER) {
				jv_free(id);
				id = jv_null();
			}
			int code = st == GL_RPC_PARSE ? GL_RPC_PARSE_ERROR : GL_RPC_INVALID_REQUEST;
			send_msg(gl_rpc_error(id, code, st == GL_RPC_PARSE ? "Parse error" : "Invalid Request",
					      jv_string(err ? err : gl_rpc_status_name(st))));
			free(err);
			jv_free(msg);
			continue;
		}
		if (kind != GL_RPC_REQUEST) { /* notifications and stray responses */
			jv_free(msg);
			continue;
		}
		jv id = gl_json_get(msg, "id");
		jv params = gl_json_get(msg, "params");
		const char *method = gl_json_get_str(msg, "method");
		if (!strcmp(method, "initialize")) {
			send_msg(gl_rpc_result(id, initialize(params)));
		} else if (!strcmp(method, "ping")) {
			send_msg(gl_rpc_result(id, jv_object()));
		} else if (!strcmp(method, "tools/list")) {
			char *code = NULL, *detail = NULL;
			jv list = gl_run_tools(s, release, &code, &detail);
			if (jv_is_valid(list)) {
				send_msg(gl_rpc_result(id, list));
			} else {
				char *m = gl_xasprintf("germline: %s: %s", code, detail);
				send_msg(gl_rpc_error(id, -32000, m,
						      JV_OBJECT(jv_string("error"), jv_string(code),
								jv_string("detail"), jv_string(detail))));
				free(m);
				jv_free(list);
				refused = 1;
			}
			free(code);
			free(detail);
		} else if (!strcmp(method, "tools/call")) {
			jv result;
			int code = 0;
			char *message = NULL;
			jv data = jv_null();
			if (tools_call(s, release, consumer, ++calls, params, &result, &code, &message,
				       &data) == 0) {
				send_msg(gl_rpc_result(id, result));
			} else {
				send_msg(gl_rpc_error(id, code, message, data));
				refused = 1;
			}
			free(message);
		} else {
			char *m = gl_xasprintf("Method not found: %.64s", method);
			send_msg(gl_rpc_error(id, GL_RPC_METHOD_NOT_FOUND, m, jv_null()));
			free(m);
		}
		jv_free(params);
		jv_free(msg);
		gl_run_idle(s); /* after the answer is out */
	}
	return refused;
}
