/* mcp_lists.h — an MCP server's resources and prompts, on the broker's side
 * (docs/mcp.md "Resources and prompts"). A release that declares the
 * functions resources/read or prompts/get (lib/release/manifest.h) has its
 * lists asked of the discovery copy (lib/broker/mcp.h), which holds no
 * data and an empty slot: what it lists is public, but it is release code,
 * so every list is typed and bounded here. A read or a get is a call like
 * a tool's, through copies, its result labelled. */
#ifndef GL_MCP_LISTS_H
#define GL_MCP_LISTS_H

#include <jv.h>
#include <stdbool.h>

#define GL_MCP_LIST_MAX 1024              /* entries of one list */
#define GL_MCP_LISTS_BYTES (1u << 20)     /* bytes of the three lists, as JSON */

/* Whether the manifest (borrowed) declares function fn. */
bool gl_mcp_declares(jv manifest, const char *fn);

/* The discovery call's args for the manifest (borrowed): {"lists": [...]},
 * "resources" when it declares resources/read, "prompts" for prompts/get. */
jv gl_mcp_discovery_args(jv manifest);

/* server (consumed) with the lists of the discovery copy's value
 * (borrowed) that the manifest (borrowed) declares: "resources",
 * "resourceTemplates" (resources/read) and "prompts" (prompts/get), each an
 * array of at most GL_MCP_LIST_MAX objects with the string fields MCP
 * requires ("uri"/"uriTemplate" and "name"; "name"), all three within
 * GL_MCP_LISTS_BYTES. A list that breaks a bound is empty. And
 * "completions": {} when it declares completion/complete. */
jv gl_mcp_lists_add(jv server, jv value, jv manifest);

/* Does server (borrowed: gl_session_server's) serve function fn
 * (resources/read, prompts/get, completion/complete): did its discovery
 * bring the list or the capability that the release's declaration asked? */
bool gl_mcp_served(jv server, const char *fn);

/* The answer to list method (resources/list, resources/templates/list,
 * prompts/list) from server (borrowed: gl_session_server's), or
 * jv_invalid() when method is none of them or the release declares no
 * such function. */
jv gl_mcp_list_answer(jv server, const char *method);

/* Whether a call of function fn returned a value (borrowed) of its
 * method's result shape: {"contents": [...]} for resources/read,
 * {"messages": [...]} for prompts/get, {"completion": {...}} for
 * completion/complete; any value for a tool. */
bool gl_mcp_result_shape(const char *fn, jv value);

#endif
