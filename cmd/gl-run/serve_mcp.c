/* serve_mcp.c — gl-run --serve-mcp: gl-run as an MCP server on stdio for
 * one release (SPEC §11; docs/mcp.md), for agent hosts that speak MCP.
 *
 * Newline-delimited JSON-RPC 2.0 (lib/json/jsonrpc.h) on stdin/stdout, read by
 * lib/session/mcp_serve.h's reader thread so that a running call can be cancelled:
 *   initialize      protocolVersion negotiated (lib/broker/mcp_revision.h:
 *                   2024-11-05 to 2025-11-25), our capabilities (tools,
 *                   logging; resources and prompts when declared),
 *                   the server's own serverInfo and instructions (its
 *                   discovery), germline's in _meta.germline
 *   ping            {}
 *   tools/list      from the signed manifest (lib/broker/mcp.h gl_mcp_tools_list)
 *   resources/list, resources/templates/list, prompts/list
 *                   the discovery copy's lists, for a release that declares
 *                   resources/read or prompts/get (lib/broker/mcp_lists.h)
 *   resources/read, prompts/get
 *                   a call of the function of that name, its params the
 *                   args, answered as tools/call is (serve_mcp_call.c)
 *   tools/call      arguments checked against the tool's inputSchema
 *                   (lib/json/jsonschema.h; -32602 naming the field), then an
 *                   envelope {release, function: name, args: arguments,
 *                   consumers: [consumer]} run exactly as gl-run runs a
 *                   JSON Lines envelope (items from items_from_args, plan
 *                   recomputed, germline execution); the tool result with
 *                   its label in _meta.germline.label, a refusal as an MCP
 *                   error with the SPEC §2 code in data.error and its label
 *                   in data.label; only what the consumer's clearance
 *                   covers (SPEC §6; lib/broker/mcp.h), else "not_cleared";
 *                   notifications/progress for a progressToken, no answer
 *                   once notifications/cancelled named it
 *   other requests  -32601; other notifications and responses are ignored
 * A line that is not JSON is answered with -32700, one that is not a
 * JSON-RPC message with -32600 (id null), and the stream goes on. Every
 * refusal and every copy failure is also one line on stderr (the log an
 * agent host keeps of a stdio server): codes and sanitised names only. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "json/json.h"
#include "json/jsonrpc.h"
#include "json/log.h"
#include "broker/mcp.h"
#include "broker/mcp_revision.h"
#include "session/jobs.h"
#include "session/mcp_serve.h"
#include "json/msg.h"
#include "core/util.h"

#include "serve_mcp.h"
#include "serve_mcp_impl.h"

/* Write m (consumed). An answer above the line cap (a release's huge
 * result or tool list) becomes an internal error for the same id. */
void serve_send(struct serve *v, jv m)
{
	if (gl_mcp_io_send(v->io, m) < 0) {
		if (errno != EMSGSIZE)
			gl_die_errno(GL_EXIT_USAGE, "stdout");
		jv e = gl_rpc_error(gl_json_get(m, "id"), GL_RPC_INTERNAL_ERROR,
				    "germline: the answer is larger than the 8 MiB line cap",
				    JV_OBJECT(jv_string("error"), jv_string("too_long"),
					      jv_string("detail"),
					      jv_string("the answer is larger than the 8 MiB line cap")));
		if (gl_mcp_io_send(v->io, e) < 0)
			gl_die_errno(GL_EXIT_USAGE, "stdout");
		jv_free(e);
	}
	jv_free(m);
}

/* "tools/call NAME: WHAT: CODE[: DETAIL]" on stderr; the name is the
 * client's, the detail the broker's own (never a copy's): both sanitised
 * and cut. */
void serve_warn_call(const char *tool, const char *what, const char *code, const char *detail)
{
	const char *t = tool ? tool : "?";
	autofree char *ts = gl_sanitize(t, strnlen(t, 64));
	autofree char *ds = detail ? gl_sanitize(detail, strnlen(detail, 200)) : NULL;
	gl_warn("tools/call %s: %s: %.64s%s%s", ts, what, code ? code : "failed", ds ? ": " : "",
		ds ? ds : "");
}

