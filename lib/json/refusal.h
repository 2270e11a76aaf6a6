/* refusal.h — reporting a struct gl_fail (core/fail.h) as SPEC §2 says.
 *
 * Every verification step returns an enum gl_code and, when it refuses,
 * fills a struct gl_fail with the code and a detail naming the file and the
 * field. Commands report it once: a refusal is one JSON record on stdout
 * {"ok":false,"error":CODE,"detail":…} (gl_fail_to_jv) plus a line on
 * stderr, exit 1; an I/O or usage problem is a line on stderr, exit 2. */
#ifndef GL_REFUSAL_H
#define GL_REFUSAL_H

#include "core/fail.h"

/* The names of SPEC §3's codes before they joined enum gl_code, kept for
 * cmd/ (issue 18: the commands are rewritten in parallel). */
#define gl_refusal gl_code
#define GL_R_OK GL_E_OK
#define GL_R_BAD_SIGNATURE GL_E_BAD_SIGNATURE
#define GL_R_THRESHOLD GL_E_THRESHOLD
#define GL_R_EXPIRED GL_E_EXPIRED
#define GL_R_ROLLBACK GL_E_ROLLBACK
#define GL_R_LENGTH GL_E_LENGTH
#define GL_R_HASH GL_E_HASH
#define GL_R_UNSAFE_ARCHIVE GL_E_UNSAFE_ARCHIVE
#define GL_R_BAD_MANIFEST GL_E_BAD_MANIFEST
#define GL_R_NOT_PINNED GL_E_NOT_PINNED
#define GL_R_BAD_PASSPHRASE GL_E_BAD_PASSPHRASE
#define GL_R_BAD_METADATA GL_E_BAD_METADATA
#define GL_R_UNSUPPORTED GL_E_UNSUPPORTED
#define GL_R_FETCH GL_E_FETCH
#define GL_R_IO GL_E_IO
#define gl_refusal_name gl_code_name
#define gl_refusal_exit gl_code_exit

/* Print f as SPEC §2 says (record on stdout for a refusal, always a line on
 * stderr) and return the exit code to use. */
int gl_fail_report(const struct gl_fail *f);
/* gl_fail_report, then exit with its status: the end of a command that
 * cannot go on (stdout gone, stdin unreadable). For commands and for the
 * command-facing wrappers that keep their old signatures (gl_json_emit,
 * gl_lines_record, gl_jsonl_emit, gl_log_take_flag); the library's own
 * functions return the struct gl_fail instead. */
GL_NORETURN void gl_fail_exit(const struct gl_fail *f);
/* The code of the last refusal gl_fail_report printed in this process (for
 * the log, lib/json/log.h), or NULL. */
const char *gl_fail_last(void);

#endif
