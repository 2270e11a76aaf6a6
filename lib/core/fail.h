/* fail.h — the one failure type of the library (issue 18 "One failure type").
 *
 * A fallible library function fills a struct gl_fail: a code from SPEC's
 * lists (§2 usage/I/O and stream errors, §3 verification refusals, §4 the
 * envelope errors, §6 gl-run's refused calls and failed copies, §7–§9 the
 * replay, damp and receipt errors), a detail naming the file and the field
 * (malloc'd, may hold untrusted bytes), and through the code the exit status
 * it maps to (SPEC §2: 1 a refusal, 2 usage or I/O). Commands print it once:
 * gl_fail_to_jv builds the record {"ok":false,"error":CODE,"detail":…} that
 * every command writes (the only place it is built), the detail sanitised
 * (A6: a release, a copy or a metadata file chose its bytes).
 *
 * gl_die stays for out of memory only; every other failure of lib/ is
 * returned. */
#ifndef GL_FAIL_H
#define GL_FAIL_H

#include <jv.h>

#include "core/util.h"

/* X(ENUM, "spec name", exit status). The names are exactly SPEC's (checked
 * against SPEC.md by tests/unit/fail_test.c). */
#define GL_FAIL_CODES(X)                                                                    \
	X(OK, "ok", GL_EXIT_OK)                                                             \
	/* SPEC §2: usage and I/O (exit 2, a line on stderr and no record) */               \
	X(IO, "io", GL_EXIT_USAGE)                                                          \
	X(USAGE, "usage", GL_EXIT_USAGE)                                                    \
	/* SPEC §2: a record a stage cannot take (the stream goes on) */                    \
	X(BAD_JSON, "bad_json", GL_EXIT_REFUSED)                                            \
	X(TOO_LONG, "too_long", GL_EXIT_REFUSED)                                            \
	X(OVERSIZED, "oversized", GL_EXIT_REFUSED)                                          \
	X(BAD_RECORD, "bad_record", GL_EXIT_REFUSED)                                        \
	/* SPEC §3: verification refusals */                                                \
	X(BAD_SIGNATURE, "bad_signature", GL_EXIT_REFUSED)                                  \
	X(THRESHOLD, "threshold", GL_EXIT_REFUSED)                                          \
	X(EXPIRED, "expired", GL_EXIT_REFUSED)                                              \
	X(ROLLBACK, "rollback", GL_EXIT_REFUSED)                                            \
	X(LENGTH, "length", GL_EXIT_REFUSED)                                                \
	X(HASH, "hash", GL_EXIT_REFUSED)                                                    \
	X(UNSAFE_ARCHIVE, "unsafe_archive", GL_EXIT_REFUSED)                                \
	X(BAD_MANIFEST, "bad_manifest", GL_EXIT_REFUSED)                                    \
	X(NOT_PINNED, "not_pinned", GL_EXIT_REFUSED)                                        \
	X(BAD_PASSPHRASE, "bad_passphrase", GL_EXIT_REFUSED)                                \
	X(BAD_METADATA, "bad_metadata", GL_EXIT_REFUSED)                                    \
	X(UNSUPPORTED, "unsupported", GL_EXIT_REFUSED)                                      \
	X(FETCH, "fetch", GL_EXIT_REFUSED)                                                  \
	/* SPEC §4 (docs/plan.md): the envelope errors of gl-plan and gl-run */             \
	X(BAD_ENVELOPE, "bad_envelope", GL_EXIT_REFUSED)                                    \
	X(BAD_LABEL, "bad_label", GL_EXIT_REFUSED)                                          \
	X(UNKNOWN_RELEASE, "unknown_release", GL_EXIT_REFUSED)                              \
	X(UNKNOWN_FUNCTION, "unknown_function", GL_EXIT_REFUSED)                            \
	X(DESTINATIONS_NOT_ALLOWED, "destinations_not_allowed", GL_EXIT_REFUSED)            \
	X(BAD_DESTINATION, "bad_destination", GL_EXIT_REFUSED)                              \
	X(BAD_ARGS, "bad_args", GL_EXIT_REFUSED)                                            \
	X(UNLABELLED_PATH, "unlabelled_path", GL_EXIT_REFUSED)                              \
	X(DUPLICATE_ITEM, "duplicate_item", GL_EXIT_REFUSED)                                \
	X(READ_PATHS, "read_paths", GL_EXIT_REFUSED)                                        \
	/* SPEC §6: a consumer whose copy failed */                                         \
	X(DEADLINE, "deadline", GL_EXIT_REFUSED)                                            \
	X(CRASH, "crash", GL_EXIT_REFUSED)                                                  \
	X(PROTOCOL, "protocol", GL_EXIT_REFUSED)                                            \
	X(MEMORY, "memory", GL_EXIT_REFUSED)                                                \
	X(PIDS, "pids", GL_EXIT_REFUSED)                                                    \
	X(CPU, "cpu", GL_EXIT_REFUSED)                                                      \
	X(DISK, "disk", GL_EXIT_REFUSED)                                                    \
	X(TOOL_ERROR, "tool_error", GL_EXIT_REFUSED)                                        \
	/* SPEC §6 (docs/gl-run.md "Refused calls"): a refused call, no copies */           \
	X(SUPPRESSED, "suppressed", GL_EXIT_REFUSED)                                        \
	X(DAMP, "damp", GL_EXIT_REFUSED)                                                    \
	X(BAD_PLAN, "bad_plan", GL_EXIT_REFUSED)                                            \
	X(UNSUPPORTED_RUNTIME, "unsupported_runtime", GL_EXIT_REFUSED)                      \
	X(REJECTED, "rejected", GL_EXIT_REFUSED)                                            \
	X(BOOTSTRAP_FAILED, "bootstrap_failed", GL_EXIT_REFUSED)                            \
	X(LAUNCH, "launch", GL_EXIT_REFUSED)                                                \
	X(GERMLINE_CHECK, "germline_check", GL_EXIT_REFUSED)                                \
	X(GERMLINE, "germline", GL_EXIT_REFUSED)                                            \
	X(BAD_ITEM, "bad_item", GL_EXIT_REFUSED)                                            \
	X(ITEM_PATH, "item_path", GL_EXIT_REFUSED)                                          \
	X(BAD_SLOT, "bad_slot", GL_EXIT_REFUSED)                                            \
	X(SLOT_BUSY, "slot_busy", GL_EXIT_REFUSED)                                          \
	/* SPEC §11 (docs/mcp.md): MCP */                                                   \
	X(DISCOVERY_CHANGED, "discovery_changed", GL_EXIT_REFUSED)                          \
	X(NOT_CLEARED, "not_cleared", GL_EXIT_REFUSED)                                      \
	X(CANCELLED, "cancelled", GL_EXIT_REFUSED)                                          \
	/* SPEC §7 (docs/witness.md): gl-replay */                                          \
	X(NO_WITNESS, "no_witness", GL_EXIT_REFUSED)                                        \
	X(HASH_MISMATCH, "hash_mismatch", GL_EXIT_REFUSED)                                  \
	X(TAMPERED_WITNESS, "tampered_witness", GL_EXIT_REFUSED)                            \
	X(BAD_WITNESS, "bad_witness", GL_EXIT_REFUSED)                                      \
	X(INCOMPLETE_WITNESS, "incomplete_witness", GL_EXIT_REFUSED)                        \
	X(TOO_LARGE, "too_large", GL_EXIT_REFUSED)                                          \
	X(MISSING_ITEM, "missing_item", GL_EXIT_REFUSED)                                    \
	X(UNREPLAYABLE, "unreplayable", GL_EXIT_REFUSED)                                    \
	X(MISSING_SNAPSHOT, "missing_snapshot", GL_EXIT_REFUSED)                            \
	X(BAD_SNAPSHOT, "bad_snapshot", GL_EXIT_REFUSED)                                    \
	/* SPEC §8 (docs/damp.md): gl-damp */                                               \
	X(STATE_FULL, "state_full", GL_EXIT_REFUSED)                                        \
	X(UNKNOWN_EVENT, "unknown_event", GL_EXIT_REFUSED)                                  \
	X(BAD_RELEASE, "bad_release", GL_EXIT_REFUSED)                                      \
	/* SPEC §9 (docs/receipts.md): gl-verify receipt */                                 \
	X(BAD_RECEIPT, "bad_receipt", GL_EXIT_REFUSED)                                      \
	X(BAD_STATE, "bad_state", GL_EXIT_REFUSED)                                          \
	X(BAD_TIME, "bad_time", GL_EXIT_REFUSED)                                            \
	X(MISMATCH, "mismatch", GL_EXIT_REFUSED)