/* The tool list (borrowed, cached after its first success), or
 * jv_invalid() with *f. */
jv serve_tools(struct serve *v, struct gl_fail *f)
{
	if (jv_is_valid(v->tools))
		return v->tools;
	jv list = gl_session_tools(v->s, v->release, f);
	if (jv_is_valid(list))
		v->tools = list;
	return list;
}

/* initialize: the revision negotiated (lib/broker/mcp_revision.h), and
 * what the server said of itself, which takes its discovery: a launch and a
 * discovery copy before the answer (a release that cannot be discovered
 * is answered with germline's own, and refused at tools/list as before).
 * -1 when params carry no protocolVersion. */
static int initialize(struct serve *v, jv params, jv *result)
{
	const char *want = jv_get_kind(params) == JV_KIND_OBJECT
			       ? gl_json_get_str(params, "protocolVersion")
			       : NULL;
	if (!want)
		return -1;
	v->rev = gl_mcp_negotiate(want);
	autofail struct gl_fail f = {0};
	serve_tools(v, &f);
	*result = gl_mcp_initialize(v->rev, gl_session_server(v->s, v->release));
	return 0;
}

/* stderr and the log for a record (borrowed): its refusal, or each
 * consumer's failed copy. A detail is shown only for a refusal before any
 * copy ran (no "labels": the broker's own words); after, codes only. */
static void report_record(jv rec, const char *tool)
{
	gl_log_result(rec);
	if (gl_json_get_bool(rec, "ok", 0) != 1) {
		bool copy_ran = jv_object_has(jv_copy(rec), jv_string("labels"));
		serve_warn_call(tool, "refused", gl_json_get_str(rec, "error"),
			  copy_ran ? NULL : gl_json_get_str(rec, "detail"));
		return;
	}
	jv res = gl_json_get(rec, "results");
	if (jv_get_kind(res) == JV_KIND_ARRAY)
		jv_array_foreach(res, i, r)
		{
			(void)i;
			const char *e = gl_json_get_str(r, "error");
			if (gl_json_get_bool(r, "ok", 0) != 1 &&
			    !(e && !strcmp(e, "cancelled"))) /* said by report_cancelled */
				serve_warn_call(tool, "copy failed", e, NULL);
			jv_free(r);
		}
	jv_free(res);
}

/* A call the client cancelled: no answer goes out (MCP "Cancellation");
 * stderr and the log name it by its call id (the envelope's, as in its
 * call_start event) and the client's request id. tag {id, name, call} is
 * borrowed. */
static void report_cancelled(struct serve *v, jv tag)
{
	jv rid = gl_json_get(tag, "id"), call = gl_json_get(tag, "call");
	autobuf struct gl_buf rtext = {0};
	gl_json_dump(&rtext, rid); /* a string or a number (jsonrpc.c) */
	autofree char *detail = gl_xasprintf(
	    "no answer sent (call %s, request %.*s)",
	    jv_get_kind(call) == JV_KIND_STRING ? jv_string_value(call) : "none",
	    (int)(rtext.len < 64 ? rtext.len : 64), rtext.data ? rtext.data : "");
	serve_warn_call(gl_json_get_str(tag, "name"), "cancelled by the client", "cancelled", detail);
	gl_log_event("cancelled",
		     JV_OBJECT(jv_string("id"), jv_is_valid(call) ? call : jv_null(),
			       jv_string("request"), jv_is_valid(rid) ? rid : jv_null(),
			       jv_string("release"), jv_string(v->release), jv_string("function"),
			       gl_log_field(tag, "name")));
}

/* The progress a tools/call asked for (params borrowed): its token, or
 * jv_invalid(). */
static jv progress_token(jv params)
{
	jv meta = jv_get_kind(params) == JV_KIND_OBJECT ? gl_json_get(params, "_meta") : jv_invalid();
	jv token = jv_get_kind(meta) == JV_KIND_OBJECT ? gl_json_get(meta, "progressToken")
						       : jv_invalid();
	jv_free(meta);
	return token;
}

/* A tag {id, name, call, token?} of a call request (id and params
 * borrowed): what names the call once it is cancelled, and the client's
 * progress token, if any, for the server's progress. */
