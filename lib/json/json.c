/* json.c — the compact and canonical writers, JSON Lines and accessors;
 * the reader is json_read.c. See json.h. */
#define _GNU_SOURCE
#include "json/json.h"
#include "json/jsonl.h"
#include "json/refusal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- writers --------------------------------------------------------- */

#define MAX_SAFE_INT 9007199254740991.0

/* GL_TESTING, GL_TEST_NUMBER_TEXT_OFF=1: integral numbers past ±(2^53−1)
 * written as %g writes them, as integer literals no reader of ours takes
 * (tests/pipeline-limits.bats shows the harm). Never in gl-run. */
static bool number_text_off(void)
{
#ifdef GL_TESTING
	static int off = -1;
	if (off < 0) {
		const char *e = getenv("GL_TEST_NUMBER_TEXT_OFF");
		off = e && !strcmp(e, "1");
	}
	return off == 1;
#else
	return false;
#endif
}

void gl_json_number_text(double d, char s[40])
{
	if (d == floor(d) && fabs(d) <= MAX_SAFE_INT) {
		snprintf(s, 40, "%lld", (long long)d);
		return;
	}
	int prec = 15;
	for (; prec < 17; prec++) {
		snprintf(s, 40, "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	if (prec == 17)
		snprintf(s, 40, "%.17g", d);
	/* %g writes an integral value below 10^prec without a point or an
	 * exponent: an integer literal, which the reader takes only within
	 * ±(2^53−1). Past that (9007199254740994) the same digits go in
	 * exponent form, which every reader of ours takes as this double
	 * (json_read.c number_inexact): whatever a stage reads, it writes in a
	 * form that the next stage reads as the same number. */
	if (!strpbrk(s, ".eEni") && !number_text_off())
		snprintf(s, 40, "%.*e", prec - 1, d);
}

static void dump_number(struct gl_buf *b, double d)
{
	if (!isfinite(d)) {
		gl_buf_adds(b, "null");
		return;
	}
	char s[40];
	gl_json_number_text(d, s);
	gl_buf_adds(b, s);
}

int gl_json_depth(jv v, int cap)
{
	jv_kind k = jv_get_kind(v);
	if (k != JV_KIND_ARRAY && k != JV_KIND_OBJECT)
		return 0;
	if (cap <= 0)
		return 1; /* past the cap: not looked into */
	int deepest = 0;
	if (k == JV_KIND_ARRAY) {
		int n = jv_array_length(jv_copy(v));
		for (int i = 0; i < n && deepest < cap; i++) {
			jv e = jv_array_get(jv_copy(v), i);
			int d = gl_json_depth(e, cap - 1);
			jv_free(e);
			if (d > deepest)
				deepest = d;
		}
	} else {
		jv_object_foreach(v, key, e)
		{
			if (deepest < cap) {
				int d = gl_json_depth(e, cap - 1);
				if (d > deepest)
					deepest = d;
			}
			jv_free(key);
			jv_free(e);
		}
	}
	return 1 + deepest;
}

bool gl_json_depth_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_DEPTH_OFF"); /* test build only: the old, unchecked nesting */
}

int gl_json_value_depth_max(void)
{
	return gl_json_depth_off() ? GL_JSON_MAX_DEPTH - 1 : GL_JSON_VALUE_DEPTH_MAX;
}

void gl_json_dump_string(struct gl_buf *b, const char *s, size_t n)
{
	gl_buf_reserve(b, n + 2);
	gl_buf_addc(b, '"');
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		gl_buf_add(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': gl_buf_adds(b, "\\\""); break;
		case '\\': gl_buf_adds(b, "\\\\"); break;
		case '\n': gl_buf_adds(b, "\\n"); break;
		case '\t': gl_buf_adds(b, "\\t"); break;
		case '\r': gl_buf_adds(b, "\\r"); break;
		case '\b': gl_buf_adds(b, "\\b"); break;
		case '\f': gl_buf_adds(b, "\\f"); break;
		default: gl_buf_printf(b, "\\u%04x", c);
		}
	}
	gl_buf_add(b, s + run, n - run);
	gl_buf_addc(b, '"');
}

struct kv {
	jv k;
	const char *s;
	size_t n;
};

