/* json.c — strict JSON reader and the two writers; see json.h. */
#define _GNU_SOURCE
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- reader ---------------------------------------------------------- */

struct parser {
	const unsigned char *p, *s, *end;
	int depth;
	char err[160];
};

static void perr(struct parser *ps, const char *what)
{
	if (!ps->err[0])
		snprintf(ps->err, sizeof ps->err, "%s at byte %zu", what,
			 (size_t)(ps->p - ps->s));
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 (RFC 3629: no
 * overlongs, no surrogates, nothing above U+10FFFF). */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	int n;
	unsigned min;
	if ((c & 0xe0) == 0xc0)
		n = 2, min = 0x80, c &= 0x1f;
	else if ((c & 0xf0) == 0xe0)
		n = 3, min = 0x800, c &= 0x0f;
	else if ((c & 0xf8) == 0xf0)
		n = 4, min = 0x10000, c &= 0x07;
	else
		return 0;
	if (end - p < n)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

static int hex4(const unsigned char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = p[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct gl_buf *b, unsigned c)
{
	char o[4];
	int n;
	if (c < 0x80)
		o[0] = (char)c, n = 1;
	else if (c < 0x800)
		o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), n = 2;
	else if (c < 0x10000)
		o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
		o[2] = (char)(0x80 | (c & 0x3f)), n = 3;
	else
		o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | ((c >> 12) & 0x3f)),
		o[2] = (char)(0x80 | ((c >> 6) & 0x3f)), o[3] = (char)(0x80 | (c & 0x3f)), n = 4;
	gl_buf_add(b, o, (size_t)n);
}

/* Parses a string at ps->p (which is '"'); returns owned jv string or invalid. */
static jv parse_string(struct parser *ps, struct gl_buf *tmp)
{
	tmp->len = 0;
	ps->p++; /* opening quote */
	for (;;) {
		if (ps->p >= ps->end) {
			perr(ps, "unterminated string");
			return jv_invalid();
		}
		unsigned c = *ps->p;
		if (c == '"') {
			ps->p++;
			if (tmp->len > INT32_MAX) {
				perr(ps, "string too long");
				return jv_invalid();
			}
			return jv_string_sized(tmp->data ? tmp->data : "", (int)tmp->len);
		}
		if (c < 0x20) {
			perr(ps, "control character in string");
			return jv_invalid();
		}
		if (c == '\\') {
			if (ps->end - ps->p < 2) {
				perr(ps, "unterminated escape");
				return jv_invalid();
			}
			unsigned e = ps->p[1];
			ps->p += 2;
			switch (e) {
			case '"': gl_buf_addc(tmp, '"'); break;
			case '\\': gl_buf_addc(tmp, '\\'); break;
			case '/': gl_buf_addc(tmp, '/'); break;
			case 'b': gl_buf_addc(tmp, '\b'); break;
			case 'f': gl_buf_addc(tmp, '\f'); break;
			case 'n': gl_buf_addc(tmp, '\n'); break;
			case 'r': gl_buf_addc(tmp, '\r'); break;
			case 't': gl_buf_addc(tmp, '\t'); break;
			case 'u': {
				unsigned u, lo;
				if (ps->end - ps->p < 4 || hex4(ps->p, &u) < 0) {
					perr(ps, "bad \\u escape");
					return jv_invalid();
				}
				ps->p += 4;
				if (u >= 0xdc00 && u <= 0xdfff) {
					perr(ps, "lone low surrogate");
					return jv_invalid();
				}
				if (u >= 0xd800 && u <= 0xdbff) {
					if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
					    hex4(ps->p + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
						perr(ps, "lone high surrogate");
						return jv_invalid();
					}
					ps->p += 6;
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				}
				if (u == 0) {
					perr(ps, "NUL in string");
					return jv_invalid();
				}
				put_utf8(tmp, u);
				break;
			}
			default:
				ps->p--;
				perr(ps, "bad escape");
				return jv_invalid();
			}
			continue;
		}
		/* Copy a run of plain bytes, validating UTF-8. */
		const unsigned char *start = ps->p;
		while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' && *ps->p >= 0x20) {
			int n = utf8_len(ps->p, ps->end);
			if (!n) {
				perr(ps, "invalid UTF-8");
				return jv_invalid();
			}
			ps->p += n;
		}
		gl_buf_add(tmp, start, (size_t)(ps->p - start));
	}
}

