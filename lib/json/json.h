/* json.h — the only way germline reads and writes JSON (SPEC §2, §3).
 *
 * Reader: strict RFC 8259 over a bounded buffer, built on libjq's jv values.
 * It refuses what libjq's own parser would silently accept or rewrite:
 * invalid UTF-8 (jq substitutes U+FFFD), duplicate object keys (jq keeps the
 * last), lone surrogates, NUL inside strings, nesting deeper than
 * GL_JSON_MAX_DEPTH, trailing bytes, and any number that would not pass
 * through the pipeline exactly (libjq 1.6's jv keeps only a double; SPEC §2,
 * docs/pipeline.md "Numbers"): an integer literal outside ±(2^53−1), or a
 * number whose text is not the same decimal number as the text the writers
 * write for its double (9007199254740993, 0.30000000000000001, 1e-400,
 * 1e999). Spelling is not kept: 1.0 is written back as 1, 1E2 as 100.
 *
 * Writers: a compact writer for output records, and the canonical writer of
 * SPEC §3 (securesystemslib's form), which is what gets signed.
 *
 * jv ownership is stated per function: "consumes" takes the reference,
 * "borrows" leaves it with the caller. */
#ifndef GL_JSON_H
#define GL_JSON_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"
#include "core/util.h"

/* The one depth limit of the pipeline (SPEC §2; docs/pipeline.md "Depth
 * limit"): every reader — gl-plan, gl-run's envelope reader, the copy
 * message reader, the slot reader, gl-exec-host, gl-replay, gl-damp, the
 * witness loader — goes through gl_json_parse and takes documents nested at
 * most GL_JSON_MAX_DEPTH containers deep (a scalar is depth 0, [] is 1).
 * A value none of our writers built (a copy's result or state value) is
 * nested by them at most GL_JSON_NEST_MAX levels deep (gl-run's record:
 * results[i].value, 3; the call message: state.<key>.value, 3; the slot
 * file: <key>.value, 2; --serve-mcp: result.structuredContent, 2), so a
 * value of depth at most GL_JSON_VALUE_DEPTH_MAX is read by every stage
 * after the one that took it. The broker refuses a deeper one where it
 * enters (lib/broker/broker.c: a result is a protocol violation, a state_put is
 * refused back to the copy and never stored); gl-run's record writer
 * checks the depth of what it writes as it checks its length. */
#define GL_JSON_MAX_DEPTH 64
#define GL_JSON_NEST_MAX 8
#define GL_JSON_VALUE_DEPTH_MAX (GL_JSON_MAX_DEPTH - GL_JSON_NEST_MAX)
/* The one line limit of the pipeline gl-plan | gl-run | gl-replay |
 * gl-damp (SPEC §2): every stage reads records up to it and writes none
 * longer (lib/json/jsonl.h; docs/pipeline.md "Line limit"). */
#define GL_JSON_LINE_MAX (16u << 20)

/* The one node limit of the pipeline (issue 15 "The broker is bounded by
 * construction"; docs/pipeline.md "Node limit"). libjq's jv costs far more
 * than the text it is read from: 16 bytes per array member (and up to 2.5
 * times that while an array grows), about 290 bytes for an empty array and
 * 400 for an empty object (jq 1.6 allocates 16 array slots, 8 object slots
 * and their buckets). So before any jv is built the reader counts the
 * document's weighted nodes in one pass over its bytes, allocating nothing
 * (gl_json_nodes): a number, literal, string or object key weighs 1, an
 * array or object GL_JSON_CONTAINER_WEIGHT; a document above the limit is
 * refused, its jv never built. What a reader's jv can cost is then bounded
 * by the limit, not by what the sender wrote: at most about 40 bytes per
 * weighted node plus the document's own string bytes (docs/pipeline.md
 * gives the measured figures). GL_JSON_NODES_MAX is every stage's limit
 * (gl-plan, gl-run's envelope reader, gl-replay, gl-damp, the slot, policy
 * and witness readers): no line within GL_JSON_LINE_MAX that holds only
 * scalars is ever refused by it (a scalar takes at least 2 bytes with its
 * separator), and gl_jsonl_emit writes no record above it. A copy's
 * message has its own, smaller limit (GL_MSG_NODES_MAX, lib/json/msg.h). */
