/* mcp.c — the discovery check and result mapping of MCP releases; see
 * mcp.h and docs/mcp.md. */
#define _GNU_SOURCE
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "callmsg.h"
#include "json.h"
#include "jsonrpc.h"
#include "manifest.h"
#include "msg.h"
#include "util.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of tools (borrowed), sorted; NULL with *err when malformed. */
static const char **tool_names(jv tools, size_t *n, char **err)
{
	if (jv_get_kind(tools) != JV_KIND_ARRAY) {
		*err = gl_xstrdup("tools/list: the result holds no tools array");
		return NULL;
	}
	int len = jv_array_length(jv_copy(tools));
	if (len > GL_MCP_TOOLS_MAX) {
		*err = gl_xasprintf("tools/list: %d tools, more than %d", len, GL_MCP_TOOLS_MAX);
		return NULL;
	}
	const char **name = gl_xcalloc((size_t)len + 1, sizeof *name);
	for (int i = 0; i < len; i++) {
		jv t = jv_array_get(jv_copy(tools), i);
		const char *s = jv_get_kind(t) == JV_KIND_OBJECT ? gl_json_get_str(t, "name") : NULL;
		jv_free(t); /* the string stays alive in tools */
		if (!s) {
			*err = gl_xasprintf("tools/list: tool %d has no string name", i);
			free(name);
			return NULL;
		}
		name[i] = s;
	}
	qsort(name, (size_t)len, sizeof *name, cmp_str);
	*n = (size_t)len;
	return name;
}

/* "a, b, c" of the names in a but not in b (both sorted), quoted, cut. */
static void missing(struct gl_buf *out, const char **a, size_t na, const char **b, size_t nb)
{
	size_t j = 0, shown = 0;
	for (size_t i = 0; i < na; i++) {
		while (j < nb && strcmp(b[j], a[i]) < 0)
			j++;
		if (j < nb && !strcmp(b[j], a[i]))
			continue;
		if (i && a[i - 1] && !strcmp(a[i - 1], a[i]))
			continue;
		if (shown++ == 8) {
			gl_buf_adds(out, ", …");
			return;
		}
		char *q = gl_quote(a[i], strnlen(a[i], 64));
		gl_buf_printf(out, "%s%s", shown > 1 ? ", " : "", q);
		free(q);
	}
}

/* Compare the server's names with the manifest's functions. 0, or -1 with
 * *err naming the difference. */
static int compare(jv manifest, jv tools, char **err)
{
	size_t nt = 0;
	autofree const char **tn = tool_names(tools, &nt, err);
	if (!tn)
		return -1;
	jv fns = gl_json_get(manifest, "functions");
	jv keys = jv_keys(jv_copy(fns)); /* sorted */
	int nk = jv_array_length(jv_copy(keys));
	const char **fn = gl_xcalloc((size_t)nk + 1, sizeof *fn);
	for (int i = 0; i < nk; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		fn[i] = jv_string_value(k); /* alive in keys */
		jv_free(k);
	}
	bool dup = false;
	for (size_t i = 1; i < nt; i++)
		dup |= !strcmp(tn[i - 1], tn[i]);
	bool same = !dup && nt == (size_t)nk;
	for (size_t i = 0; same && i < nt; i++)
		same = !strcmp(tn[i], fn[i]);
	int r = 0;
	if (!same) {
		struct gl_buf b = {0};
		gl_buf_adds(&b, "discovery changed after signing: the server's tools/list does not "
				"match the signed manifest's functions");
		struct gl_buf x = {0}, y = {0};
		missing(&x, tn, nt, fn, (size_t)nk);
		missing(&y, fn, (size_t)nk, tn, nt);
		if (x.len)
			gl_buf_printf(&b, "; listed but not signed: %.*s", (int)x.len, x.data);
		if (y.len)
			gl_buf_printf(&b, "; signed but not listed: %.*s", (int)y.len, y.data);
		if (dup)
			gl_buf_adds(&b, "; a tool listed twice");
		free(x.data);
		free(y.data);
		*err = b.data;
		r = -1;
	}
	free(fn);
	jv_free(keys);
	jv_free(fns);
	return r;
}