static int kv_cmp(const void *a, const void *b)
{
	const struct kv *x = a, *y = b;
	size_t n = x->n < y->n ? x->n : y->n;
	int c = memcmp(x->s, y->s, n);
	if (c)
		return c;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* Keys of a borrowed object, sorted by byte value; caller frees keys and array. */
static struct kv *sorted_keys(jv o, int *count)
{
	int n = jv_object_length(jv_copy(o));
	struct kv *ks = gl_xcalloc((size_t)n, sizeof *ks);
	int i = 0;
	jv_object_foreach(o, k, v)
	{
		jv_free(v);
		ks[i].k = k;
		ks[i].s = jv_string_value(k);
		ks[i].n = (size_t)jv_string_length_bytes(jv_copy(k));
		i++;
	}
	qsort(ks, (size_t)i, sizeof *ks, kv_cmp);
	*count = i;
	return ks;
}

void gl_json_dump(struct gl_buf *b, jv v)
{
	switch (jv_get_kind(v)) {
	case JV_KIND_NULL: gl_buf_adds(b, "null"); break;
	case JV_KIND_TRUE: gl_buf_adds(b, "true"); break;
	case JV_KIND_FALSE: gl_buf_adds(b, "false"); break;
	case JV_KIND_NUMBER: dump_number(b, jv_number_value(v)); break;
	case JV_KIND_STRING:
		gl_json_dump_string(b, jv_string_value(v), (size_t)jv_string_length_bytes(jv_copy(v)));
		break;
	case JV_KIND_ARRAY: {
		gl_buf_addc(b, '[');
		int n = jv_array_length(jv_copy(v));
		for (int i = 0; i < n; i++) {
			if (i)
				gl_buf_addc(b, ',');
			jv e = jv_array_get(jv_copy(v), i);
			gl_json_dump(b, e);
			jv_free(e);
		}
		gl_buf_addc(b, ']');
		break;
	}
	case JV_KIND_OBJECT: {
		/* Sorted keys: output is byte-identical for identical input. */
		int n;
		struct kv *ks = sorted_keys(v, &n);
		gl_buf_addc(b, '{');
		for (int i = 0; i < n; i++) {
			if (i)
				gl_buf_addc(b, ',');
			gl_json_dump_string(b, ks[i].s, ks[i].n);
			gl_buf_addc(b, ':');
			jv e = jv_object_get(jv_copy(v), jv_copy(ks[i].k));
			gl_json_dump(b, e);
			jv_free(e);
		}
		gl_buf_addc(b, '}');
		for (int i = 0; i < n; i++)
			jv_free(ks[i].k);
		free(ks);
		break;
	}
	default: gl_buf_adds(b, "null"); break;
	}
}

static int canon(struct gl_buf *b, jv v, bool ctl, struct gl_fail *f)
{
	switch (jv_get_kind(v)) {
	case JV_KIND_NULL: gl_buf_adds(b, "null"); return 0;
	case JV_KIND_TRUE: gl_buf_adds(b, "true"); return 0;
	case JV_KIND_FALSE: gl_buf_adds(b, "false"); return 0;
	case JV_KIND_NUMBER: {
		double d = jv_number_value(v);
		if (!isfinite(d) || d != floor(d)) {
			return gl_fail(f, GL_E_BAD_METADATA, "a float (%g) is not allowed in signed metadata", d);
		}
		if (fabs(d) > MAX_SAFE_INT) {
			return gl_fail(f, GL_E_BAD_METADATA, "integer %.0f is outside ±(2^53-1)", d);
		}
		gl_buf_printf(b, "%lld", (long long)d);
		return 0;
	}
	case JV_KIND_STRING: {
		const char *s = jv_string_value(v);
		size_t n = (size_t)jv_string_length_bytes(jv_copy(v));
		gl_buf_reserve(b, n + 2);
		gl_buf_addc(b, '"');
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)s[i];
			if (c < 0x20 && !ctl) {
				return gl_fail(f, GL_E_BAD_METADATA, "control character 0x%02x in a string", c);
			}
			if (c == '"' || c == '\\')
				gl_buf_addc(b, '\\');
			gl_buf_addc(b, (char)c);
		}
		gl_buf_addc(b, '"');
		return 0;
	}
	case JV_KIND_ARRAY: {
		gl_buf_addc(b, '[');
		int n = jv_array_length(jv_copy(v));
		for (int i = 0; i < n; i++) {
			if (i)
				gl_buf_addc(b, ',');
			jv e = jv_array_get(jv_copy(v), i);
			int r = canon(b, e, ctl, f);
			jv_free(e);
			if (r < 0)
				return -1;
		}
		gl_buf_addc(b, ']');
		return 0;
	}
	case JV_KIND_OBJECT: {
		int n, r = 0;
		struct kv *ks = sorted_keys(v, &n);
		gl_buf_addc(b, '{');
		for (int i = 0; i < n && r == 0; i++) {
			if (i)
				gl_buf_addc(b, ',');
			r = canon(b, ks[i].k, ctl, f);
			if (r == 0) {
				gl_buf_addc(b, ':');
				jv e = jv_object_get(jv_copy(v), jv_copy(ks[i].k));
				r = canon(b, e, ctl, f);
				jv_free(e);
			}
		}
		gl_buf_addc(b, '}');
		for (int i = 0; i < n; i++)
			jv_free(ks[i].k);
		free(ks);
		return r;
	}
	default:
		return gl_fail(f, GL_E_BAD_METADATA, "not a JSON value");
	}
}

