/* json_read.c — the strict JSON reader; see json.h. */
#define _GNU_SOURCE
#include "json/json.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- reader ---------------------------------------------------------- */

struct parser {
	const unsigned char *p, *s, *end;
	int depth;
	bool raw_ctl; /* control characters allowed verbatim in strings (TUF) */
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

/* Parses a string at ps->p (which is '"'); returns owned jv string or invalid.
 * long: one pass over the bytes with RFC 8259's escapes and UTF-8's rules in
 * one loop, read top to bottom; split, the bound checks would be repeated. */
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
		if (c < 0x20 && (!ps->raw_ctl || c == 0)) {
			perr(ps, c ? "control character in string" : "NUL in string");
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
		while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' &&
		       (*ps->p >= 0x20 || (ps->raw_ctl && *ps->p))) {
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

/* Decimal form of a number's text s[0..len) (JSON's grammar, or the %g
 * gl_json_number_text writes): value = 0.DIG × 10^exp, DIG without leading
 * or trailing zeros; *n counts its digits (only the first 17 are kept, at
 * dig; more than 17 is never a double's text). *n == 0: the value is 0. */
static void dec_form(const char *s, size_t len, char dig[17], size_t *n, long *exp)
{
	size_t i = 0, intlen = 0, k = 0, nz = 0; /* nz: digits up to the last nonzero */
	long first = -1;                         /* index of the first nonzero digit */
	bool frac = false;
	if (i < len && s[i] == '-')
		i++;
	for (; i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); i++) {
		if (s[i] == '.') {
			frac = true;
			continue;
		}
		if (!frac)
			intlen++;
		if (s[i] != '0' && first < 0)
			first = (long)k;
		if (first >= 0) {
			size_t at = k - (size_t)first;
			if (at < 17)
				dig[at] = s[i];
			if (s[i] != '0')
				nz = at + 1;
		}
		k++;
	}
	long e = 0;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		bool neg = ++i < len && s[i] == '-';
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		e = neg ? -e : e;
	}
	*n = nz;
	*exp = first < 0 ? 0 : (long)intlen - first + e;
}

/* Does the number text s[0..len), read as d, pass the pipeline exactly
 * (json.h; docs/pipeline.md "Numbers")? NULL, or why not. */
static const char *number_inexact(const char *s, size_t len, double d)
{
	bool lit_int = !memchr(s, '.', len) && !memchr(s, 'e', len) && !memchr(s, 'E', len);
	if (lit_int)
		return fabs(d) <= 9007199254740991.0 ? NULL : "an integer literal outside +-(2^53-1)";
	char dig[17], wdig[17], w[40];
	size_t n, wn;
	long exp, wexp;
	dec_form(s, len, dig, &n, &exp);
	if (n == 0)
		return NULL; /* zero, which every double zero writes back as */
	if (d == 0)
		return "a nonzero number that reads as 0";
	/* up to 15 significant digits in the normal range: the double's
	 * %.15g is the same decimal (DBL_DIG), no need to write it */
	if (n <= 15 && fabs(d) >= DBL_MIN)
		return NULL;
	if (n > 17)
		return "more significant digits than a double keeps";
	gl_json_number_text(d, w);
	dec_form(w, strlen(w), wdig, &wn, &wexp);
	if (wn != n || wexp != exp || memcmp(dig, wdig, n))
		return "a number the pipeline would write back as another";
	return NULL;
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
	const char *why = number_inexact((const char *)ps->p, n, d);
	if (why) {
		char m[120];
		snprintf(m, sizeof m, "number not exact in the pipeline (%s)", why);
		perr(ps, m);
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

/* One value at ps->p: owned, or invalid with ps->err set.
 * long: one switch over the six kinds of RFC 8259 value, with the node and
 * depth bounds checked where a value opens (the broker's bound, issue 15);
 * each case is short and they read best side by side. */
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

/* ---- the node bound (json.h) ---------------------------------------------- */

size_t gl_json_nodes(const char *buf, size_t len, size_t cap)
{
	const unsigned char *p = (const unsigned char *)buf, *end = p + len;
	size_t n = 0;
	bool in_scalar = false; /* inside a number or literal: counted at its start */
	while (p < end && n <= cap) {
		unsigned c = *p++;
		switch (c) {
		case '"':
			n++;
			in_scalar = false;
			while (p < end) { /* to the closing quote; an escape skips one byte */
				unsigned d = *p++;
				if (d == '\\')
					p += p < end;
				else if (d == '"')
					break;
			}
			break;
		case '[':
		case '{':
			n += GL_JSON_CONTAINER_WEIGHT;
			in_scalar = false;
			break;
		case ']': case '}': case ',': case ':': case ' ': case '\t': case '\n': case '\r':
			in_scalar = false;
			break;
		default:
			if (!in_scalar)
				n++;
			in_scalar = true;
		}
	}
	return n;
}

bool gl_json_nodes_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_NODES_OFF"); /* test build only: jv built whatever it costs */
}

static jv parse_doc(const char *buf, size_t len, bool raw_ctl);

static jv parse_bounded(const char *buf, size_t len, bool raw_ctl)
{
	size_t cap = gl_json_nodes_off() ? SIZE_MAX : GL_JSON_NODES_MAX;
	if (cap != SIZE_MAX && gl_json_nodes(buf, len, cap) > cap)
		return jv_invalid_with_msg(jv_string_fmt(
		    "more than %u JSON nodes (an array or object weighs %d; lib/json/json.h)",
		    GL_JSON_NODES_MAX, GL_JSON_CONTAINER_WEIGHT));
	return parse_doc(buf, len, raw_ctl);
}

jv gl_json_parse(const char *buf, size_t len)
{
	return parse_bounded(buf, len, false);
}

jv gl_json_parse_tuf(const char *buf, size_t len)
{
	return parse_bounded(buf, len, true);
}

jv gl_json_parse_unbounded(const char *buf, size_t len)
{
	return parse_doc(buf, len, false);
}

static jv parse_doc(const char *buf, size_t len, bool raw_ctl)
{
	struct parser ps = {.p = (const unsigned char *)buf,
			    .s = (const unsigned char *)buf,
			    .end = (const unsigned char *)buf + len,
			    .raw_ctl = raw_ctl};
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
