/* gl-exec-host — the host half of an exec copy (SPEC §5, §11; docs/exec.md).
 *
 * Started by the broker's verified launch (lib/runtime/exec_launch.c) as PID 1 of the
 * copy's namespaces, already confined (Landlock, seccomp, no_new_privs):
 *   fd 3  the broker channel (docs/design/run.md: call, effect/reply,
 *         state_put/ok, result; length-prefixed JSON)
 *   fd 4  the HTTP relay's listening socket, 127.0.0.1:80 of the copy's
 *         own network namespace (the declared hosts resolve to it)
 *   fd 5  the retained target, opened and hashed by the broker
 *   fd 6  the HTTPS relay's listening socket, 127.0.0.1:443 (TLS ended
 *         here with the relay certificate in $GERMLINE_TLS_DIR)
 *   fd 10… one listening socket per declared host:port destination's
 *         port, 127.0.0.1:PORT (stream.c; docs/streams.md)
 *   argv  gl-exec-host PROTOCOL STATE_DIR|- -- ENTRY…
 * or, in a copy of a Node germline (docs/exec.md "The Node germline"),
 *   argv  gl-exec-host mcp-stdio STATE_DIR|- -- --adopt PID
 * with the server already running as PID, fd 5 a socket on its stdin and
 * stdout, and no relay on fds 4 and 6.
 * It reads the call message, restores the release's file state into
 * STATE_DIR, starts the target from fd 5 (execveat AT_EMPTY_PATH) with a
 * socketpair on its stdin/stdout, speaks the release's protocol to it
 * ("germline": call JSON in, result JSON out; "mcp-stdio": MCP JSON-RPC 2.0,
 * revision 2025-06-18: initialize, notifications/initialized, tools/call),
 * turns every HTTP request the target makes into an "effect" message, and
 * ends with state_put (the state directory) and result.
 *
 * It runs next to hostile code, so the broker trusts nothing it says (its
 * messages are copy output); its own job is only to not crash on what the
 * target sends: every read is bounded.
 *
 * This file is the session loop (the copy's side of paper Algorithm 1
 * lines 10–28: the call message m, the twin inputs τ and the slot σ in, a
 * state write and the value out); host_impl.h lists the other parts
 * (channel.c, relay.c, target.c, protocol.c, workspace.c). */
#define _GNU_SOURCE
#include "host_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/json.h"
#include "workspace.h"

static const char *proto;
const char *state_dir; /* the copy's state directory, or NULL */
/* Session mode (a call message with "session":true: gl-run --mode sigpin or
 * sigifc): after each result the next call message is read, and an MCP
 * server keeps running between calls. */
static bool session;

int fail(struct end *e, const char *msg, jv v)
{
	free(e->error);
	jv_free(e->value);
	e->error = gl_xstrdup(msg);
	e->value = v;
	return -1;
}

/* ---- the end: state_put, then result (the last message) ------------------------ */

/* The workspace's tmpfs (limits.workspace_mb; lib/runtime/exec.c) is full: a page
 * cannot be written (or an inode made) there. statfs is denied to a copy,
 * so an unnamed file is the probe; it is gone when closed. */
static bool workspace_full(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ENOSPC;
	static const char page[4096];
	ssize_t w = write(fd, page, sizeof page);
	int e = errno;
	close(fd);
	return w < 0 && e == ENOSPC;
}

/* The call's end (e consumed): the target is killed unless a session's
 * server runs on, the workspace is stored (state_put), then the result.
 * true: the copy is done (main returns); false: the session's next call. */
static bool finish(struct end *e)
{
	bool keep = session && mcp_up && !e->error; /* a session's server runs on */
	if (target > 0 && !keep) {
		stop_target();
		mcp_up = false;
	}
	if (state_dir && !session && workspace_full(state_dir)) {
		/* over its quota: the call fails "disk", nothing is stored and
		 * the slot keeps what it had (issue 15) */
		send_msg(JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("error"),
				   jv_string("workspace: limits.workspace_mb reached (no space left)"),
				   jv_string("limit"), jv_string("disk")));
		return true;
	}
	autofree char *ws_err = NULL;
	jv files = state_dir && !e->error && !session ? gl_ws_collect(state_dir, &ws_err) : jv_invalid();
	if (ws_err) {
		/* out of bounds: the call fails and nothing is stored */
		autofree char *m = gl_xasprintf("workspace not stored: %s", ws_err);
		send_msg(JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("error"), jv_string(m)));
		return !session;
	}
	if (jv_is_valid(files)) {
		send_msg(JV_OBJECT(jv_string("type"), jv_string("state_put"), jv_string("key"),
				   jv_string(GL_WS_KEY), jv_string("value"), files));
		jv ok = recv_msg();
		jv_free(ok);
	} else {
		jv_free(files);
	}
	jv res;
	if (e->error) {
		autofree char *note = stderr_note();
		autofree char *m = jv_get_kind(e->value) == JV_KIND_STRING
				       ? gl_xasprintf("%s (%s)%s", e->error, jv_string_value(e->value), note)
				       : gl_xasprintf("%s%s", e->error, note);
		res = JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("error"), jv_string(m));
	} else {
		res = JV_OBJECT(jv_string("type"), jv_string("result"), jv_string("value"),
				jv_copy(e->value));
	}
	jv log = mcp_take_log(); /* the server's log messages of this call (docs/mcp.md) */
	if (jv_array_length(jv_copy(log)) > 0)
		res = jv_object_set(res, jv_string("log"), log);
	else
		jv_free(log);
	stream_close_all(); /* no connection outlives its call (a session's next) */
	jv progress = mcp_take_progress(); /* and its progress notifications */
	if (jv_array_length(jv_copy(progress)) > 0)
		res = jv_object_set(res, jv_string("progress"), progress);
	else
		jv_free(progress);
	send_msg(res);
	return !session;
}

