/* jsonschema.c — the small strict JSON Schema check of MCP tool arguments;
 * see jsonschema.h. */
#define _GNU_SOURCE
#include "json/jsonschema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "json/json.h"
#include "core/util.h"

struct ctx {
	char path[GL_SCHEMA_PATH_MAX + 8];
	size_t len;
	long work;
	struct gl_fail *f;
};

/* Does v have JSON Schema type t? false for a name outside type_names. */
static bool has_type(const char *t, jv v)
{
	jv_kind k = jv_get_kind(v);
	if (!strcmp(t, "null"))
		return k == JV_KIND_NULL;
	if (!strcmp(t, "boolean"))
		return k == JV_KIND_TRUE || k == JV_KIND_FALSE;
	if (!strcmp(t, "object"))
		return k == JV_KIND_OBJECT;
	if (!strcmp(t, "array"))
		return k == JV_KIND_ARRAY;
	if (!strcmp(t, "string"))
		return k == JV_KIND_STRING;
	if (!strcmp(t, "number"))
		return k == JV_KIND_NUMBER;
	if (!strcmp(t, "integer")) {
		double d = k == JV_KIND_NUMBER ? jv_number_value(v) : NAN;
		return isfinite(d) && d == floor(d);
	}
	return false;
}

/* "path: what" into f, bad_args (the path is ours, built from sanitised names). */
static int fail(struct ctx *c, const char *fmt, ...) GL_PRINTF(2, 3);
static int fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	autofree char *what = NULL;
	if (vasprintf(&what, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	autofree char *safe = gl_sanitize(what, strnlen(what, 200));
	return gl_fail(c->f, GL_E_BAD_ARGS, "%.*s: %s", (int)c->len, c->path, safe);
}

/* Push ".name", "[\"name\"]" or "[i]" onto the path; returns the length
 * to pop back to. A path at its cap ends in "…" and grows no more. */
static size_t push(struct ctx *c, const char *name, int index)
{
	size_t was = c->len;
	if (c->len >= GL_SCHEMA_PATH_MAX)
		return was;
	char seg[GL_SCHEMA_PATH_MAX];
	if (!name) {
		snprintf(seg, sizeof seg, "[%d]", index);
	} else {
		size_t n = strlen(name);
		bool plain = n && n <= 64 && !(name[0] >= '0' && name[0] <= '9');
		for (size_t i = 0; plain && i < n; i++)
			plain = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
				(name[i] >= '0' && name[i] <= '9') || name[i] == '_' || name[i] == '-';
		if (plain) {
			snprintf(seg, sizeof seg, ".%s", name);
		} else {
			autofree char *s = gl_sanitize(name, strnlen(name, 64));
			snprintf(seg, sizeof seg, "[\"%.64s%s\"]", s, n > 64 ? "…" : "");
		}
	}
	size_t sl = strlen(seg);
	if (c->len + sl > GL_SCHEMA_PATH_MAX) {
		memcpy(c->path + c->len, "…", sizeof "…");
		c->len = GL_SCHEMA_PATH_MAX;
		return was;
	}
	memcpy(c->path + c->len, seg, sl + 1);
	c->len += sl;
	return was;
}

static void pop(struct ctx *c, size_t to)
{
	c->len = to;
	c->path[to] = 0;
}

static int check(struct ctx *c, jv schema, jv v, int depth);

/* "type": a name or an array of names. */
static int check_type(struct ctx *c, jv t, jv v)
{
	if (jv_get_kind(t) == JV_KIND_STRING)
		return has_type(jv_string_value(t), v) ? 0 : fail(c, "expected %s", jv_string_value(t));
	if (jv_get_kind(t) != JV_KIND_ARRAY)
		return 0; /* a malformed "type": ignored like an unknown keyword */
	c->work += jv_array_length(jv_copy(t));
	if (c->work > GL_SCHEMA_WORK_MAX)
		return fail(c, "the inputSchema check took more than %d steps (refused)",
			    GL_SCHEMA_WORK_MAX);
	bool ok = false;
	struct gl_buf names = {0};
	int shown = 0;
	jv_array_foreach(t, i, n)
	{
		(void)i;
		if (jv_get_kind(n) == JV_KIND_STRING) {
			ok |= has_type(jv_string_value(n), v);
			if (shown < 8)
				gl_buf_printf(&names, "%s%.16s", shown ? " or " : "", jv_string_value(n));
			shown++;
		}
		jv_free(n);
	}
	int r = ok || !shown ? 0 : fail(c, "expected %s", names.data);
	free(names.data);
	return r;
}

/* "enum" and "const". */
static int check_enum(struct ctx *c, jv schema, jv v)
{
	jv e = gl_json_get(schema, "enum");
	int r = 0;
	if (jv_get_kind(e) == JV_KIND_ARRAY) {
		/* each comparison is work: a long enum under "items" must not
		 * multiply by a long array unbounded */
		c->work += jv_array_length(jv_copy(e));
		if (c->work > GL_SCHEMA_WORK_MAX) {
			jv_free(e);
			return fail(c, "the inputSchema check took more than %d steps (refused)",
				    GL_SCHEMA_WORK_MAX);
		}
		bool found = false;
		jv_array_foreach(e, i, x)
		{
			(void)i;
			found = found || jv_equal(jv_copy(x), jv_copy(v));
			jv_free(x);
		}
		if (!found)
			r = fail(c, "not one of the values the schema's enum allows");
	}
	jv_free(e);
	if (r || !jv_object_has(jv_copy(schema), jv_string("const")))
		return r;
	jv k = gl_json_get(schema, "const");
	if (!jv_equal(k, jv_copy(v)))
		r = fail(c, "not the value the schema's const requires");
	return r;
}

/* "required", "properties", "additionalProperties" of an object value. */
static int check_object(struct ctx *c, jv schema, jv v, int depth)
{
	int r = 0;
	jv req = gl_json_get(schema, "required");
	if (jv_get_kind(req) == JV_KIND_ARRAY)
		c->work += jv_array_length(jv_copy(req));
	if (c->work > GL_SCHEMA_WORK_MAX) {
		jv_free(req);
		return fail(c, "the inputSchema check took more than %d steps (refused)",
			    GL_SCHEMA_WORK_MAX);
	}
	if (jv_get_kind(req) == JV_KIND_ARRAY)
		jv_array_foreach(req, i, n)
		{
			(void)i;
			if (!r && jv_get_kind(n) == JV_KIND_STRING &&
			    !jv_object_has(jv_copy(v), jv_copy(n)))
			{
				autofree char *q = gl_quote(jv_string_value(n),
							    (size_t)jv_string_length_bytes(jv_copy(n)));
				r = fail(c, "missing required property %s", q);
			}
			jv_free(n);
		}
	jv_free(req);
	jv props = gl_json_get(schema, "properties");
	jv addl = gl_json_get(schema, "additionalProperties");
	bool patterns = jv_object_has(jv_copy(schema), jv_string("patternProperties"));
	jv keys = r ? jv_array() : jv_keys(jv_copy(v)); /* sorted: the first error is stable */
	jv_array_foreach(keys, i, k)
	{
		(void)i;
		if (r) {
			jv_free(k);
			continue;
		}
		jv sub = jv_get_kind(props) == JV_KIND_OBJECT && jv_object_has(jv_copy(props), jv_copy(k))
			     ? jv_object_get(jv_copy(props), jv_copy(k))
			     : jv_invalid();
		size_t at = push(c, jv_string_value(k), 0);
		jv m = jv_object_get(jv_copy(v), jv_copy(k));
		if (jv_is_valid(sub))
			r = check(c, sub, m, depth + 1);
		else if (jv_get_kind(addl) == JV_KIND_FALSE && !patterns)
			r = fail(c, "not allowed (the schema's additionalProperties is false)");
		else if (jv_get_kind(addl) == JV_KIND_OBJECT && !patterns)
			r = check(c, addl, m, depth + 1);
		jv_free(m);
		jv_free(sub);
		pop(c, at);
		jv_free(k);
	}
	jv_free(keys);
	jv_free(props);
	jv_free(addl);
	return r;
}

/* "items" (one schema) of an array value. */
static int check_array(struct ctx *c, jv schema, jv v, int depth)
{
	jv items = gl_json_get(schema, "items");
	int r = 0;
	if (jv_get_kind(items) == JV_KIND_OBJECT || jv_get_kind(items) == JV_KIND_FALSE)
		jv_array_foreach(v, i, x)
		{
			if (!r) {
				size_t at = push(c, NULL, i);
				r = check(c, items, x, depth + 1);
				pop(c, at);
			}
			jv_free(x);
		}
	jv_free(items);
	return r;
}

static int check(struct ctx *c, jv schema, jv v, int depth)
{
	if (++c->work > GL_SCHEMA_WORK_MAX)
		return fail(c, "the inputSchema check took more than %d steps (refused)",
			    GL_SCHEMA_WORK_MAX);
	if (depth > GL_SCHEMA_DEPTH_MAX)
		return fail(c, "the inputSchema is nested deeper than %d levels (refused)",
			    GL_SCHEMA_DEPTH_MAX);
	jv_kind sk = jv_get_kind(schema);
	if (sk == JV_KIND_FALSE)
		return fail(c, "not allowed by the schema (false)");
	if (sk != JV_KIND_OBJECT)
		return 0; /* true, or a malformed schema: nothing to check */
	jv t = gl_json_get(schema, "type");
	int r = check_type(c, t, v);
	jv_free(t);
	if (!r)
		r = check_enum(c, schema, v);
	if (!r && jv_get_kind(v) == JV_KIND_OBJECT)
		r = check_object(c, schema, v, depth);
	if (!r && jv_get_kind(v) == JV_KIND_ARRAY)
		r = check_array(c, schema, v, depth);
	return r;
}

int gl_schema_check(jv schema, jv value, const char *root, struct gl_fail *f)
{
	struct ctx c = {.f = f};
	snprintf(c.path, sizeof c.path, "%.64s", root ? root : "value");
	c.len = strlen(c.path);
	return check(&c, schema, value, 0);
}
