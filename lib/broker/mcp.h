/* mcp.h — MCP releases at run time, on the broker's side (SPEC §11;
 * docs/mcp.md): the discovery check of an mcp-stdio release, and the
 * mapping of gl-run's result records to MCP tool results and errors
 * (gl-run --serve-mcp).
 *
 * Discovery (issue 8 item 4; seed 002 "Discovery changed after signing.
 * The publisher-signed manifest refuses the inconsistent tool list."):
 * once per germline, before any data exists, the broker forks one copy
 * (checked G1–G3 and confined like every copy) and sends it a call of the
 * reserved function "tools/list" (not a valid tool name) with no items, no
 * args but the lists it must also give (lib/broker/mcp_lists.h) and an
 * empty slot; the copy's host answers with the server's own tools/list.
 * The names must equal the manifest's functions (but resources/read,
 * prompts/get and completion/complete, which are not tools), else the
 * release is refused. The copy may send nothing else (no request, no state
 * write). The host half runs with the server's code and is not trusted:
 * the check catches a server whose discovery drifted from what was signed
 * (dynamic registration, a changed dependency); what a call may run is
 * still only what the manifest declares (gl_call_read). */
#ifndef GL_MCP_H
#define GL_MCP_H

#include <jv.h>
#include <stdbool.h>

#include "core/fail.h"
#include "runtime/germline.h"

#define GL_MCP_DISCOVERY_FN "tools/list"
#define GL_MCP_TOOLS_MAX 1024           /* tools one server may list */
#define GL_ERR_DISCOVERY "discovery_changed"
#define GL_MCP_INSTRUCTIONS_MAX 16384   /* bytes of a server's instructions passed on */
#define GL_MCP_INFO_TEXT_MAX 256        /* bytes of a serverInfo name, version, title */

/* Run the discovery check of the manifest (borrowed) on germline g, within
 * deadline_s seconds. GL_E_OK: *tools (owned) is the server's tools array,
 * each element an object with a string "name". Otherwise f says why:
 * GL_E_DISCOVERY_CHANGED (the list differs: f names the difference, SPEC
 * §11), GL_E_GERMLINE (the fork failed: *germline_lost set) or
 * GL_E_GERMLINE_CHECK (G1–G3 refused the germline, or the discovery copy
 * gave no answer). server (NULL: not wanted) gets, with GL_E_OK, what of
 * the server's own initialize answer gl-run passes on (owned):
 * {"serverInfo":{"name","version"[,"title"]}, "instructions"}, each field
 * only when the discovery copy reported it as a string within its bound
 * (GL_MCP_INFO_TEXT_MAX, GL_MCP_INSTRUCTIONS_MAX; serverInfo only with
 * both name and version), else absent: the discovery copy holds no data,
 * so what it reports is public, but it is release code, so it is bounded
 * and typed. Its connections to the release's public stream destinations
 * are delivered under b's policy (a server that connects to its database
 * as it starts, docs/streams.md "The discovery copy"); b NULL (gl-replay):
 * none is. */
struct gl_broker;
enum gl_code gl_mcp_discover(const struct gl_broker *b, struct gl_germline *g, jv manifest,
			     double deadline_s, jv *tools, jv *server, bool *germline_lost,
			     struct gl_fail *f);

/* The MCP tools/list result for a release: one tool per function of the
 * signed manifest (borrowed) that is a tool (not resources/read,
 * prompts/get or completion/complete), in name order, each with the description,
 * title, inputSchema, outputSchema and annotations the server's discovery
 * gave for that name (tools, borrowed; may be jv_null()), or an input
 * schema of {"type":"object"} when it gave none. Returns {"tools":[…]}. */
jv gl_mcp_tools_list(jv manifest, jv tools);

/* Map one gl-run result record (borrowed) for consumer, cleared for
 * clearance (borrowed array of tags), to the answer of an MCP tools/call
 * (SPEC §6, §11; docs/gl-run.md "Field labels"): 0 with *result (owned) —
 * the tool's CallToolResult (a value that is not one becomes a text
 * content) with _meta.germline = {label, release, copies, delivered,
 * denied, triggers, labels}, holding only the fields and entries whose
 * labels the clearance covers — or -1 with *code, *message and *data
 * (owned) for an MCP error whose data carries the SPEC §2 error code:
 * {"error","detail","label"}, or {"error":"not_cleared"} with a fixed
 * text when the clearance does not cover the result's (or a refusal's)
 * label. *log (owned) gets, where the clearance covers the consumer's
 * result, the server's log messages of the call as the params of MCP
 * notifications/message, each with _meta.germline.label (the result's
 * label: its copy's words); else jv_invalid(). *progress the same for the
 * server's progress notifications ({progress, total?, message?}, without
 * a token: the caller gives the client's). */
int gl_mcp_result(jv record, const char *consumer, jv clearance, jv *result, int *code,
		  char **message, jv *data, jv *log, jv *progress);

#endif