static jv call_tag(const struct serve *v, jv id, const char *method, jv params)
{
	const char *name = serve_fn_of(method, params);
	jv tag = JV_OBJECT(jv_string("id"), jv_copy(id), jv_string("name"),
			   name ? jv_string(name) : jv_null(), jv_string("call"),
			   v->call_id[0] ? jv_string(v->call_id) : jv_null());
	jv token = progress_token(params);
	if (jv_is_valid(token))
		return jv_object_set(tag, jv_string("token"), token);
	jv_free(token);
	return tag;
}

/* The server's log messages of a call (log consumed: gl_mcp_result's),
 * as notifications/message before its answer, those below the level the
 * client set (logging/setLevel; none: all) left out. */
static void send_log(struct serve *v, jv log)
{
	if (jv_get_kind(log) == JV_KIND_ARRAY)
		jv_array_foreach(log, i, p)
		{
			(void)i;
			if (gl_msg_log_level(gl_json_get_str(p, "level")) >= v->min_level)
				serve_send(v, gl_rpc_notification("notifications/message", p));
			else
				jv_free(p);
		}
	jv_free(log);
}

/* The server's progress notifications of a call (progress consumed:
 * gl_mcp_result's) under the client's token (borrowed; jv_invalid(): it
 * asked for none, and gets none), before its answer. MCP's progress
 * increases with each notification: after sent of germline's own (their
 * "progress" counts seconds), only the server's values above the last
 * one sent pass. */
static void send_server_progress(struct serve *v, jv progress, jv token, long sent)
{
	double last = (double)sent;
	bool any = sent > 0;
	jv_kind tk = jv_get_kind(token); /* MCP's ProgressToken: a string or a number */
	if ((tk == JV_KIND_STRING || tk == JV_KIND_NUMBER) && jv_get_kind(progress) == JV_KIND_ARRAY)
		jv_array_foreach(progress, i, p)
		{
			(void)i;
			jv n = gl_json_get(p, "progress");
			double x = jv_get_kind(n) == JV_KIND_NUMBER ? jv_number_value(n) : 0;
			jv_free(n);
			if (jv_get_kind(p) == JV_KIND_OBJECT && (!any || x > last)) {
				last = x;
				any = true;
				p = jv_object_set(p, jv_string("progressToken"), jv_copy(token));
				serve_send(v, gl_rpc_notification("notifications/progress", p));
			} else {
				jv_free(p);
			}
		}
	jv_free(progress);
}

/* The record rec (consumed) of tool name as the client's answer: 0 with
 * *result, or -1 with an error (code, message, data); the server's
 * progress (for the client's token, borrowed, after sent notifications of
 * germline's own) and log messages that the consumer is cleared for go
 * out first. */
static int call_answer(struct serve *v, jv rec, const char *name, jv token, long sent,
		       jv *result, int *code, char **message, jv *data)
{
	report_record(rec, name);
	/* SPEC §6: what reaches the consumer is what its clearance covers */
	jv clearance = gl_session_clearance(v->s, v->consumer);
	jv log, progress;
	int r = gl_mcp_result(rec, v->consumer, clearance, result, code, message, data, &log,
			      &progress);
	send_server_progress(v, progress, token, sent);
	send_log(v, log);
	jv_free(clearance);
	jv_free(rec);
	return r;
}

/* The test build's switch (GL_TEST_MCP_ORDER_OFF, tests/serve-mcp-jobs.bats):
 * every call answered as it finishes and given progress, whatever its
 * consumer's clearance, as before. */
static bool order_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_MCP_ORDER_OFF");
}

struct progress_ask {
	struct gl_mcp_io *io;
	jv id, token; /* borrowed */
};

/* --jobs 1, once the call is read: its progress only when its consumer is
 * cleared for all its copies can reach (gl_session_call_cleared): the
 * number of notifications counts the seconds its slowest copy ran, which
 * a copy holding what the consumer may not see would choose. */
static void progress_if_cleared(const struct gl_session *s, const struct gl_session_call *k,
				void *ctx)
{
	struct progress_ask *a = ctx;
	if (jv_is_valid(a->token) && (order_off() || gl_session_call_cleared(s, k)))
		gl_mcp_io_track(a->io, a->id, a->token);
}

