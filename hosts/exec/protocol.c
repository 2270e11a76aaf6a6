/* protocol.c — gl-exec-host speaking the release's protocol to its target
 * (SPEC §5, §11; docs/exec.md): "germline" (the call JSON in, one result
 * JSON value out, then the target exits) and "mcp-stdio" (MCP JSON-RPC
 * 2.0, revision 2025-06-18: initialize, notifications/initialized,
 * tools/call; tools/list for gl-run's discovery check). The target's
 * answers are hostile: a line that is not JSON-RPC is skipped, a request
 * from the server is answered with ping's empty result or refused. */
#define _GNU_SOURCE
#include "host_impl.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "json/json.h"
#include "release/manifest.h"
#include "json/jsonrpc.h"
#include "json/msg.h"

#define MCP_VERSION "2025-06-18"

bool mcp_up;
static int64_t next_id = 1;
/* the server's serverInfo and instructions from its initialize answer */
static jv server_init; /* zero: jv_invalid() until the first initialize */
static jv call_log;    /* zero: jv_invalid() until the first log message */
static unsigned log_dropped;

/* A notifications/message of the server (params borrowed): kept for the
 * call's result when it fits, else counted. */
static void keep_log(jv params)
{
	if (!jv_is_valid(call_log))
		call_log = jv_array();
	autobuf struct gl_buf b = {0};
	if (jv_get_kind(params) == JV_KIND_OBJECT)
		gl_json_dump(&b, params);
	if (jv_get_kind(params) != JV_KIND_OBJECT || b.len > GL_MSG_LOG_ENTRY_MAX ||
	    jv_array_length(jv_copy(call_log)) >= GL_MSG_LOG_MAX - 1)
		log_dropped++;
	else
		call_log = jv_array_append(call_log, jv_copy(params));
}

/* The token the host gives the server in every tools/call, so that a
 * server that reports progress does (docs/mcp.md "Cancellation and
 * progress"); gl-run passes its notifications on under the client's own
 * token, to a client that asked. */
#define PROGRESS_TOKEN "germline"
static jv call_progress; /* zero: jv_invalid() until the first one */

/* A notifications/progress of the server (params borrowed): kept, the last
 * GL_MSG_PROGRESS_MAX, when it is for the host's token; its message only
 * when it fits (lib/json/msg.c checks what is kept again). */
static void keep_progress(jv params)
{
	const char *tok = gl_json_get_str(params, "progressToken");
	jv p = jv_get_kind(params) == JV_KIND_OBJECT ? gl_json_get(params, "progress")
						     : jv_invalid();
	if (!tok || strcmp(tok, PROGRESS_TOKEN) || jv_get_kind(p) != JV_KIND_NUMBER) {
		jv_free(p);
		return;
	}
	jv k = JV_OBJECT(jv_string("progress"), p);
	jv t = gl_json_get(params, "total"), m = gl_json_get(params, "message");
	if (jv_get_kind(t) == JV_KIND_NUMBER)
		k = jv_object_set(k, jv_string("total"), jv_copy(t));
	if (jv_get_kind(m) == JV_KIND_STRING &&
	    jv_string_length_bytes(jv_copy(m)) <= GL_MSG_PROGRESS_TEXT_MAX &&
	    strlen(jv_string_value(m)) == (size_t)jv_string_length_bytes(jv_copy(m)))
		k = jv_object_set(k, jv_string("message"), jv_copy(m));
	jv_free(t);
	jv_free(m);
	if (!jv_is_valid(call_progress))
		call_progress = jv_array();
	int n = jv_array_length(jv_copy(call_progress));
	if (n >= GL_MSG_PROGRESS_MAX)
		call_progress = jv_array_slice(call_progress, n - GL_MSG_PROGRESS_MAX + 1, n);
	call_progress = jv_array_append(call_progress, k);
}

jv mcp_take_progress(void)
{
	jv out = jv_is_valid(call_progress) ? call_progress : jv_array();
	call_progress = jv_array();
	return out;
}

jv mcp_take_log(void)
{
	jv out = jv_is_valid(call_log) ? call_log : jv_array();
	if (log_dropped) {
		autofree char *t = gl_xasprintf("%u log messages of the server not passed on "
						"(more than %d, or larger than %d bytes)",
						log_dropped, GL_MSG_LOG_MAX - 1, GL_MSG_LOG_ENTRY_MAX);
		out = jv_array_append(out, JV_OBJECT(jv_string("level"), jv_string("warning"),
						     jv_string("logger"), jv_string("germline"),
						     jv_string("data"), jv_string(t)));
	}
	call_log = jv_array();
	log_dropped = 0;
	return out;
}

static int send_line(int fd, jv m, struct end *e) /* consumes m; 0, or -1 with e */
{
	int rc = gl_rpc_write(fd, gl_mono_ns() + (int64_t)IO_MS * 1000000 * 3, m);
	jv_free(m);
	if (rc < 0)
		return fail(e, "mcp: cannot write to the server (it exited?)", jv_invalid());
	return 0;
}

/* The next message from the server that answers id; requests from the
 * server are answered (ping) or refused; notifications dropped.
 * jv_invalid() with e on failure. */
