/* serve_mcp.h — gl-run --serve-mcp (serve_mcp.c): an MCP server on
 * stdin/stdout for one release until stdin ends, on the session of
 * lib/session/session.h (docs/mcp.md). */
#ifndef GL_RUN_SERVE_MCP_H
#define GL_RUN_SERVE_MCP_H

#include "session/session.h"

/* 0, or 1 when some call was refused. jobs: calls at once (gl-run --jobs;
 * 1: one after another). */
int gl_serve_mcp(struct gl_session *s, const char *release, const char *consumer,
		 unsigned jobs);

#endif
