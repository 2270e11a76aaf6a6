/* Unit tests of lib/json/jsonschema.c, the inputSchema check of gl-run
 * --serve-mcp: each keyword it enforces, the ones it ignores, the path an
 * error names, and the bounds on a hostile schema (depth, work). Run by
 * tests/serve-mcp-ops.bats; exit 0 when every check holds. */
#define _GNU_SOURCE
#include <string.h>

#include "check.h"
#include "json/json.h"
#include "json/jsonschema.h"
#include "core/util.h"

/* check(schema, value): NULL when valid, else the error (static copy). */
static const char *run(const char *schema, const char *value)
{
	static char last[512];
	jv s = gl_json_parse(schema, strlen(schema)), v = gl_json_parse(value, strlen(value));
	if (!jv_is_valid(s) || !jv_is_valid(v)) {
		jv_free(s);
		jv_free(v);
		return "unparsable test input";
	}
	struct gl_fail f = {0};
	int r = gl_schema_check(s, v, "arguments", &f);
	jv_free(s);
	jv_free(v);
	if (!r)
		return NULL;
	CHECK(f.code == GL_E_BAD_ARGS);
	snprintf(last, sizeof last, "%s", gl_fail_detail(&f));
	gl_fail_clear(&f);
	return last;
}

#define OK(s, v) CHECK(!run(s, v), "%s on %s: %s", s, v, run(s, v))
#define BAD(s, v, want)                                                                      \
	do {                                                                                 \
		const char *e_ = run(s, v);                                                  \
		CHECK(e_ && !strcmp(e_, want), "%s on %s: got \"%s\", want \"%s\"", s, v,       \
		      e_ ? e_ : "(valid)", want);                                            \
	} while (0)

static void types(void)
{
	OK("{\"type\":\"integer\"}", "3");
	OK("{\"type\":\"integer\"}", "3.0");
	BAD("{\"type\":\"integer\"}", "3.5", "arguments: expected integer");
	OK("{\"type\":\"number\"}", "3.5");
	BAD("{\"type\":\"string\"}", "5", "arguments: expected string");
	BAD("{\"type\":\"boolean\"}", "null", "arguments: expected boolean");
	OK("{\"type\":[\"string\",\"null\"]}", "null");
	BAD("{\"type\":[\"string\",\"null\"]}", "1", "arguments: expected string or null");
	BAD("{\"type\":\"array\"}", "{}", "arguments: expected array");
	BAD("{\"type\":\"object\"}", "[]", "arguments: expected object");
	BAD("{\"type\":\"nonsense\"}", "1", "arguments: expected nonsense");
	OK("true", "1");
	BAD("false", "1", "arguments: not allowed by the schema (false)");
	OK("{}", "{\"a\":[1,{\"b\":2}]}");
}

static void objects(void)
{
	const char *s = "{\"type\":\"object\",\"required\":[\"path\"],"
			"\"properties\":{\"path\":{\"type\":\"string\"},"
			"\"opts\":{\"type\":\"object\",\"properties\":{\"tags\":{\"type\":\"array\","
			"\"items\":{\"type\":\"string\"}}}},\"mode\":{\"enum\":[\"a\",1]}}}";
	OK(s, "{\"path\":\"x\",\"opts\":{\"tags\":[\"t\"]},\"mode\":1,\"other\":true}");
	BAD(s, "{}", "arguments: missing required property \"path\"");
	BAD(s, "{\"path\":5}", "arguments.path: expected string");
	BAD(s, "{\"path\":\"x\",\"opts\":{\"tags\":[\"t\",2]}}",
	    "arguments.opts.tags[1]: expected string");
	BAD(s, "{\"path\":\"x\",\"mode\":\"b\"}",
	    "arguments.mode: not one of the values the schema's enum allows");
	const char *closed = "{\"properties\":{\"a\":{}},\"additionalProperties\":false}";
	OK(closed, "{\"a\":1}");
	BAD(closed, "{\"a\":1,\"b c\":2}",
	    "arguments[\"b c\"]: not allowed (the schema's additionalProperties is false)");
	/* patternProperties cannot be checked here: additionalProperties is not enforced */
	OK("{\"properties\":{},\"patternProperties\":{\"^x\":{}},\"additionalProperties\":false}",
	   "{\"xy\":1}");
	BAD("{\"additionalProperties\":{\"type\":\"integer\"}}", "{\"n\":\"1\"}",
	    "arguments.n: expected integer");
	BAD("{\"const\":{\"k\":[1]}}", "{\"k\":[2]}",
	    "arguments: not the value the schema's const requires");
	/* ignored keywords: the server checks them itself */
	OK("{\"anyOf\":[{\"type\":\"string\"}],\"minimum\":5,\"$ref\":\"#/x\",\"pattern\":\"^a\"}", "1");
	/* a member name with control characters is escaped in the path */
	BAD("{\"properties\":{\"a\\u0001b\":{\"type\":\"string\"}}}", "{\"a\\u0001b\":1}",
	    "arguments[\"a\\x01b\"]: expected string");
}

/* A schema nested deeper than the bound, a value wide enough to exceed
 * the work bound: refused, not stalled. */
static void bounds(void)
{
	struct gl_buf s = {0}, v = {0};
	for (int i = 0; i < GL_SCHEMA_DEPTH_MAX + 2; i++) {
		gl_buf_adds(&s, "{\"items\":");
		gl_buf_adds(&v, "[");
	}
	gl_buf_adds(&s, "{}");
	for (int i = 0; i < GL_SCHEMA_DEPTH_MAX + 2; i++) {
		gl_buf_adds(&s, "}");
		gl_buf_adds(&v, "]");
	}
	gl_buf_addc(&s, 0);
	gl_buf_adds(&v, "");
	gl_buf_addc(&v, 0);
	/* the value is empty at the innermost level: make it reach the bound */
	const char *e = run(s.data, v.data);
	CHECK(e && strstr(e, "nested deeper than 32 levels"), "deep: %s", e ? e : "(valid)");
	free(s.data);
	free(v.data);
	struct gl_buf w = {0};
	gl_buf_adds(&w, "[");
	for (int i = 0; i <= GL_SCHEMA_WORK_MAX; i++)
		gl_buf_adds(&w, i ? ",1" : "1");
	gl_buf_adds(&w, "]");
	gl_buf_addc(&w, 0);
	e = run("{\"items\":{\"type\":\"integer\"}}", w.data);
	CHECK(e && strstr(e, "more than 100000 steps"), "wide: %s", e ? e : "(valid)");
	/* a long enum under items: its comparisons count (1000 x 1000) */
	struct gl_buf en = {0}, arr = {0};
	gl_buf_adds(&en, "{\"items\":{\"enum\":[");
	gl_buf_adds(&arr, "[");
	for (int i = 0; i < 1000; i++) {
		gl_buf_printf(&en, "%s%d", i ? "," : "", i);
		gl_buf_adds(&arr, i ? ",999" : "999");
	}
	gl_buf_adds(&en, "]}}");
	gl_buf_adds(&arr, "]");
	gl_buf_addc(&en, 0);
	gl_buf_addc(&arr, 0);
	e = run(en.data, arr.data);
	CHECK(e && strstr(e, "more than 100000 steps"), "enum x array: %s", e ? e : "(valid)");
	OK("{\"items\":{\"enum\":[1,2,3]}}", "[1,2,3,3,2,1]");
	free(en.data);
	free(arr.data);
	free(w.data);
}

int main(void)
{
	types();
	objects();
	bounds();
	return check_done();
}