/* tools/call: 0 with *result, or -1 with an error (code, message, data). */
static int tools_call(struct serve *v, jv id, const char *method, jv params, jv *result,
		      int *code, char **message, jv *data)
{
	autobuf struct gl_buf line = {0};
	if (serve_call_envelope(v, method, params, &line, code, message, data) < 0)
		return -1;
	int64_t t0 = gl_mono_ns();
	struct progress_ask ask = {.io = v->io, .id = id, .token = progress_token(params)};
	jv rec = gl_session_line_read(v->s, &line, progress_if_cleared, &ask);
	long sent = gl_mcp_io_untrack(v->io, id); /* germline's own progress ends here */
	rec = jv_object_set(rec, jv_string("elapsed_ms"),
			    jv_number((double)((gl_mono_ns() - t0) / 100000) / 10));
	int r = call_answer(v, rec, serve_fn_of(method, params), ask.token, sent, result, code,
			    message, data);
	jv_free(ask.token);
	return r;
}

/* A tools/call request (id and params borrowed): run, then answer unless
 * the client cancelled it (MCP "Cancellation": the receiver SHOULD NOT
 * respond to a cancelled request). */
static void call(struct serve *v, jv id, const char *method, jv params)
{
	gl_mcp_io_call_begin(v->io, id, jv_invalid()); /* progress: once read */
	jv result = jv_invalid(), data = jv_null();
	int code = 0;
	char *message = NULL;
	int r = tools_call(v, id, method, params, &result, &code, &message, &data);
	if (gl_mcp_io_call_end(v->io)) {
		jv tag = call_tag(v, id, method, params);
		report_cancelled(v, tag);
		jv_free(tag);
		jv_free(result);
		jv_free(data);
	} else if (r == 0) {
		jv_free(data);
		serve_send(v, gl_rpc_result(jv_copy(id), gl_mcp_result_for(result, v->rev)));
	} else {
		serve_send(v, gl_rpc_error(jv_copy(id), code, message, data));
		v->refused = 1;
	}
	free(message);
}

/* --jobs > 1: a call's record (consumed) has arrived; tag (consumed) is
 * {id, name}. Its progress stops, then its answer goes out by its id. */
static void call_done(jv rec, jv tag, void *ctx)
{
	struct serve *v = ctx;
	jv id = gl_json_get(tag, "id"), token = gl_json_get(tag, "token");
	long sent = gl_mcp_io_untrack(v->io, id);
	int64_t before = 0;
	if (gl_json_get_int(tag, "sent", &before) == 0 && before > sent)
		sent = before; /* untracked when its record arrived (call_finished) */
	jv result = jv_invalid(), data = jv_null();
	int code = 0;
	char *message = NULL;
	int r = call_answer(v, rec, gl_json_get_str(tag, "name"), token, sent, &result, &code,
			    &message, &data);
	jv_free(token);
	if (r == 0) {
		jv_free(data);
		serve_send(v, gl_rpc_result(id, gl_mcp_result_for(result, v->rev)));
	} else {
		serve_send(v, gl_rpc_error(id, code, message, data));
		v->refused = 1;
	}
	free(message);
	jv_free(tag);
}

/* --jobs > 1: a tools/call (id and params borrowed) checked at once, then
 * handed to the dispatcher; its answer comes with its record (call_done). */
static void call_async(struct serve *v, jv id, const char *method, jv params)
{
	jv data = jv_null();
	int code = 0;
	char *message = NULL;
	autobuf struct gl_buf line = {0};
	if (serve_call_envelope(v, method, params, &line, &code, &message, &data) < 0) {
		serve_send(v, gl_rpc_error(jv_copy(id), code, message, data));
		v->refused = 1;
		free(message);
		return;
	}
	/* progress only for a call answered as it finishes (gl_jobs_by_clearance) */
	if (gl_jobs_add(v->J, &line, call_tag(v, id, method, params))) {
		jv token = progress_token(params);
		gl_mcp_io_track(v->io, id, token);
		jv_free(token);
	}
}

/* --jobs > 1: a call's record arrived while an earlier call holds its
 * answer (tag borrowed): its progress ends now, so that the number of its
 * notifications does not count the other call's seconds. */
