/* serve_mcp_impl.h — what the files of gl-run --serve-mcp share
 * (serve_mcp.c: the loop and the answers; serve_mcp_call.c: a call's
 * envelope, resources and prompts). Nothing else includes it. */
#ifndef GL_RUN_SERVE_MCP_IMPL_H
#define GL_RUN_SERVE_MCP_IMPL_H

#include <jv.h>
#include <stdbool.h>

#include "core/fail.h"
#include "core/util.h"
#include "session/jobs.h"
#include "session/mcp_serve.h"
#include "session/session.h"

struct serve {
	struct gl_session *s;
	const char *release, *consumer;
	const char *rev; /* the negotiated revision (lib/broker/mcp_revision.h); NULL: none yet */
	int min_level;   /* logging/setLevel's rank (send_log); 0: every level */
	struct gl_mcp_io *io;
	struct gl_jobs *J; /* --jobs > 1: calls at once (lib/session/jobs.h); else NULL */
	jv tools; /* the tools/list result, once it succeeded (the schemas) */
	unsigned long calls;
	char call_id[32]; /* the last envelope's id ("mcp-N"), "" when none was made */
	int refused;
};

/* Write m (consumed); an answer above the line cap becomes an internal error. */
void serve_send(struct serve *v, jv m);
/* "tools/call NAME: WHAT: CODE[: DETAIL]" on stderr, sanitised and cut. */
void serve_warn_call(const char *tool, const char *what, const char *code, const char *detail);
/* The tool list (borrowed, cached after its first success; the discovery
 * runs on the first ask), or jv_invalid() with *f. */
jv serve_tools(struct serve *v, struct gl_fail *f);

/* The function a call request names (params borrowed): a tools/call's
 * tool, or the method itself (resources/read, prompts/get); or NULL. */
const char *serve_fn_of(const char *method, jv params);
/* A call's checks, in the main process and at once (bad params, the
 * tool's inputSchema), then its envelope: 0 with *line, or -1 with an
 * error (code, message, data). method: tools/call, resources/read or
 * prompts/get. */
int serve_call_envelope(struct serve *v, const char *method, jv params, struct gl_buf *line,
			int *code, char **message, jv *data);
/* Is method a call: tools/call, or a resources/read, prompts/get or
 * completion/complete the release declares? */
bool serve_calls(struct serve *v, const char *method);
/* resources/list, resources/templates/list, prompts/list: true with *res. */
bool serve_lists(struct serve *v, const char *method, jv *res);

#endif