int gl_canon_dump(struct gl_buf *b, jv v, struct gl_fail *f)
{
	return canon(b, v, false, f);
}

int gl_canon_dump_tuf(struct gl_buf *b, jv v, struct gl_fail *f)
{
	return canon(b, v, true, f);
}

jv gl_canon_parse(const char *buf, size_t len)
{
	jv v = gl_json_parse(buf, len);
	if (!jv_is_valid(v))
		return v;
	autobuf struct gl_buf c = {0};
	autofail struct gl_fail err = {0};
	if (gl_canon_dump(&c, v, &err) < 0) {
		jv_free(v);
		return jv_invalid_with_msg(jv_string_fmt("not canonical: %s", gl_fail_detail(&err)));
	}
	if (c.len != len || memcmp(c.data, buf, len)) {
		size_t i = 0;
		while (i < len && i < c.len && c.data[i] == buf[i])
			i++;
		jv_free(v);
		return jv_invalid_with_msg(
		    jv_string_fmt("not in canonical form (first difference at byte %zu)", i));
	}
	return v;
}

int gl_json_put(jv v, struct gl_fail *f)
{
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, v);
	jv_free(v);
	gl_buf_addc(&b, '\n');
	if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		return gl_fail_errno(f, GL_E_IO, "writing to stdout");
	return 0;
}

void gl_json_emit(jv v)
{
	autofail struct gl_fail f = {0};
	if (gl_json_put(v, &f) < 0)
		gl_fail_exit(&f);
}

static int emit_error(struct gl_fail *f, jv extra, const char *code, const char *fmt, ...)
    GL_PRINTF(4, 5);
static int emit_error(struct gl_fail *f, jv extra, const char *code, const char *fmt, ...)
{
	autofree char *detail = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&detail, fmt, ap) < 0)
		detail = NULL;
	va_end(ap);
	return gl_json_put(gl_fail_record(extra, code, detail), f); /* core/fail.h: the one builder */
}

void gl_json_emit_error(jv extra, const char *code, const char *fmt, ...)
{
	autofree char *detail = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&detail, fmt, ap) < 0)
		detail = NULL;
	va_end(ap);
	gl_json_emit(gl_fail_record(extra, code, detail)); /* core/fail.h: the one builder */
}

/* ---- JSON Lines ------------------------------------------------------ */

void gl_lines_init(struct gl_lines *r, int fd)
{
	r->fd = fd;
	r->pos = r->end = 0;
	r->eof = 0;
}

static int fill(struct gl_lines *r)
{
	if (r->eof)
		return 0;
	for (;;) {
		ssize_t n = read(r->fd, r->buf, sizeof r->buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			r->eof = 1;
			return 0;
		}
		r->pos = 0;
		r->end = (size_t)n;
		return 1;
	}
}

enum gl_line_status gl_lines_next(struct gl_lines *r, struct gl_buf *out, size_t cap)
{
	out->len = 0;
	int any = 0, toolong = 0;
	for (;;) {
		if (r->pos == r->end) {
			int f = fill(r);
			if (f < 0)
				return GL_LINE_IO;
			if (f == 0) {
				if (!any)
					return GL_LINE_EOF;
				break;
			}
		}
		any = 1;
		char *nl = memchr(r->buf + r->pos, '\n', r->end - r->pos);
		size_t n = nl ? (size_t)(nl - (r->buf + r->pos)) : r->end - r->pos;
		if (!toolong) {
			if (out->len + n > cap)
				toolong = 1;
			else
				gl_buf_add(out, r->buf + r->pos, n);
		}
		r->pos += n;
		if (nl) {
			r->pos++;
			break;
		}
	}
	gl_buf_reserve(out, 0);
	out->data[out->len] = 0;
	if (toolong)
		return GL_LINE_TOO_LONG; /* out: the line's first bytes (lib/json/jsonl.h) */
	return GL_LINE_OK;
}

