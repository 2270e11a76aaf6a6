/* jsonl.h — one line limit along gl-plan | gl-run | gl-replay | gl-damp
 * (SPEC §2; issue 13 item 7; docs/pipeline.md "Line limit").
 *
 * Every stage reads records of at most GL_JSON_LINE_MAX bytes (lib/json/json.h,
 * the one shared constant) and writes none longer: a record that would be
 * is replaced by a small ok:false record ("oversized") that still names
 * what the next stage needs (gl-run keeps the triggers, so gl-replay still
 * replays them, and the release, so gl-damp counts the call). A line over
 * the limit that a stage reads anyway (not written by a stage of ours) is
 * answered with a "too_long" record naming the release and id its first
 * bytes give, if any; gl-damp counts it as a call to that release. */
#ifndef GL_JSONL_H
#define GL_JSONL_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"
#include "core/util.h"

#define GL_ERR_OVERSIZED "oversized" /* a record a stage would write over the limit */

/* Write v (consumed) as one line (flushed) if its JSON is at most
 * GL_JSON_LINE_MAX bytes and GL_JSON_MAX_DEPTH deep (lib/json/json.h: every
 * stage reads it then); else write nothing and return false. */
bool gl_jsonl_emit(jv v);
/* The same returning 1 written, 0 not fitting (nothing written), or -1
 * with f (io) when stdout fails; gl_jsonl_emit exits 2 then (gl_fail_exit). */
int gl_jsonl_put(jv v, struct gl_fail *f);

/* Is v's JSON (borrowed) at most GL_JSON_LINE_MAX bytes and
 * GL_JSON_MAX_DEPTH deep? */
bool gl_jsonl_fits(jv v);

/* In place of gl-run's result record rec (consumed) that does not fit:
 * {"ok":false,"error":"oversized","detail":<fixed>} with what the plan
 * fixed (id, release, function, mode, each consumer's name with the same
 * error), the copies, the receipts, the enforcement, elapsed_ms and the
 * triggers with their witness files, so gl-replay still replays them and
 * gl-damp counts the call; every value withheld. Should the triggers alone
 * not fit, "triggers_withheld" counts them instead. */
jv gl_jsonl_oversized_result(jv rec);

/* The span [*vs, *ve) of the value of top-level key in buf[0..n), the
 * start of a JSON object that may be cut anywhere (the first bytes of an
 * oversized line), when the value is complete there. Nested values and
 * strings are skipped, never searched; a key spelled with escapes is not
 * matched. */
bool gl_jsonl_field(const char *buf, size_t n, const char *key, size_t *vs, size_t *ve);

/* {"release":R,"id":I} with what the start of an oversized line names:
 * release only when 64 lowercase hex digits, id only when a string of at
 * most 256 bytes or a number; either may be absent (owned). */
jv gl_jsonl_named(const char *buf, size_t n);

#endif
