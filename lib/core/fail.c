/* fail.c — see fail.h. */
#define _GNU_SOURCE
#include "core/fail.h"

#include <errno.h>
#include <string.h>

#define GL_FAIL_NAME_(e, name, status) [GL_E_##e] = name,
static const char *const names[GL_E_COUNT_] = {GL_FAIL_CODES(GL_FAIL_NAME_)};
#undef GL_FAIL_NAME_

#define GL_FAIL_EXIT_(e, name, status) [GL_E_##e] = status,
static const unsigned char exits[GL_E_COUNT_] = {GL_FAIL_CODES(GL_FAIL_EXIT_)};
#undef GL_FAIL_EXIT_

enum gl_code gl_fail_vset(struct gl_fail *f, enum gl_code code, const char *fmt, va_list ap)
{
	char *d;
	if (vasprintf(&d, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	free(f->detail);
	f->detail = d;
	f->code = code;
	return code;
}

enum gl_code gl_fail_set(struct gl_fail *f, enum gl_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gl_fail_vset(f, code, fmt, ap);
	va_end(ap);
	return code;
}

int gl_fail(struct gl_fail *f, enum gl_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gl_fail_vset(f, code, fmt, ap);
	va_end(ap);
	return -1;
}

int gl_fail_errno(struct gl_fail *f, enum gl_code code, const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	gl_fail_vset(f, code, fmt, ap);
	va_end(ap);
	char *d = gl_xasprintf("%s: %s", f->detail, strerror(e));
	free(f->detail);
	f->detail = d;
	return -1;
}

void gl_fail_clear(struct gl_fail *f)
{
	free(f->detail);
	f->detail = NULL;
	f->code = GL_E_OK;
}

const char *gl_fail_detail(const struct gl_fail *f)
{
	return f->detail ? f->detail : "";
}

char *gl_fail_steal(struct gl_fail *f)
{
	char *d = f->detail ? f->detail : gl_xstrdup("");
	f->detail = NULL;
	f->code = GL_E_OK;
	return d;
}

const char *gl_code_name(enum gl_code code)
{
	if ((unsigned)code >= GL_E_COUNT_)
		return "io";
	return names[code];
}

enum gl_code gl_code_from_name(const char *name)
{
	for (unsigned i = 0; name && i < GL_E_COUNT_; i++)
		if (!strcmp(names[i], name))
			return (enum gl_code)i;
	return GL_E_COUNT_;
}

int gl_code_exit(enum gl_code code)
{
	if ((unsigned)code >= GL_E_COUNT_)
		return GL_EXIT_USAGE;
	return exits[code];
}

/* SPEC §2: {"ok":false,"error":CODE,"detail":TEXT}; the detail may hold
 * bytes a release, a copy or a metadata file chose (A6): keep it valid
 * UTF-8 without control bytes. The keys are set in this order after any
 * extra ones, as every command printed them before. */
jv gl_fail_record(jv extra, const char *code, const char *detail)
{
	jv o = jv_get_kind(extra) == JV_KIND_OBJECT ? extra : (jv_free(extra), jv_object());
	o = jv_object_set(o, jv_string("ok"), jv_false());
	o = jv_object_set(o, jv_string("error"), jv_string(code));
	autofree char *safe = detail ? gl_sanitize(detail, strlen(detail)) : gl_xstrdup("");
	return jv_object_set(o, jv_string("detail"), jv_string(safe));
}

jv gl_fail_to_jv(const struct gl_fail *f, jv extra)
{
	return gl_fail_record(extra, gl_code_name(f->code), f->detail);
}
