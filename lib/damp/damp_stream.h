/* damp_stream.h — gl-damp's stream (SPEC §8; docs/damp.md): one JSON Lines
 * record in (a gl-run result record: a call, the penalty decays; a
 * gl-replay verdict: an event, its weight is added), one locked
 * transaction on the state file (damp.h gl_damp_store), one output record
 * {"release","penalty","suppressed"} out, flushed. The state is saved
 * before the record is written: an output record never reports an
 * unsaved state. */
#ifndef GL_DAMP_STREAM_H
#define GL_DAMP_STREAM_H

#include <stdint.h>

#include "core/util.h"
#include "damp/damp.h"

/* One line (lineno counts from 1): 1 when its output record was written,
 * 0 when it was refused (an error record was written instead: bad_json,
 * a classification code, state_full), -1 with f (io) when the state file
 * cannot be locked, read or saved (exit 2, nothing written). */
int gl_damp_stream_line(struct gl_damp_store *store, const struct gl_damp_params *p,
			const struct gl_buf *line, uint64_t lineno, struct gl_fail *f);

/* A line over the pipeline's limit (SPEC §2; lib/json/jsonl.h), prefix its
 * first bytes: counted as a call to the release they name (answered with
 * the penalty and ok:false), else only the error record. 0, or -1 with
 * *err as gl_damp_stream_line. */
int gl_damp_stream_too_long(struct gl_damp_store *store, const struct gl_damp_params *p,
			    const struct gl_buf *prefix, uint64_t lineno, struct gl_fail *f);

/* gl-damp analyze --text and simulate --text (damp_sim.h): the
 * human-readable forms on stdout. GL_EXIT_OK, or GL_EXIT_USAGE when
 * stdout fails. */
struct gl_damp_sim;
struct gl_damp_sim_result;
int gl_damp_analyze_text(const struct gl_damp_params *p, jv analysis);
int gl_damp_simulate_text(const struct gl_damp_sim *sim, const struct gl_damp_sim_result *res);

#endif
