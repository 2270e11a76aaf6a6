/* http.c — the HTTP requests a release's target sends gl-exec-host's
 * relay (hosts/exec/relay_parse.c): the input is what arrived on the
 * connection. As relay.c does after its bounded reads: the head up to the
 * first blank line (at most HEAD_MAX bytes) is cut into the request line
 * and headers (relay_head_cut); what follows is decoded as a chunked body
 * when the request says so (dechunk), always from a NUL-terminated
 * buffer, as relay.c's reads leave it. The whole input is also decoded as
 * a chunked body on its own, so the decoder is fuzzed without a head. */
#include "fuzz.h"

#include "relay_parse.h"

static void body(const char *p, size_t n)
{
	autobuf struct gl_buf raw = {0}, out = {0};
	gl_buf_add(&raw, p, n);
	dechunk(raw.data, raw.len, &out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct relay_req q = {.headers = jv_array()};
	gl_buf_add(&q.buf, data, size);
	char *eoh = q.buf.len >= 4 ? memmem(q.buf.data, q.buf.len, "\r\n\r\n", 4) : NULL;
	if (eoh && (size_t)(eoh - q.buf.data) <= HEAD_MAX && relay_head_cut(&q, eoh) == 0 &&
	    q.chunked)
		body(q.buf.data + q.head_len, q.buf.len - q.head_len);
	relay_req_free(&q);
	body((const char *)data, size);
	return 0;
}
