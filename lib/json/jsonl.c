/* jsonl.c — one line limit along the pipeline; see jsonl.h. */
#define _GNU_SOURCE
#include "json/jsonl.h"

#include <stdio.h>
#include <string.h>

#include "json/json.h"
#include "json/refusal.h"

/* Within the depth every stage reads (lib/json/json.h)? Unchecked in a test
 * build with GL_TEST_DEPTH_OFF=1: the record gl-run wrote before. */
static bool depth_fits(jv v)
{
	return gl_json_depth_off() || gl_json_depth(v, GL_JSON_MAX_DEPTH) <= GL_JSON_MAX_DEPTH;
}

/* Within the line and node limits every stage reads (lib/json/json.h)? The
 * nodes are counted on the text as the readers count them. */
static bool text_fits(const struct gl_buf *b)
{
	return b->len <= GL_JSON_LINE_MAX &&
	       (gl_json_nodes_off() || gl_json_nodes(b->data, b->len, GL_JSON_NODES_MAX) <= GL_JSON_NODES_MAX);
}

int gl_jsonl_put(jv v, struct gl_fail *f)
{
	if (!depth_fits(v)) {
		jv_free(v);
		return 0;
	}
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, v);
	jv_free(v);
	if (!text_fits(&b))
		return 0;
	gl_buf_addc(&b, '\n');
	if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		return gl_fail_errno(f, GL_E_IO, "writing to stdout");
	return 1;
}

bool gl_jsonl_emit(jv v)
{
	autofail struct gl_fail f = {0};
	int rc = gl_jsonl_put(v, &f);
	if (rc < 0)
		gl_fail_exit(&f);
	return rc > 0;
}

bool gl_jsonl_fits(jv v)
{
	if (!depth_fits(v))
		return false;
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, v);
	return text_fits(&b);
}

static size_t ws(const char *b, size_t n, size_t i)
{
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
		i++;
	return i;
}

/* The end of the string opening at b[i] ('"'), or 0 when it is cut. */
static size_t str_end(const char *b, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (b[i] == '\\')
			i++;
		else if (b[i] == '"')
			return i + 1;
	}
	return 0;
}

/* The end of the value starting at b[i], or 0 when it is cut. */
static size_t value_end(const char *b, size_t n, size_t i)
{
	if (b[i] == '"')
		return str_end(b, n, i);
	if (b[i] == '{' || b[i] == '[') {
		size_t depth = 0;
		for (; i < n; i++) {
			char c = b[i];
			if (c == '"') {
				size_t e = str_end(b, n, i);
				if (!e)
					return 0;
				i = e - 1;
			} else if (c == '{' || c == '[') {
				depth++;
			} else if ((c == '}' || c == ']') && --depth == 0) {
				return i + 1;
			}
		}
		return 0;
	}
	size_t s = i; /* a number, true, false or null: up to a delimiter */
	while (i < n && !memchr(",}] \t\r\n", b[i], 7))
		i++;
	return i < n && i > s ? i : 0;
}

bool gl_jsonl_field(const char *b, size_t n, const char *key, size_t *vs, size_t *ve)
{
	size_t klen = strlen(key);
	size_t i = ws(b, n, 0);
	if (i >= n || b[i] != '{')
		return false;
	for (i++;;) {
		i = ws(b, n, i);
		if (i >= n || b[i] != '"')
			return false;
		size_t ke = str_end(b, n, i);
		if (!ke)
			return false;
		bool match = ke - i - 2 == klen && !memcmp(b + i + 1, key, klen);
		i = ws(b, n, ke);
		if (i >= n || b[i] != ':')
			return false;
		i = ws(b, n, i + 1);
		if (i >= n)
			return false;
		size_t e = value_end(b, n, i);
		if (!e)
			return false;
		if (match) {
			*vs = i;
			*ve = e;
			return true;
		}
		i = ws(b, n, e);
		if (i >= n || b[i] != ',')
			return false;
		i++;
	}
}

/* The value of key when it is short and parses (owned), else invalid. */
static jv small_field(const char *b, size_t n, const char *key)
{
	size_t vs, ve;
	if (!gl_jsonl_field(b, n, key, &vs, &ve) || ve - vs > 1024)
		return jv_invalid();
	return gl_json_parse(b + vs, ve - vs);
}

jv gl_jsonl_named(const char *b, size_t n)
{
	jv out = jv_object();
	jv rel = small_field(b, n, "release");
	if (jv_get_kind(rel) == JV_KIND_STRING &&
	    gl_sha256_hex_ok(jv_string_value(rel), (size_t)jv_string_length_bytes(jv_copy(rel))))
		out = jv_object_set(out, jv_string("release"), jv_copy(rel));
	jv_free(rel);
	jv id = small_field(b, n, "id");
	if ((jv_get_kind(id) == JV_KIND_STRING && jv_string_length_bytes(jv_copy(id)) <= 256) ||
	    jv_get_kind(id) == JV_KIND_NUMBER)
		out = jv_object_set(out, jv_string("id"), jv_copy(id));
	jv_free(id);
	return out;
}

jv gl_jsonl_oversized_result(jv rec)
{
	static const char *const keep[] = {"id",	  "release",	 "function", "mode",
					   "copies",	  "receipts",	 "receipts_signature",
					   "enforcement", "elapsed_ms", "triggers",
					   "triggers_signature"};
	jv out = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
			   jv_string(GL_ERR_OVERSIZED), jv_string("detail"),
			   jv_string("the result record would be longer than the pipeline's line "
				     "limit of 16 MiB or deeper than its depth limit of 64 (SPEC "
				     "§2): every value is withheld"));
	for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
		jv v = gl_json_get(rec, keep[i]);
		if (jv_is_valid(v))
			out = jv_object_set(out, jv_string(keep[i]), v);
		else
			jv_free(v);
	}
	jv res = gl_json_get(rec, "results"), withheld = jv_array();
	if (jv_get_kind(res) == JV_KIND_ARRAY) {
		jv_array_foreach(res, i, r)
		{
			jv c = gl_json_get(r, "consumer");
			if (!jv_is_valid(c))
				c = jv_null();
			withheld = jv_array_append(
			    withheld, JV_OBJECT(jv_string("consumer"), c, jv_string("ok"), jv_false(),
						jv_string("error"), jv_string(GL_ERR_OVERSIZED)));
			jv_free(r);
		}
	}
	jv_free(res);
	out = jv_object_set(out, jv_string("results"), withheld);
	jv_free(rec);
	if (!gl_jsonl_fits(out)) { /* only if the triggers alone are too many */
		jv t = gl_json_get(out, "triggers");
		int n = jv_get_kind(t) == JV_KIND_ARRAY ? jv_array_length(t) : (jv_free(t), 0);
		out = jv_object_delete(out, jv_string("triggers"));
		out = jv_object_set(out, jv_string("triggers_withheld"), jv_number(n));
	}
	return out;
}