enum gl_mcp_discovery gl_mcp_discover(struct gl_germline *g, jv manifest, double deadline_s,
				      jv *tools, bool *germline_lost, char **err)
{
	*tools = jv_invalid();
	struct gl_session_proc p;
	if (gl_session_fork(g, &p, germline_lost, err) < 0)
		return GL_MCP_DISCOVERY_FAILED;
	int64_t deadline = gl_mono_ns() + (int64_t)(deadline_s * 1e9);
	struct gl_twin tw;
	gl_twin_new(&tw);
	autobuf struct gl_buf msg = {0}, in = {0};
	jv args = jv_object(), state = jv_object();
	gl_callmsg(&msg, GL_MCP_DISCOVERY_FN, args, NULL, 0, state, &tw);
	jv_free(args);
	jv_free(state);
	enum gl_mcp_discovery out = GL_MCP_DISCOVERY_FAILED;
	enum gl_msg_status st = gl_msg_write(p.sock, deadline, msg.data, msg.len);
	if (st == GL_MSG_OK)
		st = gl_msg_read(p.sock, deadline, &in);
	if (st != GL_MSG_OK) {
		*err = gl_xasprintf("discovery copy: %s", gl_msg_status_name(st));
		goto done;
	}
	struct gl_msg m;
	char *why = NULL;
	if (gl_msg_parse(&m, in.data, in.len, &why) < 0) {
		*err = gl_xasprintf("discovery copy: %s", why);
		free(why);
	} else if (m.type != GL_MSG_RESULT) {
		*err = gl_xstrdup("discovery copy: a request or state write before its result");
	} else if (m.error) {
		char *s = gl_sanitize(m.error, strnlen(m.error, 512));
		*err = gl_xasprintf("discovery copy: %s", s);
		free(s);
	} else {
		jv t = jv_get_kind(m.value) == JV_KIND_OBJECT ? gl_json_get(m.value, "tools")
							       : jv_invalid();
		if (compare(manifest, t, err) < 0) {
			jv_free(t);
			out = GL_MCP_DISCOVERY_CHANGED;
		} else {
			*tools = t;
			out = GL_MCP_DISCOVERY_OK;
		}
	}
	gl_msg_free(&m);
done:
	gl_session_stop(&p);
	return out;
}

jv gl_mcp_tools_list(jv manifest, jv tools)
{
	static const char *const keep[] = {"title", "description", "inputSchema", "outputSchema",
					   "annotations", NULL};
	jv fns = gl_json_get(manifest, "functions");
	jv keys = jv_keys(fns);
	jv list = jv_array();
	jv_array_foreach(keys, i, k)
	{
		(void)i;
		jv t = jv_object_set(jv_object(), jv_string("name"), jv_copy(k));
		jv from = jv_invalid();
		if (jv_get_kind(tools) == JV_KIND_ARRAY)
			jv_array_foreach(tools, j, s)
			{
				(void)j;
				const char *n = jv_get_kind(s) == JV_KIND_OBJECT ? gl_json_get_str(s, "name")
										 : NULL;
				if (!jv_is_valid(from) && n && !strcmp(n, jv_string_value(k)))
					from = jv_copy(s);
				jv_free(s);
			}
		for (int x = 0; keep[x]; x++) {
			jv v = jv_is_valid(from) ? gl_json_get(from, keep[x]) : jv_invalid();
			if (jv_is_valid(v))
				t = jv_object_set(t, jv_string(keep[x]), v);
			else
				jv_free(v);
		}
		jv schema = gl_json_get(t, "inputSchema");
		if (jv_get_kind(schema) != JV_KIND_OBJECT)
			t = jv_object_set(t, jv_string("inputSchema"),
					  jv_object_set(jv_object(), jv_string("type"), jv_string("object")));
		jv_free(schema);
		jv_free(from);
		list = jv_array_append(list, t);
		jv_free(k);
	}
	jv_free(keys);
	return jv_object_set(jv_object(), jv_string("tools"), list);
}

