/* stream_discovery.c — the MCP discovery copy's stream connections
 * (broker_impl.h gl_stream_discovery_open; docs/streams.md "The discovery
 * copy"): a server may connect to its database as it starts, before it
 * lists its tools. The discovery copy holds no data, so its connections to
 * the release's public stream destinations are delivered (lib/broker/
 * stream.c's STREAM_DELIVER, nothing recorded or compared); what it reads
 * there may reach every client through its lists, so no other destination
 * is reached. */
#include "broker/broker_impl.h"

#include <string.h>

#include "core/util.h"
#include "json/json.h"
#include "plan/policy.h"
#include "release/manifest.h"

struct gl_stream_discovery {
	struct run r;
	struct gl_call c;
};

struct gl_stream_discovery *gl_stream_discovery_open(const struct gl_broker *b,
						     const struct gl_config *cfg, jv manifest,
						     int64_t deadline)
{
	struct gl_stream_discovery *d = gl_xcalloc(1, sizeof *d);
	jv fns = gl_json_get(manifest, "functions");
	size_t cap = 0;
	jv_object_foreach(fns, k, fn)
	{
		jv dests = gl_json_get(fn, "destinations");
		if (jv_get_kind(dests) == JV_KIND_ARRAY)
			jv_array_foreach(dests, i, v)
			{
				(void)i;
				/* the manifest holds the string: it outlives the discovery */
				const char *s = jv_string_value(v);
				bool have = false;
				for (size_t j = 0; j < d->c.ndest; j++)
					have |= !strcmp(d->c.dest[j], s);
				/* a public stream destination only: what it sends may
				 * reach anyone the discovery's lists reach (the test
				 * build's GL_TEST_DISCOVERY_STREAMS_ANY: any) */
				if (b && !have && gl_dest_port(s) &&
				    (gl_policy_clearance(b->pol, s)->n == 0 ||
				     GL_TEST_SWITCH("GL_TEST_DISCOVERY_STREAMS_ANY"))) {
					if (d->c.ndest == cap) {
						cap = cap ? 2 * cap : 4;
						d->c.dest = gl_xrealloc(d->c.dest, cap * sizeof *d->c.dest);
					}
					d->c.dest[d->c.ndest++] = s;
				}
				jv_free(v);
			}
		jv_free(dests);
		jv_free(k);
		jv_free(fn);
	}
	jv_free(fns);
	static const struct gl_broker none = {0};
	gl_broker_run_init(&d->r, &gl_mode_allowlist, b ? b : &none, &d->c, NULL, 0);
	d->r.deadline = deadline;
	d->r.config = cfg; /* a public destination's password (stream_auth.c) */
	return d;
}

enum gl_msg_status gl_stream_discovery_read(struct gl_stream_discovery *d, int sock,
					    int64_t deadline, struct gl_buf *in)
{
	for (;;) {
		enum gl_msg_status st = gl_msg_read(sock, deadline, in);
		if (st != GL_MSG_OK)
			return st;
		struct gl_msg m;
		autofail struct gl_fail f = {0};
		bool stream = gl_msg_parse(&m, in->data, in->len, &f) == 0 && m.type == GL_MSG_STREAM;
		enum outcome o = COPY_RESULT;
		jv reply = stream ? gl_stream_effect(&d->r, &m, &o, STREAM_DELIVER) : jv_invalid();
		gl_msg_free(&m);
		if (!stream)
			return GL_MSG_OK; /* the caller parses it again */
		if (!jv_is_valid(reply)) /* past the stream bounds: the copy is done */
			return GL_MSG_IO;
		st = gl_msg_send(sock, deadline, reply);
		jv_free(reply);
		if (st != GL_MSG_OK)
			return st;
	}
}

const char *const *gl_stream_discovery_hosts(const struct gl_stream_discovery *d, size_t *n)
{
	*n = d->c.ndest;
	return d->c.dest;
}

void gl_stream_discovery_close(struct gl_stream_discovery *d)
{
	if (!d)
		return;
	gl_broker_run_free(&d->r, NULL);
	free(d->c.dest);
	free(d);
}
