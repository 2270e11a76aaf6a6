/* refusal.c — see refusal.h. */
#define _GNU_SOURCE
#include "json/refusal.h"

#include <string.h>

#include "json/json.h"

static const char *const names[] = {
    [GL_R_OK] = "ok",
    [GL_R_BAD_SIGNATURE] = "bad_signature",
    [GL_R_THRESHOLD] = "threshold",
    [GL_R_EXPIRED] = "expired",
    [GL_R_ROLLBACK] = "rollback",
    [GL_R_LENGTH] = "length",
    [GL_R_HASH] = "hash",
    [GL_R_UNSAFE_ARCHIVE] = "unsafe_archive",
    [GL_R_BAD_MANIFEST] = "bad_manifest",
    [GL_R_NOT_PINNED] = "not_pinned",
    [GL_R_BAD_PASSPHRASE] = "bad_passphrase",
    [GL_R_BAD_METADATA] = "bad_metadata",
    [GL_R_UNSUPPORTED] = "unsupported",
    [GL_R_FETCH] = "fetch",
    [GL_R_IO] = "io",
};

enum gl_refusal gl_fail_set(struct gl_fail *f, enum gl_refusal code, const char *fmt, ...)
{
	char *d;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&d, fmt, ap) < 0)
		d = NULL;
	va_end(ap);
	free(f->detail);
	f->detail = d;
	f->code = code;
	return code;
}

void gl_fail_clear(struct gl_fail *f)
{
	free(f->detail);
	f->detail = NULL;
	f->code = GL_R_OK;
}

const char *gl_refusal_name(enum gl_refusal code)
{
	if ((unsigned)code >= sizeof names / sizeof names[0])
		return "io";
	return names[code];
}

int gl_refusal_exit(enum gl_refusal code)
{
	if (code == GL_R_OK)
		return GL_EXIT_OK;
	return code == GL_R_IO ? GL_EXIT_USAGE : GL_EXIT_REFUSED;
}

static const char *last_reported; /* the last code gl_fail_report printed */

const char *gl_fail_last(void)
{
	return last_reported;
}

int gl_fail_report(const struct gl_fail *f)
{
	const char *d = f->detail ? f->detail : "";
	last_reported = gl_refusal_name(f->code);
	autofree char *safe = gl_sanitize(d, strlen(d));
	if (f->code == GL_R_IO) {
		gl_warn("%s", safe);
		return GL_EXIT_USAGE;
	}
	gl_warn("refused (%s): %s", gl_refusal_name(f->code), safe);
	gl_json_emit_error(jv_null(), gl_refusal_name(f->code), "%s", d);
	return gl_refusal_exit(f->code);
}
