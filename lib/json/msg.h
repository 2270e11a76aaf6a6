/* msg.h — the copy protocol: framing and strict parsing of the messages a
 * copy sends to the broker (SPEC §10; docs/design/run.md "Copy protocol";
 * paper §VI "Broker" and Table III "Messages: three types").
 *
 * A message is a 4-byte big-endian length followed by that many bytes of
 * JSON, at most GL_MSG_MAX. Everything a copy sends is hostile: every read
 * is bounded in size and by an absolute deadline on CLOCK_MONOTONIC (so
 * neither a slow sender nor a stream of messages extends the copy's
 * budget), retried on EINTR, and each message is parsed strictly: a field
 * the type does not define, or one of the wrong kind, refuses the message.
 *
 * copy -> broker:
 *   {"type":"effect","method":M,"url":U,"headers":[[name,value]…],"body":B64}
 *   {"type":"stream","port":P,"conn":N,"data":B64,"close":B?} (an exec
 *   copy's TCP connection to a host:port destination; docs/streams.md)
 *   {"type":"state_put","key":K,"value":V}
 *   {"type":"result","value":V}  or  {"type":"result","error":"text"}
 *   (an error may say which bound the copy reached: "limit":"disk", the
 *   consumers' error then; SPEC §6)
 * broker -> copy: "call" (once, first), "reply", "ok", or "refused" for a
 * state_put whose value is deeper than GL_JSON_VALUE_DEPTH_MAX (built by
 * broker.c; lib/json/json.h). */
#ifndef GL_MSG_H
#define GL_MSG_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fail.h"
#include "core/util.h"

#define GL_MSG_MAX (64u << 20)       /* bytes of one message's JSON */
#define GL_MSG_URL_MAX 8192          /* bytes of an effect's URL */
#define GL_MSG_HEADERS_MAX 128       /* headers of one request */
#define GL_MSG_HEADER_MAX 8192       /* bytes of one header value */
#define GL_MSG_METHOD_MAX 16
#define GL_MSG_KEY_MAX 256           /* bytes of a state key */
#define GL_MSG_ERROR_MAX 4096        /* bytes of a result error kept */
/* Weighted JSON nodes of one message (lib/json/json.h "node limit"): counted
 * before any jv is built; a message above it is a protocol violation
 * (the copy is ended, its consumers get "protocol"). 2^21: a value of 2
 * million numbers or strings, or 131,072 arrays or objects; the broker's
 * peak for the largest such message is 65–116 MB, measured, documented as
 * under 256 MiB (docs/design/run.md "The broker's bound"), against about
 * 9 GB for 64 MiB of "{}," unbounded. */
#define GL_MSG_NODES_MAX (1u << 21)

/* The broker's clock: CLOCK_MONOTONIC in nanoseconds. */
int64_t gl_mono_ns(void);

enum gl_msg_status {
	GL_MSG_OK,
	GL_MSG_EOF,      /* the peer closed before a message began */
	GL_MSG_DEADLINE, /* the deadline passed first */
	GL_MSG_TOO_BIG,  /* a length prefix above GL_MSG_MAX */
	GL_MSG_SHORT,    /* the peer closed inside a message */
	GL_MSG_IO,       /* a socket error (errno) */
};
const char *gl_msg_status_name(enum gl_msg_status s);

/* Read one framed message from fd (which should be non-blocking; a blocking
 * descriptor works too, but then the deadline only bounds the waits poll
 * sees) until the absolute deadline (gl_mono_ns() scale). On GL_MSG_OK
 * *buf holds the JSON bytes (NUL-terminated, length in buf->len; the
 * buffer is reset first). The buffer grows only as bytes arrive, so a
 * large length prefix alone costs nothing. */
enum gl_msg_status gl_msg_read(int fd, int64_t deadline, struct gl_buf *buf);

/* GL_TESTING with GL_TEST_USAGE=1: at exit the process writes its peak
 * RSS (VmHWM), its CPU time and its CPU time since the last message it
 * read to stderr ("gl-usage: vmhwm_kb=N cpu_ms=N
 * cpu_after_last_message_ms=N"); gl-run calls this once at start. A no-op
 * otherwise. */
void gl_msg_test_usage(void);