static void call_finished(jv *tag, void *ctx)
{
	struct serve *v = ctx;
	jv id = gl_json_get(*tag, "id");
	long sent = gl_mcp_io_untrack(v->io, id);
	*tag = jv_object_set(*tag, jv_string("sent"), jv_number((double)sent));
	jv_free(id);
}

/* --jobs > 1: notifications/cancelled (msg borrowed) for a call the
 * dispatcher holds (the reader dropped those still queued with it): that
 * call only is cancelled, and gets no answer (MCP "Cancellation"). */
static void cancel_call(struct serve *v, jv msg)
{
	jv p = gl_json_get(msg, "params");
	jv rid = jv_get_kind(p) == JV_KIND_OBJECT ? gl_json_get(p, "requestId") : jv_invalid();
	jv_free(p);
	jv_kind k = jv_get_kind(rid);
	jv tag = k == JV_KIND_STRING || k == JV_KIND_NUMBER ? gl_jobs_cancel(v->J, rid)
							    : jv_invalid();
	if (jv_is_valid(tag)) {
		gl_mcp_io_untrack(v->io, rid); /* no progress after the cancellation */
		report_cancelled(v, tag);
	}
	jv_free(tag);
	jv_free(rid);
}

/* An invalid line: -32700 or -32600, echoing a usable id; else null. */
static void invalid(struct serve *v, struct gl_mcp_in *m)
{
	jv id = jv_get_kind(m->msg) == JV_KIND_OBJECT ? gl_json_get(m->msg, "id") : jv_invalid();
	jv_kind k = jv_get_kind(id);
	if (k != JV_KIND_STRING && k != JV_KIND_NUMBER) {
		jv_free(id);
		id = jv_null();
	}
	bool parse = m->st == GL_RPC_PARSE;
	serve_send(v, gl_rpc_error(id, parse ? GL_RPC_PARSE_ERROR : GL_RPC_INVALID_REQUEST,
				 parse ? "Parse error" : "Invalid Request",
				 jv_string(m->err ? m->err : gl_rpc_status_name(m->st))));
}

static void request(struct serve *v, jv msg)
{
	jv id = gl_json_get(msg, "id");
	jv params = gl_json_get(msg, "params");
	const char *method = gl_json_get_str(msg, "method");
	jv res;
	if (!strcmp(method, "initialize")) {
		if (initialize(v, params, &res) == 0)
			serve_send(v, gl_rpc_result(jv_copy(id), res));
		else
			serve_send(v, gl_rpc_error(jv_copy(id), GL_RPC_INVALID_PARAMS,
						 "initialize needs a string params.protocolVersion",
						 jv_null()));
	} else if (!strcmp(method, "ping")) {
		serve_send(v, gl_rpc_result(jv_copy(id), jv_object()));
	} else if (!strcmp(method, "logging/setLevel")) {
		int rank = jv_get_kind(params) == JV_KIND_OBJECT
			       ? gl_msg_log_level(gl_json_get_str(params, "level"))
			       : -1;
		if (rank < 0) {
			serve_send(v, gl_rpc_error(jv_copy(id), GL_RPC_INVALID_PARAMS,
						 "logging/setLevel needs params.level, an MCP logging level",
						 jv_null()));
		} else {
			v->min_level = rank;
			serve_send(v, gl_rpc_result(jv_copy(id), jv_object()));
		}
	} else if (!strcmp(method, "tools/list")) {
		autofail struct gl_fail f = {0};
		jv list = serve_tools(v, &f);
		if (jv_is_valid(list)) {
			serve_send(v, gl_rpc_result(jv_copy(id), gl_mcp_list_for(jv_copy(list), v->rev)));
		} else {
			const char *code = gl_code_name(f.code), *detail = gl_fail_detail(&f);
			char *m = gl_xasprintf("germline: %s: %s", code, detail);
			autofree char *d = gl_sanitize(detail, strnlen(detail, 300));
			gl_warn("tools/list: refused: %s: %s", code, d);
			gl_log_event("refusal", JV_OBJECT(jv_string("release"), jv_string(v->release),
							  jv_string("error"), jv_string(code)));
			serve_send(v, gl_rpc_error(jv_copy(id), -32000, m,
						 JV_OBJECT(jv_string("error"), jv_string(code),
							   jv_string("detail"), jv_string(detail))));
			free(m);
			v->refused = 1;
		}
	} else if (serve_calls(v, method) && v->J) {
		call_async(v, id, method, params);
	} else if (serve_calls(v, method)) {
		call(v, id, method, params);
	} else if (serve_lists(v, method, &res)) {
		serve_send(v, gl_rpc_result(jv_copy(id), res));
	} else {
		char *m = gl_xasprintf("Method not found: %.64s", method);
		serve_send(v, gl_rpc_error(jv_copy(id), GL_RPC_METHOD_NOT_FOUND, m, jv_null()));
		free(m);
	}
	jv_free(id);
	jv_free(params);
}

