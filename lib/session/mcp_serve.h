/* mcp_serve.h — the stdio side of gl-run --serve-mcp while calls run
 * (issue 17; docs/mcp.md "Cancellation and progress").
 *
 * gl-run runs one tools/call at a time, but the client may speak while it
 * runs: MCP's notifications/cancelled (the client no longer wants the
 * answer: the server SHOULD stop the work and SHOULD NOT respond) and
 * the progress a request asked for with params._meta.progressToken. So
 * a reader thread owns stdin: it reads every message (lib/json/jsonrpc.h, the
 * same bounds as before), queues what the main loop is to answer (at most
 * GL_MCP_QUEUE_MAX messages; then it waits, as a full pipe would), and
 * acts on a cancellation at once: for the running call it fires the
 * call's lib/core/cancel.h control (its copy is killed, no further copy is
 * forked), for a request still queued it drops the request; with
 * concurrent calls (gl-run --jobs > 1) it hands any other cancellation to
 * the main loop, whose dispatcher cancels that one call. A ticker thread
 * sends notifications/progress once a second for each call in flight
 * that carries a progress token (the first after one second: short calls
 * get none). Every write to stdout goes through gl_mcp_io_send (one
 * mutex), and none of progress follows the call's end.
 *
 * The threads touch no jv the main loop holds: a queued message changes
 * hands under the mutex, and ids and tokens are compared as their JSON
 * text. */
#ifndef GL_MCP_SERVE_H
#define GL_MCP_SERVE_H

#include <jv.h>
#include <stdbool.h>

#include "core/cancel.h"
#include "json/jsonrpc.h"

#define GL_MCP_QUEUE_MAX 8     /* messages read ahead of the main loop */
#define GL_MCP_TOKEN_MAX 256   /* bytes of a progress token's JSON text */
#define GL_MCP_TRACK_MAX 64    /* calls with progress at once (= GL_JOBS_MAX) */

struct gl_mcp_io;
struct gl_policy;
struct gl_releases;

/* gl-run --serve-mcp, before its first message (issue 17): does home
 * (GL_HOME; NULL when --releases was given) exist and hold releases_dir,
 * is release installed there (its tree and the verified install record
 * gl-verify wrote), its manifest readable, its runtime and protocol ones
 * gl-run runs, and (check_read_paths) its read_paths granted by pol
 * (lib/plan/readpaths.h; state: the host's state paths)? 0, or -1 with f
 * (usage: gl-run exits 2) naming what is wrong and its path. */
int gl_mcp_serve_check(const char *home, const char *releases_dir, struct gl_releases *rel,
		       const struct gl_policy *pol, const char *const *state,
		       bool check_read_paths, const char *release, struct gl_fail *f);

/* One message as gl_rpc_read gave it (st, kind, msg and err owned; err is
 * the detail of its struct gl_fail, NULL when none). */
struct gl_mcp_in {
	enum gl_rpc_status st;
	enum gl_rpc_kind kind;
	jv msg;
	char *err;
};

/* Start the reader on in_fd and the ticker; answers go to out_fd; cancel
 * is the control the broker arms (borrowed, lives longer). concurrent
 * (gl-run --jobs > 1, calls run by lib/session/jobs.h): a cancellation
 * that names no request still queued here is queued for the main loop,
 * which cancels that call itself. NULL when a thread cannot be started. */
struct gl_mcp_io *gl_mcp_io_start(int in_fd, int out_fd, struct gl_cancel *cancel,
				  bool concurrent);
/* An eventfd that is readable when a message is queued or input ended. */
int gl_mcp_io_wake_fd(const struct gl_mcp_io *io);
/* Without waiting: 1 with the next message, 0 when none is queued, -1 at
 * the end of input. */
int gl_mcp_io_try_next(struct gl_mcp_io *io, struct gl_mcp_in *m);
/* Concurrent calls: progress for the request id (borrowed) with token
 * (borrowed; jv_invalid(): none) until untracked, at most
 * GL_MCP_TRACK_MAX at once. Untrack before the answer is sent: no
 * progress line follows it; untracking says how many were sent (0: none,
 * or it was not tracked), the last "progress" value the client saw. */
void gl_mcp_io_track(struct gl_mcp_io *io, jv id, jv token);
long gl_mcp_io_untrack(struct gl_mcp_io *io, jv id);
/* The next message for the main loop: true, or false at the end of input
 * (EOF or a read error; nothing more will come). */
bool gl_mcp_io_next(struct gl_mcp_io *io, struct gl_mcp_in *m);
/* Write m (borrowed) as one line. 0, or -1 with errno (lib/json/jsonrpc.h). */
int gl_mcp_io_send(struct gl_mcp_io *io, jv m);
/* The request id (borrowed) now runs; token (borrowed): its progress
 * token, or jv_invalid(). Resets the cancel control. */
void gl_mcp_io_call_begin(struct gl_mcp_io *io, jv id, jv token);
/* It ended: true when the client cancelled it (do not answer). */
bool gl_mcp_io_call_end(struct gl_mcp_io *io);
/* Stop the ticker, wait for the reader (after gl_mcp_io_next said the
 * end), free everything. */
void gl_mcp_io_stop(struct gl_mcp_io *io);

#endif