/* Serve one call message (consumed) into e; sd: the STATE_DIR argument. */
static void serve(struct io *io, jv call, const char *sd, char **targv, struct end *e)
{
	autofree char *function = gl_xstrdup(gl_json_get_str(call, "function"));
	jv sess = gl_json_get(call, "session");
	session = jv_get_kind(sess) == JV_KIND_TRUE;
	jv_free(sess);
	if (!session)
		twin_from(call);
	state_dir = NULL; /* nothing to store until the workspace is restored */
	if (sd && !session) {
		jv st = gl_json_get(call, "state");
		autofree char *why = gl_ws_restore(sd, st);
		jv_free(st);
		if (why) {
			jv_free(call);
			autofree char *m = gl_xasprintf("workspace not restored: the slot's %s is refused: %s",
							GL_WS_KEY, why);
			fail(e, m, jv_invalid());
			return;
		}
	}
	state_dir = sd;
	if (target <= 0) {
		if (io->tfd >= 0)
			close(io->tfd);
		free(io->out.data);
		*io = (struct io){.tfd = -1};
		if (start_target(targv, sd ? sd : "/nonexistent", &io->tfd, e) < 0) {
			jv_free(call);
			return;
		}
	}
	if (!strcmp(proto, "mcp-stdio")) {
		jv args = gl_json_get(call, "args");
		jv_free(call);
		run_mcp(io, function, jv_is_valid(args) ? args : jv_object(), e);
		return;
	}
	run_germline(io, call, e);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: gl-exec-host PROTOCOL STATE_DIR|- -- ENTRY...\n"
				"(started by gl-run for a runtime \"exec\" release; docs/exec.md)\n");
		return 2;
	}
	proto = argv[1];
	const char *sd = strcmp(argv[2], "-") ? argv[2] : NULL;
	for (int fd = CHAN; fd <= RELAY_TLS; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(CHAN, F_SETFL, O_NONBLOCK);
	fcntl(RELAY, F_SETFL, O_NONBLOCK);
	fcntl(RELAY_TLS, F_SETFL, O_NONBLOCK);
	stream_init(); /* fds 10…: the stream destinations' listeners */

	/* One call, or in session mode one after another until the broker
	 * ends the session (EOF on the channel: exit 3). */
	struct io io = {.tfd = -1};
	int status = 0;
	if (!strcmp(argv[4], "--adopt") && (argc != 6 || adopt_target(argv[5], &io.tfd) < 0)) {
		fprintf(stderr, "gl-exec-host: --adopt PID, with the server's socket on fd 5\n");
		return 2;
	}
	/* adopted, the workspace is made here, beneath the copy's own /tmp */
	if (adopted && sd && mkdir(sd, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "gl-exec-host: %s: %s\n", sd, strerror(errno));
		return 2;
	}
	for (bool done = false; !done;) {
		jv call = try_recv_msg();
		const char *type = jv_is_valid(call) ? gl_json_get_str(call, "type") : NULL;
		if (!type || strcmp(type, "call") || !gl_json_get_str(call, "function")) {
			jv_free(call);
			status = 3;
			break;
		}
		struct end e = {.value = jv_invalid()};
		serve(&io, call, sd, argv + 4, &e);
		done = finish(&e);
		free(e.error);
		jv_free(e.value);
	}
	stop_target(); /* a session's server, still running */
	if (io.tfd >= 0)
		close(io.tfd);
	free(io.out.data);
	twin_free();
#if defined(__SANITIZE_ADDRESS__)
	/* LeakSanitizer stops the process with ptrace, which a copy's seccomp
	 * filter denies (lib/sandbox/sandbox.c): confined, the host ends as
	 * it always has; unconfined (tests/exec-host.bats drives it
	 * directly) it returns, and the leak check runs at exit. */
	if (prctl(PR_GET_SECCOMP) != 0)
		_exit(status);
#endif
	return status;
}
