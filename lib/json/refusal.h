/* refusal.h — why a command refused, in the words of SPEC §3.
 *
 * Every verification step returns an enum gl_refusal and, when it refuses,
 * fills a struct gl_fail with the code and a detail naming the file and the
 * field. Commands report it once: a refusal is one JSON record on stdout
 * {"ok":false,"error":CODE,"detail":…} plus a line on stderr, exit 1; an
 * I/O or usage problem is a line on stderr, exit 2 (SPEC §2). */
#ifndef GL_REFUSAL_H
#define GL_REFUSAL_H

#include "core/util.h"

enum gl_refusal {
	GL_R_OK = 0,
	GL_R_BAD_SIGNATURE, /* a signature fails, or metadata is malformed / not canonical */
	GL_R_THRESHOLD,	    /* too few distinct valid authorised signatures; broken root chain */
	GL_R_EXPIRED,	    /* metadata past its "expires" */
	GL_R_ROLLBACK, /* metadata older than (or different at the same version from) the trusted */
	GL_R_LENGTH,   /* archive length differs from targets.json */
	GL_R_HASH,     /* archive SHA-256 differs from targets.json */
	GL_R_UNSAFE_ARCHIVE,
	GL_R_BAD_MANIFEST,
	GL_R_NOT_PINNED,
	GL_R_BAD_PASSPHRASE,
	GL_R_BAD_METADATA, /* a metadata file's shape is wrong (its signatures may verify) */
	GL_R_UNSUPPORTED,  /* a key type, hash or feature this host lacks */
	GL_R_FETCH,	   /* a network failure: the URL and the HTTP status or curl's error */
	GL_R_IO, /* usage or I/O: exit 2, no record */
};

struct gl_fail {
	enum gl_refusal code;
	char *detail; /* malloc'd; may hold untrusted bytes (sanitised when printed) */
};

/* Record a refusal (replacing any earlier one); returns code. */
enum gl_refusal gl_fail_set(struct gl_fail *f, enum gl_refusal code, const char *fmt, ...)
    GL_PRINTF(3, 4);
void gl_fail_clear(struct gl_fail *f);
static inline void gl_fail_clearp(struct gl_fail *f)
{
	gl_fail_clear(f);
}
#define autofail __attribute__((cleanup(gl_fail_clearp)))

/* "bad_signature", "threshold", … ("io" for GL_R_IO). */
const char *gl_refusal_name(enum gl_refusal code);
/* GL_EXIT_REFUSED, or GL_EXIT_USAGE for GL_R_IO. */
int gl_refusal_exit(enum gl_refusal code);

/* Print f as SPEC §2 says (record on stdout for a refusal, always a line on
 * stderr) and return the exit code to use. */
int gl_fail_report(const struct gl_fail *f);
/* The code of the last refusal gl_fail_report printed in this process (for
 * the log, lib/json/log.h), or NULL. */
const char *gl_fail_last(void);

#endif