int gl_lines_read(struct gl_lines *r, struct gl_buf *out, bool *failed, struct gl_fail *f)
{
	for (;;) {
		switch (gl_lines_next(r, out, GL_JSON_LINE_MAX)) {
		case GL_LINE_EOF:
			return 0;
		case GL_LINE_IO:
			return gl_fail_errno(f, GL_E_IO, "reading stdin");
		case GL_LINE_TOO_LONG:
			/* never a silently skipped record (SPEC §2): the answer
			 * names the release and id the line's first bytes give */
			if (emit_error(f, gl_jsonl_named(out->data, out->len), "too_long",
				       "line longer than %u bytes (the pipeline's line limit, "
				       "SPEC §2); not read",
				       GL_JSON_LINE_MAX) < 0)
				return -1;
			*failed = true;
			continue;
		case GL_LINE_OK:
			if (out->len != strspn(out->data, " \t\r"))
				return 1; /* a blank line is no record */
		}
	}
}

bool gl_lines_record(struct gl_lines *r, struct gl_buf *out, bool *failed)
{
	autofail struct gl_fail f = {0};
	int rc = gl_lines_read(r, out, failed, &f);
	if (rc < 0)
		gl_fail_exit(&f);
	return rc > 0;
}

/* ---- accessors ------------------------------------------------------- */

jv gl_json_get_or_null(jv obj, const char *key)
{
	jv v = gl_json_get(obj, key);
	return jv_is_valid(v) ? v : jv_null();
}

jv gl_json_array_find(jv a, const char *key, const char *value)
{
	jv found = jv_invalid();
	if (jv_get_kind(a) == JV_KIND_ARRAY)
		jv_array_foreach(a, i, e)
		{
			(void)i;
			const char *s = gl_json_get_str(e, key);
			if (!jv_is_valid(found) && s && !strcmp(s, value))
				found = jv_copy(e);
			jv_free(e);
		}
	return found;
}

char *gl_json_unknown_key(jv obj, const char *const *allowed)
{
	char *found = NULL;
	jv_object_foreach(obj, k, v)
	{
		bool known = false;
		for (size_t i = 0; allowed[i]; i++)
			known = known || strcmp(jv_string_value(k), allowed[i]) == 0;
		if (!known && !found)
			found = gl_quote(jv_string_value(k),
					 (size_t)jv_string_length_bytes(jv_copy(k)));
		jv_free(k);
		jv_free(v);
	}
	return found;
}

jv gl_json_get(jv obj, const char *key)
{
	if (jv_get_kind(obj) != JV_KIND_OBJECT)
		return jv_invalid();
	jv k = jv_string(key);
	if (!jv_object_has(jv_copy(obj), jv_copy(k))) {
		jv_free(k);
		return jv_invalid();
	}
	return jv_object_get(jv_copy(obj), k);
}

const char *gl_json_get_str(jv obj, const char *key)
{
	jv v = gl_json_get(obj, key);
	if (jv_get_kind(v) != JV_KIND_STRING) {
		jv_free(v);
		return NULL;
	}
	const char *s = jv_string_value(v);
	jv_free(v); /* obj still holds a reference to the same string */
	return s;
}

int gl_json_get_bool(jv obj, const char *key, int dflt)
{
	jv v = gl_json_get(obj, key);
	jv_kind k = jv_get_kind(v);
	jv_free(v);
	return k == JV_KIND_TRUE ? 1 : k == JV_KIND_FALSE ? 0 : dflt;
}

int gl_json_get_int(jv obj, const char *key, int64_t *out)
{
	jv v = gl_json_get(obj, key);
	if (jv_get_kind(v) != JV_KIND_NUMBER) {
		jv_free(v);
		return -1;
	}
	double d = jv_number_value(v);
	jv_free(v);
	if (d != floor(d) || fabs(d) > MAX_SAFE_INT)
		return -1;
	*out = (int64_t)d;
	return 0;
}

int gl_json_is_str_array(jv v)
{
	if (jv_get_kind(v) != JV_KIND_ARRAY)
		return 0;
	int ok = 1;
	jv_array_foreach(v, i, e)
	{
		(void)i;
		if (jv_get_kind(e) != JV_KIND_STRING)
			ok = 0;
		jv_free(e);
	}
	return ok;
}