static jv await_response(struct io *io, int64_t id, struct end *e)
{
	for (;;) {
		if (pump(io, true, e) < 0)
			return jv_invalid();
		char *nl = io->out.len ? memchr(io->out.data, '\n', io->out.len) : NULL;
		if (!nl) {
			fail(e, "mcp: the server closed its stdout before answering", jv_invalid());
			return jv_invalid();
		}
		size_t n = (size_t)(nl - io->out.data);
		jv v = gl_json_parse(io->out.data, n && io->out.data[n - 1] == '\r' ? n - 1 : n);
		memmove(io->out.data, nl + 1, io->out.len - n - 1);
		io->out.len -= n + 1;
		enum gl_rpc_kind kind;
		struct gl_fail f = {0};
		if (!jv_is_valid(v) || gl_rpc_validate(v, &kind, &f) < 0) {
			gl_fail_clear(&f);
			jv_free(v);
			continue; /* not JSON-RPC: e.g. a stray log line; skipped */
		}
		if (kind == GL_RPC_REQUEST) {
			const char *method = gl_json_get_str(v, "method");
			jv rid = gl_json_get(v, "id");
			int rc = method && !strcmp(method, "ping")
				     ? send_line(io->tfd, gl_rpc_result(rid, jv_object()), e)
				     : send_line(io->tfd,
						 gl_rpc_error(rid, GL_RPC_METHOD_NOT_FOUND,
							      "method not offered by germline's client",
							      jv_null()),
						 e);
			jv_free(v);
			if (rc < 0)
				return jv_invalid();
			continue;
		}
		int64_t got;
		if ((kind == GL_RPC_RESULT || kind == GL_RPC_ERROR) && gl_json_get_int(v, "id", &got) == 0 &&
		    got == id)
			return v;
		const char *nm = kind == GL_RPC_NOTIFICATION ? gl_json_get_str(v, "method") : NULL;
		if (nm && !strcmp(nm, "notifications/message")) {
			jv params = gl_json_get(v, "params");
			keep_log(params);
			jv_free(params);
		} else if (nm && !strcmp(nm, "notifications/progress")) {
			jv params = gl_json_get(v, "params");
			keep_progress(params);
			jv_free(params);
		}
		jv_free(v);
	}
}

static char *rpc_error_text(jv resp)
{
	jv e = gl_json_get(resp, "error");
	int64_t code = 0;
	gl_json_get_int(e, "code", &code);
	const char *m = gl_json_get_str(e, "message");
	char *s = gl_xasprintf("mcp error %lld: %s", (long long)code, m ? m : "");
	jv_free(e);
	return s;
}

/* initialize and notifications/initialized, once per server. 0, or -1 with e. */
static int mcp_init(struct io *io, struct end *e)
{
	jv init = JV_OBJECT(jv_string("protocolVersion"), jv_string(MCP_VERSION),
			    jv_string("capabilities"), jv_object(), jv_string("clientInfo"),
			    JV_OBJECT(jv_string("name"), jv_string("germline"), jv_string("version"),
				      jv_string("1")));
	int64_t id = next_id++;
	if (send_line(io->tfd, gl_rpc_request(jv_number((double)id), "initialize", init), e) < 0)
		return -1;
	jv r = await_response(io, id, e);
	if (!jv_is_valid(r))
		return -1;
	if (jv_object_has(jv_copy(r), jv_string("error"))) {
		autofree char *t = rpc_error_text(r);
		jv_free(r);
		return fail(e, t, jv_invalid());
	}
	/* what the server said of itself, for the discovery check's answer
	 * (the broker types and bounds it: lib/broker/mcp.c) */
	jv res = gl_json_get(r, "result");
	jv_free(server_init);
	server_init = jv_object();
	static const char *const keep[] = {"serverInfo", "instructions", NULL};
	for (size_t i = 0; keep[i] && jv_get_kind(res) == JV_KIND_OBJECT; i++) {
		jv v = gl_json_get(res, keep[i]);
		if (jv_is_valid(v))
			server_init = jv_object_set(server_init, jv_string(keep[i]), v);
		else
			jv_free(v);
	}
	jv_free(res);
	jv_free(r);
	if (send_line(io->tfd, gl_rpc_notification("notifications/initialized", jv_null()), e) < 0)
		return -1;
	mcp_up = true;
	return 0;
}

/* Every page of the server's list method (its results' key), at most 64
 * pages; what it gave before an error answer (none: []). */