static jv parse_number(struct parser *ps)
{
	const unsigned char *q = ps->p;
	if (q < ps->end && *q == '-')
		q++;
	if (q >= ps->end || *q < '0' || *q > '9') {
		perr(ps, "bad number");
		return jv_invalid();
	}
	if (*q == '0')
		q++;
	else
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	if (q < ps->end && *q == '.') {
		q++;
		if (q >= ps->end || *q < '0' || *q > '9') {
			perr(ps, "bad number");
			return jv_invalid();
		}
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || *q < '0' || *q > '9') {
			perr(ps, "bad number");
			return jv_invalid();
		}
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	size_t n = (size_t)(q - ps->p);
	char small[64];
	char *tmp = n < sizeof small ? small : gl_xmalloc(n + 1);
	memcpy(tmp, ps->p, n);
	tmp[n] = 0;
	errno = 0;
	double d = strtod(tmp, NULL);
	int bad = errno == ERANGE && isinf(d);
	if (tmp != small)
		free(tmp);
	if (bad || !isfinite(d)) {
		perr(ps, "number out of range");
		return jv_invalid();
	}
	ps->p = q;
	return jv_number(d);
}

static int lit(struct parser *ps, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n))
		return 0;
	ps->p += n;
	return 1;
}

static jv parse_value(struct parser *ps, struct gl_buf *tmp)
{
	skip_ws(ps);
	if (ps->p >= ps->end) {
		perr(ps, "unexpected end of input");
		return jv_invalid();
	}
	switch (*ps->p) {
	case '"':
		return parse_string(ps, tmp);
	case 't':
		if (lit(ps, "true"))
			return jv_true();
		break;
	case 'f':
		if (lit(ps, "false"))
			return jv_false();
		break;
	case 'n':
		if (lit(ps, "null"))
			return jv_null();
		break;
	case '[': {
		if (++ps->depth > GL_JSON_MAX_DEPTH) {
			perr(ps, "nesting too deep");
			return jv_invalid();
		}
		ps->p++;
		jv a = jv_array();
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			ps->depth--;
			return a;
		}
		for (;;) {
			jv v = parse_value(ps, tmp);
			if (!jv_is_valid(v)) {
				jv_free(a);
				return v;
			}
			a = jv_array_append(a, v);
			skip_ws(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				continue;
			}
			if (ps->p < ps->end && *ps->p == ']') {
				ps->p++;
				ps->depth--;
				return a;
			}
			jv_free(a);
			perr(ps, "expected ',' or ']'");
			return jv_invalid();
		}
	}
	case '{': {
		if (++ps->depth > GL_JSON_MAX_DEPTH) {
			perr(ps, "nesting too deep");
			return jv_invalid();
		}
		ps->p++;
		jv o = jv_object();
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			ps->depth--;
			return o;
		}
		for (;;) {
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != '"') {
				jv_free(o);
				perr(ps, "expected a string key");
				return jv_invalid();
			}
			const unsigned char *kat = ps->p;
			jv k = parse_string(ps, tmp);
			if (!jv_is_valid(k)) {
				jv_free(o);
				return k;
			}
			if (jv_object_has(jv_copy(o), jv_copy(k))) {
				jv_free(k);
				jv_free(o);
				ps->p = kat;
				perr(ps, "duplicate key");
				return jv_invalid();
			}
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				jv_free(k);
				jv_free(o);
				perr(ps, "expected ':'");
				return jv_invalid();
			}
			ps->p++;
			jv v = parse_value(ps, tmp);
			if (!jv_is_valid(v)) {
				jv_free(k);
				jv_free(o);
				return v;
			}
			o = jv_object_set(o, k, v);
			skip_ws(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				continue;
			}
			if (ps->p < ps->end && *ps->p == '}') {
				ps->p++;
				ps->depth--;
				return o;
			}
			jv_free(o);
			perr(ps, "expected ',' or '}'");
			return jv_invalid();
		}
	}
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps);
	}
	perr(ps, "unexpected character");
	return jv_invalid();
}

jv gl_json_parse(const char *buf, size_t len)
{
	struct parser ps = {.p = (const unsigned char *)buf,
			    .s = (const unsigned char *)buf,
			    .end = (const unsigned char *)buf + len};
	autobuf struct gl_buf tmp = {0};
	jv v = parse_value(&ps, &tmp);
	if (jv_is_valid(v)) {
		skip_ws(&ps);
		if (ps.p != ps.end) {
			jv_free(v);
			perr(&ps, "trailing bytes after the value");
			v = jv_invalid();
		}
	}
	if (!jv_is_valid(v)) {
		jv_free(v);
		if (!ps.err[0])
			perr(&ps, "invalid JSON");
		return jv_invalid_with_msg(jv_string(ps.err));
	}
	return v;
}

