/* manifest.h — a release's manifest.json (SPEC §5, §11).
 *
 * The manifest comes from the release, so it is hostile input (paper
 * §III-A): it is size-capped, parsed strictly, and every field is checked
 * for kind and shape. Unknown fields are refused, so a manifest never means
 * something the host does not understand. docs/formats.md lists the rules. */
#ifndef GL_MANIFEST_H
#define GL_MANIFEST_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"

#define GL_MANIFEST_MAX (1u << 20)
#define GL_MANIFEST_FUNCTIONS_MAX 256
#define GL_MANIFEST_DESTS_MAX 64   /* destinations of one function */
#define GL_MANIFEST_ARGS_MAX 16    /* items_from_args of one function */
#define GL_MANIFEST_PATHS_MAX 64   /* read_paths */
#define GL_MANIFEST_ARGV_MAX 64    /* exec entry */
/* The workspace of an exec release with "state_dir": true, at this fixed
 * path in every copy (docs/exec.md "File state through slots"). */
#define GL_WORKSPACE_DIR "/run/germline/state"
#define GL_PATH_MAX 4096
#define GL_HOST_MAX 253

/* Parse and validate manifest bytes. Returns the manifest (owned) or
 * jv_invalid_with_msg naming the field that is wrong. */
jv gl_manifest_parse(const char *buf, size_t len);

/* Validate an already-parsed manifest. Borrows m. 0, or -1 with f
 * (bad_manifest) naming the field that is wrong. */
int gl_manifest_check(jv m, struct gl_fail *f);

/* Load <release_dir>/manifest.json and validate it. Owned jv or invalid. */
jv gl_manifest_load(const char *release_dir);

/* The same, telling "no manifest there" (GL_MANIFEST_MISSING: the release
 * is not installed) from "a manifest that is wrong" (GL_MANIFEST_BAD).
 * *out is owned: the manifest, or jv_invalid_with_msg. */
enum gl_manifest_status { GL_MANIFEST_OK, GL_MANIFEST_MISSING, GL_MANIFEST_BAD };
enum gl_manifest_status gl_manifest_read(const char *release_dir, jv *out);

/* The function object of name fn (owned), or jv_invalid() if undeclared. */
jv gl_manifest_function(jv m, const char *fn);

/* Does function object fn (borrowed; gl_manifest_function's) declare
 * "state": "none", the signed declaration that its calls keep no state
 * across calls (issue 19; docs/formats.md)? Its copies then get an empty
 * call.state and may not write one (lib/broker/broker.c), and its calls
 * take no slot key in gl-run --jobs (lib/session/jobs.c). Anything else,
 * an absent field included, is false: the slot, as always. */
bool gl_manifest_stateless(jv fn);

/* What runs a release and how it is spoken to (SPEC §4 manifest "runtime",
 * "protocol"): the only place that compares these strings. m is borrowed and
 * passed gl_manifest_check; anything else is GL_RT_UNKNOWN /
 * GL_PROTO_UNKNOWN (callers refuse it: fail closed). An absent "protocol"
 * is "germline". */
enum gl_runtime_kind { GL_RT_UNKNOWN = 0, GL_RT_PYTHON, GL_RT_EXEC };
enum gl_protocol_kind { GL_PROTO_UNKNOWN = 0, GL_PROTO_GERMLINE, GL_PROTO_MCP_STDIO };
enum gl_runtime_kind gl_manifest_runtime(jv m);
enum gl_protocol_kind gl_manifest_protocol(jv m);

/* Name rules shared by manifests, policies and call envelopes. */

/* A destination host (Section II-B: a DNS name or IP address): a lowercase
 * DNS name (labels of [a-z0-9-], 1..63 bytes, no leading or trailing '-',
 * at most 253 bytes, the last label not all digits), a dotted-quad IPv4
 * address, or an IPv6 address in its RFC 5952 form without brackets.
 * Nothing else: no scheme, port, path, trailing dot or upper case. */
bool gl_host_ok(const char *s, size_t len);

/* A destination (SPEC §5): a host (gl_host_ok), reached over HTTP and
 * HTTPS, or "host:port", a TCP byte stream the broker relays and compares
 * (docs/streams.md): the host a DNS name or IPv4 address, the port
 * 1..65535 in decimal without a leading zero, and neither 80 nor 443 (the
 * HTTP relay's: name the host for those). */
bool gl_dest_ok(const char *s, size_t len);
/* The port of a stream destination s (gl_dest_ok), or 0 for a host. */
unsigned gl_dest_port(const char *s);
/* At most this many stream destinations per function, one port each: an
 * exec copy's relay listens on each declared port (docs/streams.md). */
#define GL_STREAM_DESTS_MAX 8
struct gl_fail;
/* dests (borrowed array of gl_dest_ok strings, at where): at most
 * GL_STREAM_DESTS_MAX streams, no two on one port. 0, or -1 with f. */
int gl_stream_dests_check(jv dests, const char *where, struct gl_fail *f);

/* The MCP methods an mcp-stdio release may declare as functions beside its
 * tools (docs/mcp.md "Resources and prompts"): a read of a resource, a
 * prompt's messages, the completion of an argument. Each runs through
 * copies as a tool call does, the method's params its args; none is a tool
 * name (no '/' in those). */
#define GL_MCP_RESOURCE_READ "resources/read"
#define GL_MCP_PROMPT_GET "prompts/get"
#define GL_MCP_COMPLETE "completion/complete"
bool gl_mcp_method_fn(const char *name);

/* An absolute, normalised path: starts with '/', no empty, "." or ".."
 * component, no trailing '/', no control character, at most GL_PATH_MAX. */
bool gl_path_clean(const char *s, size_t len);

/* A cache of loaded manifests by release hash, kept for the process
 * lifetime (a release directory is content-addressed and read-only). */
struct gl_releases;
/* dir: the directory holding <sha256>/manifest.json. */
struct gl_releases *gl_releases_new(const char *dir);
void gl_releases_free(struct gl_releases *r);
/* The manifest of release sha (which must satisfy gl_sha256_hex_ok). On
 * GL_E_OK *m is borrowed from the cache: valid until the next
 * gl_releases_get (the cache holds 4096 manifests; past that the last one
 * read is kept alone) — jv_copy it to keep it longer. Otherwise f says why:
 * GL_E_UNKNOWN_RELEASE (not installed, or sha malformed) or
 * GL_E_BAD_MANIFEST (SPEC §4). Failures are not cached: a release installed
 * while the process runs is found by the next call. */
enum gl_code gl_releases_get(struct gl_releases *r, const char *sha, jv *m, struct gl_fail *f);

#endif
