/* Unit tests of lib/core/fail.c, the one failure type (issue 18).
 *
 *   fail_test [SPEC.md [docs/gl-run.md]]
 *
 * Every enum gl_code value has a SPEC name (lowercase, unique, found again
 * by gl_code_from_name) and an exit status of SPEC §2; gl_fail_to_jv's
 * record is {"ok":false,"error":NAME,"detail":…} with a detail holding
 * control bytes and invalid UTF-8 made printable (A6: a release chose
 * them). Given SPEC.md, every code its §3 ("Every refusal names its cause")
 * and §6 ("error":"a|b|…") list must have an enum value of that name; given
 * docs/gl-run.md, so must every code of its "Refused calls" paragraph — a
 * code added to the contract without an enum value fails here.
 * Run by tests/lib.bats under the plain and the sanitizer build. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fail.h"
#include "json/json.h"

#include "check.h"

static bool is_code_name(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
			return false;
	return true;
}

static void every_value_named(void)
{
	for (unsigned i = 0; i < GL_E_COUNT_; i++) {
		const char *n = gl_code_name((enum gl_code)i);
		CHECK(n && is_code_name(n, strlen(n)), "code %u has no SPEC name", i);
		if (!n)
			continue;
		CHECK(gl_code_from_name(n) == (enum gl_code)i, "%s is not found again (a duplicate?)", n);
		int st = gl_code_exit((enum gl_code)i);
		CHECK(st == GL_EXIT_OK || st == GL_EXIT_REFUSED || st == GL_EXIT_USAGE,
		      "%s maps to exit %d", n, st);
		CHECK((st == GL_EXIT_OK) == (i == GL_E_OK), "%s: exit 0 is for ok alone", n);
	}
	CHECK(gl_code_exit(GL_E_IO) == GL_EXIT_USAGE, "io is not exit 2");
	CHECK(gl_code_exit(GL_E_BAD_SIGNATURE) == GL_EXIT_REFUSED, "bad_signature is not exit 1");
	CHECK(gl_code_exit(GL_E_DEADLINE) == GL_EXIT_REFUSED, "deadline is not exit 1");
	CHECK(gl_code_from_name("no_such_code") == GL_E_COUNT_, "an unknown name has a code");
	CHECK(!strcmp(gl_code_name(GL_E_COUNT_), "io"), "out of range is not io");
}

static void record_is_sanitised(void)
{
	struct gl_fail f = {0};
	CHECK(gl_fail(&f, GL_E_UNSAFE_ARCHIVE, "a%cb\xff\xc3(c\n\\", 1) == -1, "gl_fail is not -1");
	jv r = gl_fail_to_jv(&f, JV_OBJECT(jv_string("id"), jv_string("c1")));
	struct gl_buf b = {0};
	gl_json_dump(&b, r); /* borrows r */
	const char *want = "{\"detail\":\"a\\\\x01b\\\\xff\\\\xc3(c\\\\x0a\\\\\\\\\","
			   "\"error\":\"unsafe_archive\",\"id\":\"c1\",\"ok\":false}"; /* keys sorted */
	CHECK(b.len == strlen(want) && !memcmp(b.data, want, b.len), "record %s, want %s", b.data,
	      want);
	const char *d = gl_json_get_str(r, "detail");
	for (const char *p = d ? d : ""; *p; p++)
		CHECK((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f, "byte 0x%02x in detail",
		      (unsigned char)*p);
	gl_buf_free(&b);
	jv_free(r);
	char *s = gl_fail_steal(&f);
	CHECK(f.detail == NULL && f.code == GL_E_OK, "steal leaves the failure set");
	free(s);
	gl_fail_clear(&f);
	/* A record without detail has "detail":"" (never null). */
	jv e = gl_fail_record(jv_null(), "io", NULL);
	CHECK(!strcmp(gl_json_get_str(e, "detail") ? gl_json_get_str(e, "detail") : "-", ""),
	      "NULL detail is not \"\"");
	jv_free(e);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	struct gl_buf b = {0};
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		gl_buf_add(&b, chunk, n);
	fclose(f);
	gl_buf_addc(&b, 0);
	return b.data;
}

static int must_have(const char *where, const char *s, size_t n)
{
	autofree char *name = strndup(s, n);
	CHECK(gl_code_from_name(name) != GL_E_COUNT_, "%s names code \"%s\": no enum gl_code value",
	      where, name);
	return 1;
}

/* Every `code` from start up to the end of its paragraph (a blank line),
 * skipping the field names the prose mentions. */
static int backticked_codes(const char *where, const char *start)
{
	int found = 0;
	const char *end = strstr(start, "\n\n");
	for (const char *p = start; p && (!end || p < end); p++) {
		if (*p != '`')
			continue;
		const char *q = strchr(p + 1, '`');
		if (!q || (end && q > end))
			break;
		size_t n = (size_t)(q - p - 1);
		if (is_code_name(p + 1, n) && strncmp(p + 1, "detail", n) && strncmp(p + 1, "error", n))
			found += must_have(where, p + 1, n);
		p = q;
	}
	return found;
}

/* Every a, b of "error":"a|b|…" between from and to. */
static int alternatives(const char *where, const char *from, const char *to)
{
	int found = 0;
	for (const char *p = strstr(from, "\"error\":\""); p && p < to;
	     p = strstr(p + 1, "\"error\":\"")) {
		const char *s = p + 9;
		for (;;) {
			size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz_");
			if (n)
				found += must_have(where, s, n);
			s += n;
			if (*s != '|')
				break;
			s++;
			if (*s == '\n') /* the list goes on on the next line */
				s += 1 + strspn(s + 1, " ");
		}
	}
	return found;
}

static void spec_codes(const char *spec_path)
{
	autofree char *spec = slurp(spec_path);
	CHECK(spec, "cannot read %s", spec_path);
	if (!spec)
		return;
	const char *s3 = strstr(spec, "Every refusal names its cause in `error`:");
	CHECK(s3, "SPEC §3's code list not found");
	if (s3)
		CHECK(backticked_codes("SPEC §3", s3 + 40) >= 12, "SPEC §3: fewer than 12 codes read");
	const char *s6 = strstr(spec, "\n## 6. "), *s7 = s6 ? strstr(s6, "\n## 7. ") : NULL;
	CHECK(s6 && s7, "SPEC §6 not found");
	if (s6 && s7)
		CHECK(alternatives("SPEC §6", s6, s7) >= 9, "SPEC §6: fewer than 9 codes read");
}

static void gl_run_doc_codes(const char *path)
{
	autofree char *doc = slurp(path);
	CHECK(doc, "cannot read %s", path);
	const char *p = doc ? strstr(doc, "Refused calls are ") : NULL;
	CHECK(!doc || p, "%s: \"Refused calls are\" not found", path);
	if (p)
		CHECK(backticked_codes(path, p) >= 15, "%s: fewer than 15 codes read", path);
}

int main(int argc, char **argv)
{
	every_value_named();
	record_is_sanitised();
	if (argc > 1)
		spec_codes(argv[1]);
	if (argc > 2)
		gl_run_doc_codes(argv[2]);
	if (!failures)
		printf("ok: %d codes\n", (int)GL_E_COUNT_);
	return failures != 0;
}
