/* jsonrpc.h — newline-delimited JSON-RPC 2.0 over a byte stream: the MCP
 * stdio transport (SPEC §11; MCP revision 2025-06-18, "Transports: stdio":
 * one message per line, UTF-8, no embedded newlines; no batches since that
 * revision).
 *
 * Used on both sides of every MCP stream germline touches: gl-run
 * --serve-mcp reading an agent host, and the exec copy's shim reading an
 * unmodified server. Either peer may be hostile, so:
 *   - every read is bounded (a line above `cap` bytes is skipped to its end
 *     and reported, never held) and, when a deadline is given, bounded in
 *     time on CLOCK_MONOTONIC (gl_mono_ns() of msg.h), retried on EINTR;
 *   - every line is parsed by gl_json_parse (strict RFC 8259: no duplicate
 *     keys, valid UTF-8, bounded depth) and then validated as one JSON-RPC
 *     2.0 message of one of four kinds; anything else is GL_RPC_PARSE or
 *     GL_RPC_INVALID with a message, and the stream goes on;
 *   - writes never raise SIGPIPE on a socket and are bounded by a deadline.
 *
 * jv ownership: "consumes" takes the reference, "borrows" leaves it. */
#ifndef GL_JSONRPC_H
#define GL_JSONRPC_H

#include <jv.h>
#include <stdint.h>

#include "core/fail.h"
#include "core/util.h"

/* Default cap of one message line. */
#define GL_RPC_LINE_MAX (8u << 20)
/* Bytes of a method name accepted. */
#define GL_RPC_METHOD_MAX 256

/* JSON-RPC 2.0 error codes (§5.1 of the JSON-RPC 2.0 specification). */
enum {
	GL_RPC_PARSE_ERROR = -32700,
	GL_RPC_INVALID_REQUEST = -32600,
	GL_RPC_METHOD_NOT_FOUND = -32601,
	GL_RPC_INVALID_PARAMS = -32602,
	GL_RPC_INTERNAL_ERROR = -32603,
};

enum gl_rpc_status {
	GL_RPC_OK,
	GL_RPC_EOF,      /* the peer closed (a partial last line is dropped) */
	GL_RPC_DEADLINE, /* the deadline passed first */
	GL_RPC_TOO_LONG, /* a line above cap was skipped; the stream goes on */
	GL_RPC_PARSE,    /* a line that is not JSON (answer -32700, id null) */
	GL_RPC_INVALID,  /* JSON, but not a JSON-RPC 2.0 message (-32600) */
	GL_RPC_IO,       /* a read error (errno) */
};
const char *gl_rpc_status_name(enum gl_rpc_status s);

/* What a valid message is. */
enum gl_rpc_kind {
	GL_RPC_REQUEST,      /* jsonrpc, id (string or integer), method[, params] */
	GL_RPC_NOTIFICATION, /* jsonrpc, method[, params]; no id */
	GL_RPC_RESULT,       /* jsonrpc, id, result */
	GL_RPC_ERROR,        /* jsonrpc, id (or null), error {code, message[, data]} */
};

/* A buffered reader over a descriptor (blocking or not). */
struct gl_rpc_reader {
	int fd;
	size_t pos, end;
	int eof;
	char buf[65536];
};
void gl_rpc_reader_init(struct gl_rpc_reader *r, int fd);

/* One message: the next non-blank line of at most cap bytes (0: the
 * default GL_RPC_LINE_MAX), before the absolute deadline (gl_mono_ns()
 * scale; -1 waits for ever). A trailing '\r' is dropped. On GL_RPC_OK,
 * *msg is the owned, validated message and *kind says which of the four it
 * is. On GL_RPC_PARSE / GL_RPC_INVALID / GL_RPC_TOO_LONG, f (bad_json /
 * bad_record / too_long, SPEC §2) says what is wrong, the line is consumed and the
 * next call reads the next one; on GL_RPC_INVALID *msg holds the parsed
 * value, so the caller can echo a usable id (else *msg is jv_invalid()). */
enum gl_rpc_status gl_rpc_read(struct gl_rpc_reader *r, int64_t deadline, size_t cap, jv *msg,
			       enum gl_rpc_kind *kind, struct gl_fail *f);

/* Is v (borrowed) one valid JSON-RPC 2.0 message? 0 with *kind, or -1
 * with f (bad_record). Checks: an object; "jsonrpc":"2.0"; no member
 * outside the kind's; id a string or an integer within ±(2^53−1) (MCP
 * forbids null ids on requests; an error response may carry null);
 * method a non-empty string of at most GL_RPC_METHOD_MAX bytes; params an
 * object or array; exactly one of result / error; error.code an integer,
 * error.message a string. */
int gl_rpc_validate(jv v, enum gl_rpc_kind *kind, struct gl_fail *f);

/* Builders. Each consumes its jv arguments and returns an owned message.
 * params / data may be jv_null() to leave the member out. */
jv gl_rpc_request(jv id, const char *method, jv params);
jv gl_rpc_notification(const char *method, jv params);
jv gl_rpc_result(jv id, jv result);
jv gl_rpc_error(jv id, int code, const char *message, jv data);

/* Write msg (borrowed) as one compact line plus '\n' to fd before the
 * deadline (-1: no deadline). 0, or -1 with errno (ETIMEDOUT for the
 * deadline, EMSGSIZE above GL_RPC_LINE_MAX). Never raises SIGPIPE on a
 * socket; on a pipe the caller should ignore SIGPIPE. */
int gl_rpc_write(int fd, int64_t deadline, jv msg);

#endif