#define GL_JSON_CONTAINER_WEIGHT 16
#define GL_JSON_NODES_MAX (GL_JSON_LINE_MAX / 2)

/* The weighted nodes of the JSON text buf[0..len) as above, counted
 * without validating it (the parser validates), stopping as soon as the
 * count passes cap (a value above cap is returned then): for valid JSON
 * exactly its weight. One pass, no allocation. */
size_t gl_json_nodes(const char *buf, size_t len, size_t cap);

/* In a GL_TESTING build with GL_TEST_NODES_OFF=1: no node limit anywhere
 * (every jv is built whatever it costs; tests/broker-bounds.bats shows the
 * harm). Always false in a release build. */
bool gl_json_nodes_off(void);

/* Parse exactly one JSON value in buf[0..len). Returns an owned jv, or
 * jv_invalid_with_msg(string) naming what is wrong and at which byte. A
 * document of more than GL_JSON_NODES_MAX weighted nodes is refused
 * before any jv is built. */
jv gl_json_parse(const char *buf, size_t len);
/* The same without the node limit, for a caller that has already counted
 * buf's nodes against its own limit (lib/json/msg.c). */
jv gl_json_parse_unbounded(const char *buf, size_t len);
/* The same as gl_json_parse, but control characters inside strings are
 * taken verbatim, as securesystemslib's canonical form writes them (SPEC §3:
 * a PEM key's newlines in a TUF metadata file); for TUF metadata only. */
jv gl_json_parse_tuf(const char *buf, size_t len);

/* The depth of v (borrowed): 0 for a scalar, 1 + its deepest member's for
 * an array or object; counting stops past cap (cap + 1 is returned then),
 * so the walk is bounded whatever built v. */
int gl_json_depth(jv v, int cap);

/* The depth a copy's value may have: GL_JSON_VALUE_DEPTH_MAX. In a
 * GL_TESTING build with GL_TEST_DEPTH_OFF=1, the old rule instead —
 * whatever the copy message reader took (GL_JSON_MAX_DEPTH − 1), nested
 * unchecked (tests/pipeline-limits.bats shows the harm). */
int gl_json_value_depth_max(void);
bool gl_json_depth_off(void);

/* The text gl_json_dump writes for the finite number d (at most 39 bytes
 * and NUL): an integer within ±(2^53−1) as one, else the shortest of
 * %.15g..%.17g that reads back as d, in exponent form (%.*e, the same
 * digits) where %g would write an integer literal. Every text it writes,
 * the reader (gl_json_parse, its TUF variant, the copy message) reads back
 * as d: parse → write → parse is the identity on values. */
void gl_json_number_text(double d, char out[40]);

/* Append compact JSON (RFC 8259, UTF-8 verbatim, control characters
 * escaped) to b. Borrows v. Integral numbers within ±2^53 print as
 * integers; others as the shortest round-tripping decimal. */
void gl_json_dump(struct gl_buf *b, jv v);

/* Append one JSON string (quoted, escaped as gl_json_dump does) of the
 * n bytes at s, which must be valid UTF-8. */
void gl_json_dump_string(struct gl_buf *b, const char *s, size_t n);

/* Append the canonical form of v (SPEC §3): keys sorted by byte value, no
 * whitespace, only '"' and '\\' escaped, integers within ±(2^53−1) only.
 * Borrows v. Returns 0, or -1 with f (bad_metadata) naming the offending
 * value (a float, a control character, an out-of-range integer). */
int gl_canon_dump(struct gl_buf *b, jv v, struct gl_fail *f);
/* The same, but control characters are written verbatim as
 * securesystemslib's encode_canonical writes them (SPEC §3): the bytes a
 * TUF signature covers. Only TUF metadata uses it. */