/* ---- writers --------------------------------------------------------- */

#define MAX_SAFE_INT 9007199254740991.0

static void dump_number(struct gl_buf *b, double d)
{
	if (!isfinite(d)) {
		gl_buf_adds(b, "null");
		return;
	}
	if (d == floor(d) && fabs(d) <= MAX_SAFE_INT) {
		gl_buf_printf(b, "%lld", (long long)d);
		return;
	}
	char s[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	gl_buf_adds(b, s);
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

static int canon(struct gl_buf *b, jv v, char **err)
{
	switch (jv_get_kind(v)) {
	case JV_KIND_NULL: gl_buf_adds(b, "null"); return 0;
	case JV_KIND_TRUE: gl_buf_adds(b, "true"); return 0;
	case JV_KIND_FALSE: gl_buf_adds(b, "false"); return 0;
	case JV_KIND_NUMBER: {
		double d = jv_number_value(v);
		if (!isfinite(d) || d != floor(d)) {
			*err = gl_xasprintf("a float (%g) is not allowed in signed metadata", d);
			return -1;
		}
		if (fabs(d) > MAX_SAFE_INT) {
			*err = gl_xasprintf("integer %.0f is outside ±(2^53-1)", d);
			return -1;
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
			if (c < 0x20) {
				*err = gl_xasprintf("control character 0x%02x in a string", c);
				return -1;
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
			int r = canon(b, e, err);
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
			r = canon(b, ks[i].k, err);
			if (r == 0) {
				gl_buf_addc(b, ':');
				jv e = jv_object_get(jv_copy(v), jv_copy(ks[i].k));
				r = canon(b, e, err);
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
		*err = gl_xstrdup("not a JSON value");
		return -1;
	}
}

int gl_canon_dump(struct gl_buf *b, jv v, char **err)
{
	*err = NULL;
	return canon(b, v, err);
}

jv gl_canon_parse(const char *buf, size_t len)
{
	jv v = gl_json_parse(buf, len);
	if (!jv_is_valid(v))
		return v;
	autobuf struct gl_buf c = {0};
	autofree char *err = NULL;
	if (gl_canon_dump(&c, v, &err) < 0) {
		jv_free(v);
		return jv_invalid_with_msg(jv_string_fmt("not canonical: %s", err));
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

void gl_json_emit(jv v)
{
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, v);
	jv_free(v);
	gl_buf_addc(&b, '\n');
	if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		gl_die_errno(GL_EXIT_USAGE, "writing to stdout");
}

void gl_json_emit_error(jv extra, const char *code, const char *fmt, ...)
{
	autofree char *detail = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&detail, fmt, ap) < 0)
		detail = NULL;
	va_end(ap);
	jv o = jv_get_kind(extra) == JV_KIND_OBJECT ? extra : (jv_free(extra), jv_object());
	o = jv_object_set(o, jv_string("ok"), jv_false());
	o = jv_object_set(o, jv_string("error"), jv_string(code));
	/* detail may hold bytes from untrusted input: keep it valid UTF-8. */
	autofree char *safe = detail ? gl_sanitize(detail, strlen(detail)) : gl_xstrdup("");
	o = jv_object_set(o, jv_string("detail"), jv_string(safe));
	gl_json_emit(o);
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
	if (toolong) {
		out->len = 0;
		out->data[0] = 0;
		return GL_LINE_TOO_LONG;
	}
	return GL_LINE_OK;
}

bool gl_lines_record(struct gl_lines *r, struct gl_buf *out, bool *failed)
{
	for (;;) {
		switch (gl_lines_next(r, out, GL_JSON_LINE_MAX)) {
		case GL_LINE_EOF:
			return false;
		case GL_LINE_IO:
			gl_die_errno(GL_EXIT_USAGE, "reading stdin");
		case GL_LINE_TOO_LONG:
			gl_json_emit_error(jv_null(), "too_long", "line longer than %u bytes",
					   GL_JSON_LINE_MAX);
			*failed = true;
			continue;
		case GL_LINE_OK:
			if (out->len != strspn(out->data, " \t\r"))
				return true; /* a blank line is no record */
		}
	}
}

/* ---- accessors ------------------------------------------------------- */

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
