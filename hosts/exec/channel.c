/* channel.c — gl-exec-host's broker channel, fd 3: length-prefixed JSON
 * (SPEC §10; docs/design/run.md: call, effect/reply, state_put/ok,
 * result). A broker that is gone or breaks the protocol ends the host:
 * there is no one left to tell. */
#include "host_impl.h"

#include <stdlib.h>
#include <unistd.h>

#include "json/json.h"
#include "json/msg.h"

static int64_t forever(void) { return gl_mono_ns() + (int64_t)3600 * 1000000000; }

void send_msg(jv m) /* consumes m */
{
	if (gl_msg_send(CHAN, forever(), m) != GL_MSG_OK)
		_exit(3); /* the broker is gone or killed us: nothing to say */
	jv_free(m);
}

jv try_recv_msg(void)
{
	struct gl_buf b = {0};
	enum gl_msg_status st = gl_msg_read(CHAN, forever(), &b);
	jv v = st == GL_MSG_OK ? gl_json_parse(b.data, b.len) : jv_invalid();
	free(b.data);
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return jv_invalid();
	}
	return v;
}

jv recv_msg(void)
{
	jv v = try_recv_msg();
	if (!jv_is_valid(v))
		_exit(3);
	return v;
}
