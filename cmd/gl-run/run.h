/* run.h — what cmd/gl-run/main.c offers the MCP front end (serve_mcp.c).
 * The session (policy, releases, resident germlines, mode) lives in
 * main.c; serve_mcp.c only turns MCP messages into envelopes and records
 * into MCP answers (docs/mcp.md). */
#ifndef GL_RUN_RUN_H
#define GL_RUN_RUN_H

#include <jv.h>

#include "core/util.h"

struct session;

/* One call envelope line -> its result record (owned), exactly as the
 * JSON Lines front end runs it (plan recomputed, damping, germline). */
jv gl_run_line(struct session *s, const struct gl_buf *line);

/* Between records (gl-run --pool): fill each resident germline's pool,
 * after the record is written, so that forking is off the call's path. */
void gl_run_idle(struct session *s);

/* The MCP tools/list result of a release ({"tools":[…]}, owned, from the
 * signed manifest; for an mcp-stdio release after its discovery check),
 * or jv_invalid() with *code and *detail (malloc'd). */
jv gl_run_tools(struct session *s, const char *release, char **code, char **detail);

/* c(name) under the session's policy, as a JSON array (owned). */
jv gl_run_clearance(struct session *s, const char *name);

/* The broker's cancellation control (lib/core/cancel.h; NULL: none). */
struct gl_cancel;
void gl_run_set_cancel(struct session *s, struct gl_cancel *c);

/* gl-run --serve-mcp: an MCP server on stdin/stdout for one release
 * until stdin ends (serve_mcp.c). 0, or 1 when some call was refused. */
int gl_serve_mcp(struct session *s, const char *release, const char *consumer);

#endif