/* One message from the reader (m's contents freed). */
static void message(struct serve *v, struct gl_mcp_in *m)
{
	if (m->st != GL_RPC_OK)
		invalid(v, m);
	else if (m->kind == GL_RPC_REQUEST)
		request(v, m->msg);
	else if (v->J && m->kind == GL_RPC_NOTIFICATION &&
		 !strcmp(gl_json_get_str(m->msg, "method"), "notifications/cancelled"))
		cancel_call(v, m->msg);
	/* other notifications and stray responses: nothing to do */
	jv_free(m->msg);
	free(m->err);
}

/* --jobs > 1: wait on the reader's eventfd and the workers' pipes; take
 * messages while the dispatcher has room (initialize, ping, tools/list
 * and refusals answered at once), answer each call as its record comes. */
static void serve_jobs(struct serve *v)
{
	struct pollfd pf[GL_JOBS_MAX + 1];
	bool eof = false;
	for (;;) {
		gl_jobs_step(v->J, NULL, 0, call_done, v);
		struct gl_mcp_in m;
		int got = 0;
		while (!eof && gl_jobs_room(v->J) && (got = gl_mcp_io_try_next(v->io, &m)) == 1)
			message(v, &m);
		eof = eof || got < 0;
		gl_jobs_step(v->J, NULL, 0, call_done, v); /* start what was added */
		if (eof && !gl_jobs_pending(v->J))
			return;
		nfds_t n = 0;
		bool want = !eof && gl_jobs_room(v->J);
		if (want)
			pf[n++] = (struct pollfd){.fd = gl_mcp_io_wake_fd(v->io), .events = POLLIN};
		n += gl_jobs_fds(v->J, pf + n, GL_JOBS_MAX);
		if (n == 0 || poll(pf, n, -1) < 0)
			continue; /* EINTR: look again */
		gl_jobs_step(v->J, pf + (want ? 1 : 0), n - (want ? 1 : 0), call_done, v);
	}
}

int gl_serve_mcp(struct gl_session *s, const char *release, const char *consumer,
		 unsigned jobs)
{
	struct gl_cancel cancel;
	gl_cancel_init(&cancel);
	gl_session_set_cancel(s, &cancel);
	struct serve v = {.s = s, .release = release, .consumer = consumer, .tools = jv_invalid()};
	v.io = gl_mcp_io_start(0, 1, &cancel, jobs > 1);
	if (!v.io)
		gl_die(GL_EXIT_USAGE, "--serve-mcp: cannot start its threads");
	gl_log_event("serve_start", JV_OBJECT(jv_string("release"), jv_string(release),
					      jv_string("consumer"), jv_string(consumer)));
	if (jobs > 1) {
		/* records as they finish: every answer carries its id */
		v.J = gl_jobs_open(s, jobs, true);
		if (!order_off()) /* uncleared calls in request order */
			gl_jobs_by_clearance(v.J, call_finished, &v);
		serve_jobs(&v);
		gl_jobs_close(v.J, call_done, &v);
	} else {
		struct gl_mcp_in m;
		while (gl_mcp_io_next(v.io, &m)) {
			message(&v, &m);
			gl_session_idle(s); /* after the answer is out */
		}
	}
	gl_mcp_io_stop(v.io);
	gl_session_set_cancel(s, NULL);
	jv_free(v.tools);
	gl_log_event("serve_end", JV_OBJECT(jv_string("release"), jv_string(release)));
	return v.refused;
}
