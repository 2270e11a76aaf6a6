/* log.h — the operator's log (issue 17; docs/gl-run.md "Logs"): JSON Lines
 * events appended to one file, and progress on a terminal.
 *
 * `--log FILE` or GL_LOG=FILE (the flag wins) on every command: gl-run,
 * gl-replay, gl-damp and gl-plan parse it with their flags; gl-sign and
 * gl-verify, whose arguments are positional, take it out of argv first
 * (gl_log_take_flag) and log one "command" event per run. Each event is one line
 *   {"ts":"2027-01-31T00:00:00Z","prog":"gl-run","pid":123,"event":"call_end",…}
 * written with a single write(2) on a descriptor opened O_APPEND (several
 * processes may share the file; a line is never interleaved with another),
 * and never holds an item's contents or anything a copy chose as text: the
 * callers log codes, names, hashes, counts and times only (the error
 * details a copy wrote stay in the record, where their label governs them).
 * Events: call_start, call_end (release, function, copies, elapsed_ms, ok,
 * error), refusal (a call or record refused: its code), copy_failed (a
 * consumer's copy ended without a value: its code), limit (a copy met a
 * bound: memory, pids, cpu, disk), trigger (destination, kind, witness),
 * cancelled, verdict (gl-replay), plan (gl-plan), damp (gl-damp).
 * A log that cannot be opened is a usage error (exit 2); a write that
 * fails later is reported once on stderr and the work goes on. */
#ifndef GL_LOG_H
#define GL_LOG_H

#include <jv.h>
#include <stdbool.h>

#include "core/fail.h"
#include "core/util.h"

/* Open path (NULL: $GL_LOG; neither: no log) for prog ("gl-run"). Returns
 * 0, or -1 with f (io) when it cannot be opened. */
int gl_log_start(const char *prog, const char *path, struct gl_fail *f);
/* gl_log_start for a command: a failure is reported and exits 2. */
void gl_log_open(const char *prog, const char *path);
bool gl_log_on(void);
/* One event: fields (consumed, an object or jv_null()) with ts, prog, pid
 * and event set. Thread-safe. */
void gl_log_event(const char *event, jv fields);
/* The events of one gl-run result record (borrowed): call_end, and refusal,
 * copy_failed, limit and trigger as it holds them. */
void gl_log_result(jv rec);
/* obj.key (borrowed obj) for an event's fields: a copy, or jv_null(). */
jv gl_log_field(jv obj, const char *key);
void gl_log_close(void);

/* For a command with positional arguments: remove every "--log FILE" and
 * "--log=FILE" before "--" from argv (updating *argc), then gl_log_open. */
int gl_log_take(const char *prog, int *argc, char **argv, struct gl_fail *f);
/* gl_log_take for a command: a failure is reported and exits 2. */
void gl_log_take_flag(const char *prog, int *argc, char **argv);
/* The "command" event: what ran (argv[1]), its exit status, the refusal
 * code when it was refused (NULL: none), and the elapsed time. */
void gl_log_command(const char *command, int status, const char *error);

/* Progress of long work on stderr, at most once a second, and only when
 * stderr is a terminal and the work has run for more than 2 s: "\rPROG:
 * TEXT" (gl_log_progress_end ends the line). */
void gl_log_progress(const char *fmt, ...) GL_PRINTF(1, 2);
void gl_log_progress_end(void);

#endif