#define GL_FAIL_ENUM_(e, name, status) GL_E_##e,
enum gl_code { GL_FAIL_CODES(GL_FAIL_ENUM_) GL_E_COUNT_ };
#undef GL_FAIL_ENUM_

struct gl_fail {
	enum gl_code code;
	char *detail; /* malloc'd; may hold untrusted bytes (sanitised when printed) */
};

/* Record a failure (replacing any earlier one); returns code. */
enum gl_code gl_fail_set(struct gl_fail *f, enum gl_code code, const char *fmt, ...) GL_PRINTF(3, 4);
enum gl_code gl_fail_vset(struct gl_fail *f, enum gl_code code, const char *fmt, va_list ap)
    GL_PRINTF(3, 0);
/* gl_fail_set, returning -1: the failure path of a function that returns
 * "0, or -1 with *f filled". */
int gl_fail(struct gl_fail *f, enum gl_code code, const char *fmt, ...) GL_PRINTF(3, 4);
/* gl_fail with ": strerror(errno)" appended, as gl_die_errno writes it. */
int gl_fail_errno(struct gl_fail *f, enum gl_code code, const char *fmt, ...) GL_PRINTF(3, 4);
void gl_fail_clear(struct gl_fail *f);
static inline void gl_fail_clearp(struct gl_fail *f)
{
	gl_fail_clear(f);
}
#define autofail __attribute__((cleanup(gl_fail_clearp)))
/* The detail (never NULL); steal it with gl_fail_steal (malloc'd, f cleared). */
const char *gl_fail_detail(const struct gl_fail *f);
char *gl_fail_steal(struct gl_fail *f);

/* SPEC's name of code ("bad_signature", "deadline", …; "io" out of range). */
const char *gl_code_name(enum gl_code code);
/* The code SPEC names name, or GL_E_COUNT_ for a name SPEC lacks. */
enum gl_code gl_code_from_name(const char *name);
/* The exit status code maps to (SPEC §2). */
int gl_code_exit(enum gl_code code);

/* The refusal record every command prints: extra (consumed; an object, or
 * anything else for a new one) with "ok":false, "error":code and "detail":
 * the detail made valid UTF-8 without control bytes (gl_sanitize). */
jv gl_fail_record(jv extra, const char *code, const char *detail);
/* gl_fail_record of f's code and detail. */
jv gl_fail_to_jv(const struct gl_fail *f, jv extra);

#endif
