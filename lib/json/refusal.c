/* refusal.c — see refusal.h. */
#define _GNU_SOURCE
#include "json/refusal.h"

#include <string.h>

#include "json/json.h"

static const char *last_reported; /* the last code gl_fail_report printed */

const char *gl_fail_last(void)
{
	return last_reported;
}

void gl_fail_exit(const struct gl_fail *f)
{
	exit(gl_fail_report(f));
}

int gl_fail_report(const struct gl_fail *f)
{
	const char *d = gl_fail_detail(f);
	last_reported = gl_code_name(f->code);
	autofree char *safe = gl_sanitize(d, strlen(d));
	if (gl_code_exit(f->code) == GL_EXIT_USAGE) {
		gl_warn("%s", safe);
		return GL_EXIT_USAGE;
	}
	gl_warn("refused (%s): %s", gl_code_name(f->code), safe);
	gl_json_emit(gl_fail_to_jv(f, jv_null()));
	return gl_code_exit(f->code);
}
