/* rpc.c — newline-delimited JSON-RPC 2.0 (lib/json/jsonrpc.c), the MCP
 * stdio transport both an agent host and a server speak to germline: the
 * input is the byte stream, read by gl_rpc_read from a pipe that holds it
 * (then EOF) until the end, once with the default line cap and once with
 * a small one (a line above it is skipped to its end: GL_RPC_TOO_LONG). */
#include "fuzz.h"

#include "json/jsonrpc.h"
#include "json/msg.h"

static struct gl_rpc_reader reader; /* 64 KiB: not on the stack */

static void read_all(const uint8_t *data, size_t size, size_t cap)
{
	int fd = fuzz_pipe(data, size);
	if (fd < 0)
		return;
	gl_rpc_reader_init(&reader, fd);
	int64_t deadline = gl_mono_ns() + 5 * (int64_t)1000000000;
	for (int i = 0; i < 4096; i++) {
		jv msg = jv_invalid();
		enum gl_rpc_kind kind;
		autofail struct gl_fail f = {0};
		enum gl_rpc_status st = gl_rpc_read(&reader, deadline, cap, &msg, &kind, &f);
		jv_free(msg);
		if (st == GL_RPC_EOF || st == GL_RPC_DEADLINE || st == GL_RPC_IO)
			break;
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_all(data, size, 0);
	read_all(data, size, 64);
	return 0;
}
