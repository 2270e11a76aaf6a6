/* mcp_revision.h — the MCP revisions gl-run --serve-mcp speaks, and what
 * differs between them in what it sends (SPEC §11: "every revision the
 * official SDK speaks: 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25,
 * negotiated as the specification says"; docs/mcp.md "Revisions").
 *
 * Negotiation (MCP lifecycle, "Version Negotiation"): the client's
 * revision when it is one of ours, else our latest, which the client may
 * refuse. A session at an older revision gets only the fields that
 * revision defines: before 2025-06-18 a tool has no title or outputSchema
 * and a result no structuredContent; in 2024-11-05 a tool has no
 * annotations either. */
#ifndef GL_MCP_REVISION_H
#define GL_MCP_REVISION_H

#include <jv.h>

/* Our revisions, the latest first, NULL-terminated. */
extern const char *const gl_mcp_revisions[];

/* The revision to answer a client asking for want (NULL: ours, the latest). */
const char *gl_mcp_negotiate(const char *want);

/* The initialize result for revision rev: our capabilities (tools), and
 * what the server said of itself (server, consumed: gl_session_server;
 * jv_null() for none) as serverInfo and instructions, germline's own
 * beside them in _meta.germline with the label they carry (public: a
 * discovery copy holds no data). Without the server's, germline's own
 * take their place. */
jv gl_mcp_initialize(const char *rev, jv server);

/* A tools/list result (consumed) as revision rev defines it. */
jv gl_mcp_list_for(jv list, const char *rev);

/* A CallToolResult (consumed) as revision rev defines it. */
jv gl_mcp_result_for(jv result, const char *rev);

#endif