/* Is v (borrowed) shaped like an MCP CallToolResult? */
static bool tool_result(jv v)
{
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		return false;
	jv c = gl_json_get(v, "content");
	bool ok = jv_get_kind(c) == JV_KIND_ARRAY;
	jv_free(c);
	return ok;
}

static int error(const char *code, const char *detail, int *rpc, char **message, jv *data)
{
	static const char *const params[] = {"unknown_function", "bad_args", "unlabelled_path",
					     "bad_envelope", "duplicate_item", "bad_label",
					     "destinations_not_allowed", NULL};
	*rpc = -32000;
	for (int i = 0; params[i]; i++)
		if (!strcmp(code, params[i]))
			*rpc = GL_RPC_INVALID_PARAMS;
	*message = gl_xasprintf("germline: %s: %s", code, detail ? detail : "refused");
	*data = JV_OBJECT(jv_string("error"), jv_string(code), jv_string("detail"),
			  jv_string(detail ? detail : ""));
	return -1;
}

int gl_mcp_result(jv record, const char *consumer, jv *result, int *code, char **message,
		  jv *data)
{
	*result = jv_invalid();
	if (gl_json_get_bool(record, "ok", 0) != 1) {
		const char *e = gl_json_get_str(record, "error");
		return error(e ? e : "failed", gl_json_get_str(record, "detail"), code, message, data);
	}
	jv results = gl_json_get(record, "results");
	jv mine = jv_invalid();
	if (jv_get_kind(results) == JV_KIND_ARRAY)
		jv_array_foreach(results, i, r)
		{
			(void)i;
			const char *c = gl_json_get_str(r, "consumer");
			if (!jv_is_valid(mine) && c && !strcmp(c, consumer))
				mine = jv_copy(r);
			jv_free(r);
		}
	jv_free(results);
	int rc;
	if (!jv_is_valid(mine)) {
		rc = error("protocol", "the call produced no result for this consumer", code,
			   message, data);
	} else if (gl_json_get_bool(mine, "ok", 0) != 1) {
		const char *e = gl_json_get_str(mine, "error");
		rc = error(e ? e : "failed", gl_json_get_str(mine, "detail"), code, message, data);
	} else {
		jv v = gl_json_get(mine, "value");
		if (!tool_result(v)) { /* a germline-protocol function's value */
			struct gl_buf b = {0};
			gl_json_dump(&b, v);
			jv text = JV_OBJECT(jv_string("type"), jv_string("text"), jv_string("text"),
					    jv_string_sized(b.data ? b.data : "", (int)b.len));
			free(b.data);
			jv wrapped = jv_object_set(jv_object(), jv_string("content"),
						   jv_array_append(jv_array(), text));
			if (jv_get_kind(v) == JV_KIND_OBJECT)
				wrapped = jv_object_set(wrapped, jv_string("structuredContent"), v);
			else
				jv_free(v);
			v = wrapped;
		}
		jv meta = gl_json_get(v, "_meta");
		if (jv_get_kind(meta) != JV_KIND_OBJECT) {
			jv_free(meta);
			meta = jv_object();
		}
		jv label = gl_json_get(mine, "label");
		jv g = jv_object_set(jv_object(), jv_string("label"),
				     jv_is_valid(label) ? label : jv_array());
		static const char *const fields[] = {"release", "copies", "delivered", "denied",
						     "triggers", NULL};
		for (int i = 0; fields[i]; i++) {
			jv f = gl_json_get(record, fields[i]);
			if (jv_is_valid(f))
				g = jv_object_set(g, jv_string(fields[i]), f);
			else
				jv_free(f);
		}
		meta = jv_object_set(meta, jv_string("germline"), g);
		*result = jv_object_set(v, jv_string("_meta"), meta);
		rc = 0;
	}
	jv_free(mine);
	return rc;
}