/* Write one framed message holding len bytes of JSON, before the deadline.
 * Never raises SIGPIPE. GL_MSG_OK, GL_MSG_DEADLINE, GL_MSG_TOO_BIG or
 * GL_MSG_IO. */
enum gl_msg_status gl_msg_write(int fd, int64_t deadline, const char *json, size_t len);

/* The same for a value: compact JSON of v (borrowed). */
enum gl_msg_status gl_msg_send(int fd, int64_t deadline, jv v);

enum gl_msg_type { GL_MSG_EFFECT, GL_MSG_STATE_PUT, GL_MSG_RESULT, GL_MSG_STREAM };

/* A stream message: at most this many bytes of data, on connections
 * numbered 1..GL_MSG_STREAM_CONNS_MAX by the copy. */
#define GL_MSG_STREAM_DATA_MAX (1u << 20)
#define GL_MSG_STREAM_CONNS_MAX 64

struct gl_msg_header {
	const char *name, *value; /* point into gl_msg.doc */
};

/* A result's "log": the MCP server's notifications/message of the call
 * (docs/mcp.md "Log messages"), at most this many, each at most this many
 * bytes as JSON: {"level","logger"?,"data"}. */
#define GL_MSG_LOG_MAX 64
#define GL_MSG_LOG_ENTRY_MAX 8192

/* The rank of MCP logging level name (RFC 5424's: "debug" 0 to
 * "emergency" 7), or -1 for anything else: what a result's log may carry,
 * and what logging/setLevel names (cmd/gl-run/serve_mcp.c). */
int gl_msg_log_level(const char *name);

/* A result's "progress": the MCP server's notifications/progress of the
 * call, for the token its host gave the server (docs/mcp.md "Cancellation
 * and progress"), the last this many: {"progress","total"?,"message"?},
 * numbers finite, a message at most GL_MSG_PROGRESS_TEXT_MAX bytes. */
#define GL_MSG_PROGRESS_MAX 64
#define GL_MSG_PROGRESS_TEXT_MAX 1024

/* One parsed copy -> broker message. Strings point into doc. */
struct gl_msg {
	enum gl_msg_type type;
	jv doc; /* owned: the whole message */
	/* effect */
	const char *method, *url;
	struct gl_msg_header *header; /* owned array */
	size_t nheader;
	unsigned char *body; /* owned, decoded from base64 (a stream's data too) */
	size_t body_len;
	/* stream: the destination's port, the copy's connection number, and
	 * whether the target closed it */
	unsigned port, conn;
	bool close;
	/* state_put */
	const char *key;
	/* state_put and result: the value (owned), jv_invalid() when absent */
	jv value;
	/* result: the tool's error text, or NULL */
	const char *error;
	/* result with an error: "disk" (a bound the copy reached), or NULL */
	const char *limit;
	/* result: the server's log messages (owned, checked), jv_invalid() when absent */
	jv log;
	/* result: the server's progress notifications (owned, checked), or jv_invalid() */
	jv progress;
};

/* Parse and validate one message of len bytes. 0, or -1 with f (code
 * protocol: SPEC §6, a copy that broke the protocol) whose detail says
 * exactly what is wrong, e.g. "state_put: unknown field \"horizon\"".
 * Either way release m with gl_msg_free. */
int gl_msg_parse(struct gl_msg *m, const char *buf, size_t len, struct gl_fail *f);
/* gl_msg_parse's part for a stream message (msg_stream.c). */
int gl_msg_parse_stream(struct gl_msg *m, struct gl_fail *f);
/* Write n bytes of a stream to the socket fd before deadline (gl_mono_ns
 * scale), whether it blocks or not; never raises SIGPIPE. Whether all went. */
bool gl_stream_send_all(int fd, const unsigned char *p, size_t n, int64_t deadline);
void gl_msg_free(struct gl_msg *m);

/* Strict standard base64 (RFC 4648 §4, padded) decode; NULL if invalid.
 * *out_len gets the decoded length. The caller frees the result. */
unsigned char *gl_b64_decode(const char *s, size_t len, size_t *out_len);
/* Standard padded base64 of n bytes, appended to b as plain characters. */
void gl_b64_encode(struct gl_buf *b, const unsigned char *p, size_t n);

#endif
