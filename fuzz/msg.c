/* msg.c — what a copy sends the broker (lib/json/msg.c): the input as one
 * message's JSON (gl_msg_parse; a value also as a discovery copy's, whose
 * resources and prompts lists lib/broker/mcp_lists.c bounds), then the
 * input as the byte stream of the channel, framed messages read by
 * gl_msg_read from a pipe that holds it (then EOF) and each parsed, until
 * the stream ends or is refused. A
 * frame's length prefix is the input's: a large one with few bytes behind
 * it must cost nothing (msg.h: the buffer grows only as bytes arrive). */
#include "fuzz.h"

#include "broker/mcp_lists.h"
#include "json/msg.h"

/* A discovery copy's value (borrowed): its resources and prompts lists,
 * typed and bounded, then answered; the shape check of each method's
 * result, and whether the lists serve it (lib/broker/mcp_lists.c). */
static void discovery_lists(jv value)
{
	static const char manifest_text[] =
	    "{\"functions\":{\"resources/read\":{},\"prompts/get\":{},"
	    "\"completion/complete\":{}}}";
	jv manifest = gl_json_parse(manifest_text, sizeof manifest_text - 1);
	jv server = gl_mcp_lists_add(jv_object(), value, manifest);
	static const char *const methods[] = {"resources/list", "resources/templates/list",
					      "prompts/list", "tools/list"};
	for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
		jv_free(gl_mcp_list_answer(server, methods[i]));
	static const char *const fns[] = {"resources/read", "prompts/get", "completion/complete"};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
		(void)(gl_mcp_result_shape(fns[i], value) + gl_mcp_served(server, fns[i]));
	jv_free(server);
	jv_free(manifest);
}

/* A copy's value as the broker keeps it (a record, a slot) must read back
 * as itself: the strict reader is the one that reads it next. */
static void parse(const char *buf, size_t len)
{
	struct gl_msg m;
	autofail struct gl_fail f = {0};
	if (gl_msg_parse(&m, buf, len, &f) == 0 && jv_is_valid(m.value)) {
		fuzz_roundtrip(m.value, gl_json_parse, false, "a copy's value");
		discovery_lists(m.value);
	}
	gl_msg_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse((const char *)data, size);
	int fd = fuzz_pipe(data, size);
	if (fd < 0)
		return 0;
	int64_t deadline = gl_mono_ns() + 5 * (int64_t)1000000000;
	autobuf struct gl_buf in = {0};
	for (int i = 0; i < 64 && gl_msg_read(fd, deadline, &in) == GL_MSG_OK; i++)
		parse(in.data, in.len);
	close(fd);
	return 0;
}