static jv mcp_paged(struct io *io, const char *method, const char *key, struct end *e)
{
	jv all = jv_array(), cursor = jv_null();
	for (int page = 0; page < 64; page++) {
		jv params = jv_get_kind(cursor) == JV_KIND_STRING ? JV_OBJECT(jv_string("cursor"), cursor)
								   : (jv_free(cursor), jv_null());
		cursor = jv_null();
		int64_t id = next_id++;
		if (send_line(io->tfd, gl_rpc_request(jv_number((double)id), method, params), e) < 0)
			break;
		jv r = await_response(io, id, e);
		if (!jv_is_valid(r))
			break;
		jv res = gl_json_get(r, "result");
		jv t = jv_get_kind(res) == JV_KIND_OBJECT ? gl_json_get(res, key) : jv_invalid();
		jv_free(cursor);
		cursor = jv_get_kind(res) == JV_KIND_OBJECT ? gl_json_get(res, "nextCursor") : jv_null();
		if (jv_get_kind(t) == JV_KIND_ARRAY)
			all = jv_array_concat(all, t);
		else
			jv_free(t);
		jv_free(res);
		jv_free(r);
		if (jv_get_kind(cursor) != JV_KIND_STRING)
			break;
	}
	jv_free(cursor);
	return all;
}

/* Does the discovery call's args (borrowed) ask for list name? */
static bool wants_list(jv args, const char *name)
{
	jv l = gl_json_get(args, "lists");
	bool want = false;
	if (jv_get_kind(l) == JV_KIND_ARRAY)
		jv_array_foreach(l, i, x)
		{
			(void)i;
			want |= jv_get_kind(x) == JV_KIND_STRING && !strcmp(jv_string_value(x), name);
			jv_free(x);
		}
	jv_free(l);
	return want;
}

/* gl-run's discovery check (lib/broker/mcp.h): the server's own tools list,
 * and its resources and prompts lists when args (consumed) ask for them
 * (lib/broker/mcp_lists.h), every page, and nothing else (no state write). */
static void mcp_discovery(struct io *io, jv args, struct end *e)
{
	static const char *const lists[][3] = {
	    {"resources", "resources/list", "resources"},
	    {"resources", "resources/templates/list", "resourceTemplates"},
	    {"prompts", "prompts/list", "prompts"}};
	jv out = JV_OBJECT(jv_string("tools"), mcp_paged(io, "tools/list", "tools", e));
	for (size_t i = 0; i < sizeof lists / sizeof *lists && !e->error; i++)
		if (wants_list(args, lists[i][0]))
			out = jv_object_set(out, jv_string(lists[i][2]),
					    mcp_paged(io, lists[i][1], lists[i][2], e));
	jv_free(args);
	if (e->error) {
		jv_free(out);
		return;
	}
	state_dir = NULL;
	e->value = jv_object_set(out, jv_string("server"),
				 jv_is_valid(server_init) ? jv_copy(server_init) : jv_object());
}

/* One MCP call (args consumed) into e. */
void run_mcp(struct io *io, const char *function, jv args, struct end *e)
{
	if (!mcp_up && mcp_init(io, e) < 0) {
		jv_free(args);
		return;
	}
	if (!strcmp(function, "tools/list")) {
		mcp_discovery(io, args, e);
		return;
	}
	jv_free(mcp_take_log()); /* what the server logged before this call is not the call's */
	jv_free(mcp_take_progress());
	int64_t id = next_id++;
	/* a resource read or a prompt: the method itself, its params the args */
	jv req = gl_mcp_method_fn(function)
		     ? gl_rpc_request(jv_number((double)id), function, args)
		     : gl_rpc_request(jv_number((double)id), "tools/call",
				      JV_OBJECT(jv_string("name"), jv_string(function),
						jv_string("arguments"), args, jv_string("_meta"),
						JV_OBJECT(jv_string("progressToken"),
							  jv_string(PROGRESS_TOKEN))));
	if (send_line(io->tfd, req, e) < 0)
		return;
	jv r = await_response(io, id, e);
	if (!jv_is_valid(r))
		return;
	if (jv_object_has(jv_copy(r), jv_string("error"))) {
		autofree char *t = rpc_error_text(r);
		jv_free(r);
		fail(e, t, jv_invalid());
		return;
	}
	e->value = gl_json_get(r, "result");
	jv_free(r);
}

/* One "germline"-protocol call (call consumed) into e: the target reads
 * the call, writes one JSON value and exits. */
void run_germline(struct io *io, jv call, struct end *e)
{
	jv in = jv_object_delete(call, jv_string("type"));
	in = jv_object_delete(in, jv_string("twin"));
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, in);
	jv_free(in);
	/* write while serving the relay: the input may be larger than the
	 * socket buffer */
	size_t off = 0;
	while (off < b.len) {
		ssize_t w = send(io->tfd, b.data + off, b.len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			break;
		struct pollfd p = {.fd = io->tfd, .events = POLLOUT};
		poll(&p, 1, 100);
	}
	shutdown(io->tfd, SHUT_WR);
	if (pump(io, false, e) < 0)
		return;
	int st = 0;
	while (waitpid(target, &st, 0) < 0 && errno == EINTR)
		;
	target = -1;
	jv v = gl_json_parse(io->out.data ? io->out.data : "", io->out.len);
	if (!jv_is_valid(v)) {
		jv_free(v);
		jv why = WIFEXITED(st) ? jv_string_fmt("exit status %d", WEXITSTATUS(st))
				       : jv_string_fmt("signal %d", WTERMSIG(st));
		fail(e, io->out.len ? "the tool's output is not one JSON value" : "the tool wrote no result",
		     why);
		return;
	}
	e->value = v;
}
