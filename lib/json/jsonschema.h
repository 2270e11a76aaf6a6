/* jsonschema.h — a small, strict JSON Schema check of MCP tool arguments
 * (gl-run --serve-mcp, issue 17; docs/mcp.md "Arguments and inputSchema").
 *
 * The schema is the tool's inputSchema as the release's server listed it
 * in its discovery (lib/broker/mcp.h): untrusted, like the arguments the agent
 * sends. Both are values gl_json_parse took (bounded depth, strict). The
 * check is the subset of JSON Schema that MCP tools use:
 *   type               a name or an array of names: null, boolean, object,
 *                      array, number, integer (a number with no fraction),
 *                      string
 *   enum, const        the value equals one of them (jv_equal)
 *   required           names an object value must hold
 *   properties         each member named there checked against its schema
 *   additionalProperties
 *                      false: no member outside properties; a schema: the
 *                      other members checked against it (not enforced when
 *                      patternProperties is present: no regular expressions)
 *   items              one schema for every element of an array
 *   true / false       the boolean schemas
 * Every other keyword ($ref, anyOf, oneOf, allOf, not, if, format,
 * minimum, pattern, minLength, prefixItems, …) is ignored: the server
 * still sees only what the manifest allows, and checks the rest itself.
 * Bounded: schemas nested deeper than GL_SCHEMA_DEPTH_MAX and checks of
 * more than GL_SCHEMA_WORK_MAX (schema, value) pairs are refused (fail
 * closed), so a hostile schema cannot stall the broker.
 *
 * jv ownership: every argument is borrowed. */
#ifndef GL_JSONSCHEMA_H
#define GL_JSONSCHEMA_H

#include <jv.h>

#include "core/fail.h"

#define GL_SCHEMA_DEPTH_MAX 32
#define GL_SCHEMA_WORK_MAX 100000
#define GL_SCHEMA_PATH_MAX 256 /* bytes of the path an error names */

/* Is value valid under schema? 0, or -1 with f (bad_args; sanitised)
 * naming the first offending field from root, e.g. "arguments.path:
 * expected string", "arguments: missing required property \"path\"",
 * "arguments.paths[2]: expected string". */
int gl_schema_check(jv schema, jv value, const char *root, struct gl_fail *f);

#endif
