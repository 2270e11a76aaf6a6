/* relay_parse.h — the parsing half of gl-exec-host's HTTP relay (relay.c):
 * cutting a request head into its request line and headers, and decoding
 * a chunked body. No I/O: relay.c reads the bytes (bounded, with a
 * deadline) and hands them here; fuzz/http.c feeds them directly. What
 * the target sends is hostile: every function is bounded by its input. */
#ifndef GL_EXEC_RELAY_PARSE_H
#define GL_EXEC_RELAY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jv.h>

#include "core/util.h"

#define HEAD_MAX (64u << 10)     /* bytes of one HTTP request head */
#define BODY_MAX (16u << 20)     /* bytes of one HTTP request body */

/* One request as the target sent it: parsed from its head (the buffer's
 * request line and header lines, cut in place), its body read in full. */
struct relay_req {
	struct gl_buf buf; /* the bytes read: the head (cut), then what followed */
	size_t head_len;   /* bytes of the head, with its blank line */
	const char *method, *target, *host;
	jv headers; /* [[name, value]…] without hop-by-hop headers (owned) */
	long long clen;
	bool chunked;
	struct gl_buf body;
};

void relay_req_free(struct relay_req *q);

/* Is the header name k[0..n) hop-by-hop (never forwarded either way)? */
bool hop_header(const char *k, size_t n);

/* Cut q->buf, whose head ends at eoh (the "\r\n\r\n" in it), into the
 * request line and its header lines: q->method, q->target, q->host,
 * q->clen, q->chunked, q->headers (appended to) and q->head_len. 0, or -1
 * when the request line is not "METHOD TARGET HTTP/1.x". */
int relay_head_cut(struct relay_req *q, char *eoh);

/* Decode a complete chunked body at p[0..n) into out (replacing its
 * contents); its length, or -1 incomplete, -2 bad. */
ssize_t dechunk(const char *p, size_t n, struct gl_buf *out);

#endif
