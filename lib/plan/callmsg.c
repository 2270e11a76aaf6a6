/* callmsg.c — the call message of Algorithm 1 line 10; see callmsg.h. */
#include "plan/callmsg.h"

#include <sodium.h>
#include <string.h>
#include <time.h>

#include "json/json.h"

void gl_twin_new(struct gl_twin *t)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	t->sec = (int64_t)now.tv_sec;
	t->usec = (int64_t)(now.tv_nsec / 1000);
	unsigned char seed[32];
	randombytes_buf(seed, sizeof seed);
	gl_hex(seed, sizeof seed, t->seed);
}

double gl_twin_time(const struct gl_twin *t)
{
	return (double)t->sec + (double)t->usec / 1e6;
}

void gl_callmsg(struct gl_buf *out, const char *function, jv args,
		const struct gl_callmsg_item *item, size_t nitem, jv state,
		const struct gl_twin *twin)
{
	gl_buf_adds(out, "{\"args\":");
	gl_json_dump(out, args);
	gl_buf_adds(out, ",\"function\":");
	gl_json_dump_string(out, function, strlen(function));
	gl_buf_adds(out, ",\"items\":[");
	for (size_t x = 0; x < nitem; x++) {
		gl_buf_adds(out, x ? ",{\"data\":\"" : "{\"data\":\"");
		if (item[x].b64)
			gl_buf_adds(out, item[x].b64);
		gl_buf_adds(out, "\",\"label\":");
		gl_json_dump(out, item[x].label);
		gl_buf_adds(out, ",\"name\":");
		gl_json_dump_string(out, item[x].name, strlen(item[x].name));
		/* An item outside the view is marked, so the host can refuse to
		 * open its file (docs/mcp.md "File items") rather than serve an
		 * empty one. */
		gl_buf_adds(out, item[x].b64 ? "}" : ",\"view\":false}");
	}
	gl_buf_adds(out, "],\"state\":");
	gl_json_dump(out, state);
	if (twin) {
		jv tw = JV_OBJECT(jv_string("seed"), jv_string(twin->seed), jv_string("time"),
				  jv_number(gl_twin_time(twin)));
		gl_buf_adds(out, ",\"twin\":");
		gl_json_dump(out, tw);
		jv_free(tw);
	}
	gl_buf_adds(out, ",\"type\":\"call\"}");
}