int gl_canon_dump_tuf(struct gl_buf *b, jv v, struct gl_fail *f);

/* Is buf[0..len) exactly the canonical form of the value it parses to?
 * Returns the parsed value (owned) or jv_invalid_with_msg. This single
 * check refuses duplicate keys, whitespace, floats, reordered keys and
 * every other ambiguous encoding (SPEC §3). */
jv gl_canon_parse(const char *buf, size_t len);

/* Write v as one line on stdout and flush (SPEC §2: flushed per line).
 * Consumes v. Returns 0, or -1 with f = io "writing to stdout: …". */
int gl_json_put(jv v, struct gl_fail *f);
/* gl_json_put for a command: a failure is reported and exits 2
 * (gl_fail_exit, json/refusal.h). */
void gl_json_emit(jv v);

/* Emit {"ok":false,"error":code,"detail":detail, ...extra} — the stream
 * error record of SPEC §2. extra may be jv_null() or an object whose
 * fields are added first (e.g. "id"). Consumes extra. */
void gl_json_emit_error(jv extra, const char *code, const char *fmt, ...) GL_PRINTF(3, 4);

/* A bounded JSON Lines reader over a descriptor. */
struct gl_lines {
	int fd;
	size_t pos, end;
	int eof;
	char buf[65536];
};
enum gl_line_status { GL_LINE_OK, GL_LINE_EOF, GL_LINE_TOO_LONG, GL_LINE_IO };
void gl_lines_init(struct gl_lines *r, int fd);
/* Next line (without '\n') into out, replacing its contents. A line longer
 * than cap is skipped to its end and reported as GL_LINE_TOO_LONG, so the
 * stream goes on without ever holding more than cap bytes; out then holds
 * the line's first bytes (at most cap), for gl_jsonl_named. */
enum gl_line_status gl_lines_next(struct gl_lines *r, struct gl_buf *out, size_t cap);

/* The next record of a JSON Lines stream (SPEC §2) into out: blank lines
 * are skipped; an oversized line is answered with the "too_long" error
 * record on stdout (with the "release" and "id" its first bytes name, so
 * gl-damp still counts it) and sets *failed, and the stream goes on. Returns 1
 * with a line, 0 at the end, -1 with f (io) when stdin or stdout fails. */
int gl_lines_read(struct gl_lines *r, struct gl_buf *out, bool *failed, struct gl_fail *f);
/* gl_lines_read for a command: true with a line, false at the end; a
 * failure is reported and exits 2 (gl_fail_exit). */
bool gl_lines_record(struct gl_lines *r, struct gl_buf *out, bool *failed);

/* Small typed accessors over a borrowed object: NULL / -1 when absent or of
 * another kind. The returned string points into obj and lives as long as it. */
const char *gl_json_get_str(jv obj, const char *key);
int gl_json_get_bool(jv obj, const char *key, int dflt);
/* An integer field within ±(2^53−1); 0 and *out, or -1. */
int gl_json_get_int(jv obj, const char *key, int64_t *out);
/* Is v (borrowed) an array of strings? */
int gl_json_is_str_array(jv v);

/* Borrowed-object field lookup without touching refcounts' ownership rules
 * for the caller: returns an owned copy (jv_invalid() when absent). */
jv gl_json_get(jv obj, const char *key);
/* The same, jv_null() when absent (a signed statement's field the record
 * lacks). */
jv gl_json_get_or_null(jv obj, const char *key);
/* The first element of array a (borrowed) that is an object whose string
 * field key equals value (owned), or jv_invalid(). */
jv gl_json_array_find(jv a, const char *key, const char *value);

/* The first key of obj (an object, borrowed) not in allowed
 * (NULL-terminated), quoted for a message (owned), or NULL. */
char *gl_json_unknown_key(jv obj, const char *const *allowed);

#endif
