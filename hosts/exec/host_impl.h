/* host_impl.h — what the files of gl-exec-host share (nothing else includes
 * it). The host is one process, PID 1 of an exec copy (gl-exec-host.c says
 * what it is given and what it does); its parts:
 *   gl-exec-host.c  the session loop: a call message in, the workspace
 *                   restored, the target started, the call's end sent
 *                   (state_put, result)
 *   channel.c       the broker channel on fd 3 (length-prefixed JSON)
 *   relay.c         the HTTP relay on fd 4 and HTTPS on fd 6: one request
 *                   -> one effect
 *   relay_parse.c   its parsing half, without I/O (relay_parse.h: the
 *                   request head, a chunked body; fuzz/http.c feeds it)
 *   target.c        starting and ending the target, its twin inputs, its
 *                   stderr's tail, and the loop over its output and the relay
 *   protocol.c      the release's protocol with the target ("germline",
 *                   "mcp-stdio")
 *   workspace.c     the workspace <-> the slot key "gl.files"
 * It runs next to hostile code: every read of what the target sends is
 * bounded, and the broker trusts nothing the host says. */
#ifndef GL_EXEC_HOST_IMPL_H
#define GL_EXEC_HOST_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jv.h>

#include "core/util.h"

#define CHAN 3      /* the broker channel */
#define RELAY 4     /* the HTTP relay's listening socket */
#define TARGET 5    /* the retained target, opened and hashed by the broker */
#define RELAY_TLS 6 /* the HTTPS relay's listening socket */
#define IO_MS 10000 /* one HTTP connection's reads and writes */

/* ---- the call's end (gl-exec-host.c) ---- */

/* How a call ends (what finish sends): an error (malloc'd) with an
 * optional string value for its detail, or a value. Every step returns it
 * up to the session loop in main, so each call's allocations are released
 * on every path (no non-local exit past a cleanup). */
struct end {
	char *error;
	jv value;
};

/* Fail the call: e->error is msg (copied), e->value v (consumed). -1. */
int fail(struct end *e, const char *msg, jv v);

/* The copy's state directory while a call may store it, or NULL (set by
 * serve; the MCP discovery check clears it: it writes no state). */
extern const char *state_dir;

/* ---- the broker channel (channel.c) ---- */

void send_msg(jv m); /* consumes m; a broker that is gone: _exit(3) */
/* The broker's next message (owned object), or jv_invalid(): it is gone,
 * closed the channel or sent no object. */
jv try_recv_msg(void);
jv recv_msg(void); /* the broker's answer (owned object), or _exit(3) */

/* ---- the HTTP relay (relay.c) ---- */

/* One connection of the target (conn, closed here): one request, one
 * effect, the broker's reply back on it. */
void relay_one(int conn);
/* The same on the HTTPS relay: the TLS handshake first, with the relay's
 * certificate (lib/runtime/exec_tls.h). */
void relay_one_tls(int conn);

/* ---- the TCP relay (stream.c; docs/streams.md) ---- */

struct pollfd;
/* Take the stream listeners the launch gave (fds GL_EXEC_STREAM_FD…). */
void stream_init(void);
/* The listeners' and open connections' pollfds into p (room for
 * GL_STREAM_DESTS_MAX + GL_MSG_STREAM_CONNS_MAX); how many. */
size_t stream_pollfds(struct pollfd *p);
/* The poll timeout the connections want (ms; -1: none). */
int stream_timeout(void);
/* After poll: accept, relay, and ask about connections idle IDLE_MS. */
void stream_handle(const struct pollfd *p, size_t n);
/* Close every connection (a session's call ended: none spans two). */
void stream_close_all(void);

/* ---- the target (target.c) ---- */

extern pid_t target; /* the running target, or -1 */

/* The host's side of the target's stdin/stdout, and what it wrote that is
 * not consumed yet. */
struct io {
	int tfd;
	struct gl_buf out;
	bool eof;
};

/* Take the call's twin inputs (borrowed call) for every target this host
 * starts, unless the first call's are taken already. */
void twin_from(jv call);
void twin_free(void);
/* Start the target with ${GL_STATE_DIR} as dir; its end of the socketpair
 * in *tfd. 0, or -1 with e. */
int start_target(char **targv, const char *dir, int *tfd, struct end *e);
void stop_target(void); /* kill and reap the target, if one runs */
/* Take the running server pid (a Node germline's copy's other half) as
 * the target, its socket on fd 5 (*tfd). 0, or -1: not a pid, or fd 5 not
 * a socket. */
int adopt_target(const char *pid, int *tfd);
extern bool adopted; /* the target was adopted: no relay */
/* "; stderr: TAIL" (the target's last stderr bytes, sanitised), or "" when
 * it wrote none (malloc'd). */
char *stderr_note(void);
/* Serve the relay and read the target until a complete line (want_line)
 * or EOF. 0, or -1 with e. */
int pump(struct io *io, bool want_line, struct end *e);

/* ---- the release's protocol (protocol.c) ---- */

extern bool mcp_up; /* initialize done on the running server */
/* The server's notifications/message of the running call, bounded (at
 * most GL_MSG_LOG_MAX, each at most GL_MSG_LOG_ENTRY_MAX bytes as JSON;
 * one more entry says how many were dropped): an array for the result
 * message's "log" (owned; jv_array() after it was taken). */
jv mcp_take_log(void);
/* The server's notifications/progress of the call (docs/mcp.md), taken. */
jv mcp_take_progress(void);
/* One MCP call (args consumed) into e. */
void run_mcp(struct io *io, const char *function, jv args, struct end *e);
/* One "germline"-protocol call (call consumed) into e. */
void run_germline(struct io *io, jv call, struct end *e);

#endif
