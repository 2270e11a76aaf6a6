/* mcp.c — the discovery check and result mapping of MCP releases; see
 * mcp.h and docs/mcp.md. */
#define _GNU_SOURCE
#include "broker/mcp.h"
#include "broker/mcp_lists.h"

#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/broker_impl.h"
#include "plan/callmsg.h"
#include "json/json.h"
#include "json/jsonrpc.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "core/util.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of tools (borrowed), sorted; NULL with f (discovery_changed)
 * when malformed. */
static const char **tool_names(jv tools, size_t *n, struct gl_fail *f)
{
	if (jv_get_kind(tools) != JV_KIND_ARRAY) {
		gl_fail(f, GL_E_DISCOVERY_CHANGED, "tools/list: the result holds no tools array");
		return NULL;
	}
	int len = jv_array_length(jv_copy(tools));
	if (len > GL_MCP_TOOLS_MAX) {
		gl_fail(f, GL_E_DISCOVERY_CHANGED, "tools/list: %d tools, more than %d", len,
			GL_MCP_TOOLS_MAX);
		return NULL;
	}
	const char **name = gl_xcalloc((size_t)len + 1, sizeof *name);
	for (int i = 0; i < len; i++) {
		jv t = jv_array_get(jv_copy(tools), i);
		const char *s = jv_get_kind(t) == JV_KIND_OBJECT ? gl_json_get_str(t, "name") : NULL;
		jv_free(t); /* the string stays alive in tools */
		if (!s) {
			gl_fail(f, GL_E_DISCOVERY_CHANGED, "tools/list: tool %d has no string name", i);
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
 * f (discovery_changed) naming the difference. */
static int compare(jv manifest, jv tools, struct gl_fail *f)
{
	size_t nt = 0;
	autofree const char **tn = tool_names(tools, &nt, f);
	if (!tn)
		return -1;
	jv fns = gl_json_get(manifest, "functions");
	jv keys = jv_keys(jv_copy(fns)); /* sorted */
	int nkeys = jv_array_length(jv_copy(keys)), nk = 0;
	const char **fn = gl_xcalloc((size_t)nkeys + 1, sizeof *fn);
	for (int i = 0; i < nkeys; i++) {
		jv k = jv_array_get(jv_copy(keys), i);
		if (!gl_mcp_method_fn(jv_string_value(k))) /* not tools */
			fn[nk++] = jv_string_value(k); /* alive in keys */
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
		r = gl_fail(f, GL_E_DISCOVERY_CHANGED, "%s", b.data);
		free(b.data);
	}
	free(fn);
	jv_free(keys);
	jv_free(fns);
	return r;
}

/* A string of at most max bytes without NUL, or jv_invalid() (v consumed). */
static jv bounded_text(jv v, size_t max)
{
	if (jv_get_kind(v) == JV_KIND_STRING &&
	    (size_t)jv_string_length_bytes(jv_copy(v)) <= max &&
	    strlen(jv_string_value(v)) == (size_t)jv_string_length_bytes(jv_copy(v)))
		return v;
	jv_free(v);
	return jv_invalid();
}

/* What the discovery copy reported of the server's initialize answer
 * (value borrowed), typed and bounded (gl_mcp_discover). */
static jv server_of(jv value)
{
	jv s = gl_json_get(value, "server"), out = jv_object();
	jv si = jv_get_kind(s) == JV_KIND_OBJECT ? gl_json_get(s, "serverInfo") : jv_invalid();
	if (jv_get_kind(si) == JV_KIND_OBJECT) {
		jv name = bounded_text(gl_json_get(si, "name"), GL_MCP_INFO_TEXT_MAX);
		jv ver = bounded_text(gl_json_get(si, "version"), GL_MCP_INFO_TEXT_MAX);
		jv title = bounded_text(gl_json_get(si, "title"), GL_MCP_INFO_TEXT_MAX);
		if (jv_is_valid(name) && jv_is_valid(ver)) {
			jv info = JV_OBJECT(jv_string("name"), name, jv_string("version"), ver);
			if (jv_is_valid(title))
				info = jv_object_set(info, jv_string("title"), title);
			else
				jv_free(title);
			out = jv_object_set(out, jv_string("serverInfo"), info);
		} else {
			jv_free(name);
			jv_free(ver);
			jv_free(title);
		}
	}
	jv in = jv_get_kind(s) == JV_KIND_OBJECT
		    ? bounded_text(gl_json_get(s, "instructions"), GL_MCP_INSTRUCTIONS_MAX)
		    : jv_invalid();
	if (jv_is_valid(in))
		out = jv_object_set(out, jv_string("instructions"), in);
	jv_free(si);
	jv_free(s);
	return out;
}

/* gl_mcp_discover but for a lost germline: a failure is f under
 * GL_E_GERMLINE_CHECK or GL_E_DISCOVERY_CHANGED. */
static enum gl_code discover(const struct gl_broker *b, struct gl_germline *g, jv manifest,
			     double deadline_s, jv *tools, jv *server, bool *germline_lost,
			     struct gl_fail *f)
{
	*tools = jv_invalid();
	struct gl_session_proc p;
	int64_t deadline = gl_mono_ns() + (int64_t)(deadline_s * 1e9);
	/* its public stream destinations: a server may connect as it starts */
	struct gl_stream_discovery *sd = gl_stream_discovery_open(b, g->config, manifest, deadline);
	size_t nh;
	const char *const *hosts = gl_stream_discovery_hosts(sd, &nh);
	if (gl_session_fork(g, true, hosts, nh, &p, germline_lost, f) < 0) {
		gl_stream_discovery_close(sd);
		return f->code = GL_E_GERMLINE_CHECK;
	}
	struct gl_twin tw;
	gl_twin_new(&tw);
	autobuf struct gl_buf msg = {0}, in = {0};
	/* declared before the first goto below: its cleanup runs at done */
	autofail struct gl_fail why = {0};
	jv args = gl_mcp_discovery_args(manifest), state = jv_object();
	gl_callmsg(&msg, GL_MCP_DISCOVERY_FN, args, NULL, 0, state, &tw);
	jv_free(args);
	jv_free(state);
	enum gl_code out = GL_E_GERMLINE_CHECK;
	enum gl_msg_status st = gl_msg_write(p.sock, deadline, msg.data, msg.len);
	if (st == GL_MSG_OK)
		st = gl_stream_discovery_read(sd, p.sock, deadline, &in);
	gl_stream_discovery_close(sd);
	if (st == GL_MSG_DEADLINE) {
		gl_fail(f, GL_E_GERMLINE_CHECK,
			"discovery copy: deadline: the server did not list its tools within %g s",
			deadline_s);
		goto done;
	}
	if (st != GL_MSG_OK) {
		gl_fail(f, GL_E_GERMLINE_CHECK,
			"discovery copy: the server ended before it listed its tools (%s)",
			gl_msg_status_name(st));
		goto done;
	}
	struct gl_msg m;
	if (gl_msg_parse(&m, in.data, in.len, &why) < 0) {
		gl_fail(f, GL_E_GERMLINE_CHECK, "discovery copy: %s", gl_fail_detail(&why));
	} else if (m.type != GL_MSG_RESULT) {
		gl_fail(f, GL_E_GERMLINE_CHECK,
			"discovery copy: a request or state write before its result");
	} else if (m.error) {
		char *s = gl_sanitize(m.error, strnlen(m.error, 512));
		gl_fail(f, GL_E_GERMLINE_CHECK, "discovery copy: %s", s);
		free(s);
	} else {
		jv t = jv_get_kind(m.value) == JV_KIND_OBJECT ? gl_json_get(m.value, "tools")
							       : jv_invalid();
		if (compare(manifest, t, f) < 0) {
			jv_free(t);
			out = GL_E_DISCOVERY_CHANGED;
		} else {
			*tools = t;
			if (server)
				*server = gl_mcp_lists_add(server_of(m.value), m.value, manifest);
			out = GL_E_OK;
		}
	}
	gl_msg_free(&m);
done:
	gl_session_stop(&p);
	return out;
}

enum gl_code gl_mcp_discover(const struct gl_broker *b, struct gl_germline *g, jv manifest,
			     double deadline_s, jv *tools, jv *server, bool *germline_lost,
			     struct gl_fail *f)
{
	enum gl_code c = discover(b, g, manifest, deadline_s, tools, server, germline_lost, f);
	if (c == GL_E_GERMLINE_CHECK && *germline_lost)
		c = f->code = GL_E_GERMLINE;
	return c;
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
		if (gl_mcp_method_fn(jv_string_value(k))) { /* not a tool */
			jv_free(k);
			continue;
		}
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

static int error(const char *code, const char *detail, jv label, int *rpc, char **message,
		 jv *data)
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
	if (jv_is_valid(label))
		*data = jv_object_set(*data, jv_string("label"), label);
	else
		jv_free(label);
	return -1;
}

/* The one answer of a consumer whose clearance does not cover what it
 * asked for (SPEC §6, §11): a fixed text, no label (the label's value
 * beyond the clearance is itself chosen with data the consumer may not
 * have; that it is beyond is decided by data below it, broker_record.c). */
static int not_cleared(int *rpc, char **message, jv *data)
{
	*rpc = -32000;
	*message = gl_xstrdup("germline: not_cleared: the result is labelled beyond this "
			      "consumer's clearance");
	*data = JV_OBJECT(jv_string("error"), jv_string("not_cleared"));
	return -1;
}

/* label ⊑ clearance, both arrays of tag strings (borrowed). A label that
 * is not an array is covered by nothing (fail closed). */
static bool covers(jv clearance, jv label)
{
	if (jv_get_kind(label) != JV_KIND_ARRAY || jv_get_kind(clearance) != JV_KIND_ARRAY)
		return false;
	bool ok = true;
	jv_array_foreach(label, i, t)
	{
		(void)i;
		bool found = false;
		jv_array_foreach(clearance, k, u)
		{
			(void)k;
			found |= jv_get_kind(t) == JV_KIND_STRING && jv_equal(jv_copy(t), jv_copy(u));
			jv_free(u);
		}
		ok &= found;
		jv_free(t);
	}
	return ok;
}

/* The test build's switch (GL_TEST_META_UNLABELLED, tests/labelled-fields.bats):
 * every field to every consumer, as before SPEC §6 said otherwise. */
static bool unfiltered(void)
{
#ifdef GL_TESTING
	return getenv("GL_TEST_META_UNLABELLED") != NULL;
#else
	return false;
#endif
}

/* record.F filtered to the entries whose label (record.labels.F[i]) the
 * clearance covers, with those labels as *labels (owned). */
static jv filtered(jv record, const char *f, jv clearance, jv *labels)
{
	jv all = gl_json_get(record, f);
	jv lab = gl_json_get(record, "labels");
	jv ls = jv_get_kind(lab) == JV_KIND_OBJECT ? gl_json_get(lab, f) : jv_invalid();
	jv_free(lab);
	jv out = jv_array();
	*labels = jv_array();
	if (jv_get_kind(all) == JV_KIND_ARRAY) {
		int n = jv_array_length(jv_copy(all));
		bool have = jv_get_kind(ls) == JV_KIND_ARRAY && jv_array_length(jv_copy(ls)) == n;
		for (int i = 0; i < n; i++) {
			jv l = have ? jv_array_get(jv_copy(ls), i) : jv_invalid();
			if (unfiltered() || covers(clearance, l)) {
				out = jv_array_append(out, jv_array_get(jv_copy(all), i));
				*labels = jv_array_append(*labels, jv_is_valid(l) ? l : jv_null());
			} else {
				jv_free(l);
			}
		}
	}
	jv_free(all);
	jv_free(ls);
	return out;
}

/* _meta.germline for a consumer cleared for clearance (docs/gl-run.md
 * "Field labels"): the result's label, the plan-fixed release, copies
 * where plan-fixed or covered, and the entries of delivered, denied and
 * triggers whose labels are covered, with labels.{delivered,denied,
 * triggers} naming each kept entry's label. */
static jv meta_germline(jv record, jv mine, jv clearance)
{
	jv label = gl_json_get(mine, "label");
	jv g = JV_OBJECT(jv_string("label"), jv_is_valid(label) ? label : jv_array(),
			 jv_string("release"), gl_json_get(record, "release"));
	const char *mode = gl_json_get_str(record, "mode");
	jv lab = gl_json_get(record, "labels");
	jv call = jv_get_kind(lab) == JV_KIND_OBJECT ? gl_json_get(lab, "call") : jv_invalid();
	jv_free(lab);
	/* copies: the plan's group count, but a lazy call's copies follow
	 * what its full-view copy contacted (Lemma 2): labelled by the call */
	if (unfiltered() || !mode || strcmp(mode, "lazy") || covers(clearance, call))
		g = jv_object_set(g, jv_string("copies"), gl_json_get(record, "copies"));
	jv_free(call);
	static const char *const fields[] = {"delivered", "denied", "triggers", NULL};
	jv labels = jv_object();
	for (int i = 0; fields[i]; i++) {
		jv l;
		g = jv_object_set(g, jv_string(fields[i]), filtered(record, fields[i], clearance, &l));
		labels = jv_object_set(labels, jv_string(fields[i]), l);
	}
	g = jv_object_set(g, jv_string("labels"), labels);
	jv w = gl_json_get(mine, "withheld"); /* the plan's: names the consumer gave */
	if (jv_get_kind(w) == JV_KIND_ARRAY)
		return jv_object_set(g, jv_string("withheld"), w);
	jv_free(w);
	return g;
}

/* "a, b" of the items mine's copy was not given (owned), or NULL. */
static char *withheld_text(jv mine)
{
	jv w = gl_json_get(mine, "withheld");
	struct gl_buf b = {0};
	if (jv_get_kind(w) == JV_KIND_ARRAY)
		jv_array_foreach(w, i, n)
		{
			if (jv_get_kind(n) == JV_KIND_STRING) {
				if (b.len)
					gl_buf_add(&b, ", ", 2);
				gl_buf_add(&b, jv_string_value(n), strlen(jv_string_value(n)));
			}
			jv_free(n);
		}
	jv_free(w);
	if (!b.len) {
		free(b.data);
		return NULL;
	}
	gl_buf_add(&b, "", 1);
	return b.data;
}

#define WITHHELD_NOTE "withheld from this consumer's copy (labels beyond its clearance): "

/* A failed tool result (isError) of mine, told which items its copy did
 * not have: a tool that fails on a file it was not given says only that
 * it could not read it ("EACCES … scandir '/'"). v consumed. */
static jv note_withheld(jv v, jv mine)
{
	autofree char *names = withheld_text(mine);
	if (!names || gl_json_get_bool(v, "isError", 0) != 1)
		return v;
	jv c = gl_json_get(v, "content");
	if (jv_get_kind(c) != JV_KIND_ARRAY) {
		jv_free(c);
		return v;
	}
	autofree char *t = gl_xasprintf("germline: " WITHHELD_NOTE "%s", names);
	c = jv_array_append(c, JV_OBJECT(jv_string("type"), jv_string("text"), jv_string("text"),
					 jv_string(t)));
	return jv_object_set(v, jv_string("content"), c);
}

/* v (consumed) as a CallToolResult: a germline-protocol function's value
 * becomes a text content (and structuredContent when an object). */
static jv as_tool_result(jv v)
{
	if (tool_result(v))
		return v;
	struct gl_buf b = {0};
	gl_json_dump(&b, v);
	jv text = JV_OBJECT(jv_string("type"), jv_string("text"), jv_string("text"),
			    jv_string_sized(b.data ? b.data : "", (int)b.len));
	free(b.data);
	jv wrapped =
	    jv_object_set(jv_object(), jv_string("content"), jv_array_append(jv_array(), text));
	if (jv_get_kind(v) == JV_KIND_OBJECT)
		return jv_object_set(wrapped, jv_string("structuredContent"), v);
	jv_free(v);
	return wrapped;
}

/* mine's field (results[].log or results[].progress) as the params of
 * notifications/message or notifications/progress, each labelled with
 * label (borrowed; jv_invalid(): a baseline's, unlabelled). */
static jv notes_params(jv mine, const char *field, jv label)
{
	jv log = gl_json_get(mine, field), out = jv_array();
	if (jv_get_kind(log) == JV_KIND_ARRAY)
		jv_array_foreach(log, i, e)
		{
			(void)i;
			if (jv_get_kind(e) != JV_KIND_OBJECT) {
				jv_free(e);
				continue;
			}
			/* a baseline's result (Sig+Pin) has no label: none is claimed */
			if (jv_is_valid(label))
				e = jv_object_set(e, jv_string("_meta"),
						  JV_OBJECT(jv_string("germline"),
							    JV_OBJECT(jv_string("label"), jv_copy(label))));
			out = jv_array_append(out, e);
		}
	jv_free(log);
	return out;
}

/* Is mine's value (borrowed) what record's function (resources/read,
 * prompts/get, completion/complete, a tool) answers? */
static bool value_shaped(jv record, jv mine)
{
	const char *fn = gl_json_get_str(record, "function");
	jv v = gl_json_get(mine, "value");
	bool ok = !fn || gl_mcp_result_shape(fn, v);
	jv_free(v);
	return ok;
}

/* mine's value (borrowed) as the answer of record's function: a
 * CallToolResult for a tool, with the withheld note; a method's result
 * as it is. */
static jv answer_value(jv record, jv mine)
{
	const char *fn = gl_json_get_str(record, "function");
	jv v = gl_json_get(mine, "value");
	if (fn && gl_mcp_method_fn(fn))
		return v;
	return note_withheld(as_tool_result(v), mine);
}

int gl_mcp_result(jv record, const char *consumer, jv clearance, jv *result, int *code,
		  char **message, jv *data, jv *log, jv *progress)
{
	*result = jv_invalid();
	*log = *progress = jv_invalid();
	if (gl_json_get_bool(record, "ok", 0) != 1) {
		/* a refusal after a copy ran carries the call's label */
		jv lab = gl_json_get(record, "labels");
		jv call = jv_get_kind(lab) == JV_KIND_OBJECT ? gl_json_get(lab, "call")
							     : jv_invalid();
		jv_free(lab);
		if (jv_is_valid(call) && !unfiltered() && !covers(clearance, call)) {
			jv_free(call);
			return not_cleared(code, message, data);
		}
		const char *e = gl_json_get_str(record, "error");
		return error(e ? e : "failed", gl_json_get_str(record, "detail"), call, code,
			     message, data);
	}
	jv results = gl_json_get(record, "results");
	jv mine = gl_json_array_find(results, "consumer", consumer);
	jv_free(results);
	int rc;
	jv label = jv_is_valid(mine) ? gl_json_get(mine, "label") : jv_invalid();
	/* Sig+Pin gives no label at all (the baseline, docs/gl-run.md "Modes"):
	 * its results pass as they are. Any other result, value or error, goes
	 * to the consumer only where its clearance covers the label. */
	bool cleared = unfiltered() || !jv_is_valid(label) || covers(clearance, label);
	if (jv_is_valid(mine) && cleared) {
		*log = notes_params(mine, "log", label);
		*progress = notes_params(mine, "progress", label);
	}
	if (!jv_is_valid(mine)) {
		rc = error("protocol", "the call produced no result for this consumer", jv_invalid(),
			   code, message, data);
	} else if (!cleared) {
		rc = not_cleared(code, message, data);
	} else if (gl_json_get_bool(mine, "ok", 0) == 1 && !value_shaped(record, mine)) {
		rc = error("protocol", "the server's answer has not the method's result shape",
			   jv_copy(label), code, message, data);
	} else if (gl_json_get_bool(mine, "ok", 0) != 1) {
		const char *e = gl_json_get_str(mine, "error"), *d = gl_json_get_str(mine, "detail");
		autofree char *names = withheld_text(mine);
		autofree char *dw =
		    names ? gl_xasprintf("%s; " WITHHELD_NOTE "%s", d ? d : "failed", names) : NULL;
		rc = error(e ? e : "failed", dw ? dw : d, jv_copy(label), code, message, data);
	} else {
		jv v = answer_value(record, mine);
		jv meta = gl_json_get(v, "_meta");
		if (jv_get_kind(meta) != JV_KIND_OBJECT) {
			jv_free(meta);
			meta = jv_object();
		}
		meta = jv_object_set(meta, jv_string("germline"),
				     meta_germline(record, mine, clearance));
		*result = jv_object_set(v, jv_string("_meta"), meta);
		rc = 0;
	}
	jv_free(label);
	jv_free(mine);
	return rc;
}
