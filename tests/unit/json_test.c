/* Unit tests of lib/json/json.c: the strict reader and the two writers.
 * Run by tests/lib.bats under the plain and the sanitizer build. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

#include "check.h"

static void refused(const char *in, size_t n, const char *why)
{
	jv v = gl_json_parse(in, n);
	CHECK(!jv_is_valid(v), "accepted %s", why);
	if (!jv_is_valid(v))
		CHECK(jv_invalid_has_msg(jv_copy(v)), "no message for %s", why);
	jv_free(v);
}

static void roundtrip(const char *in, const char *want)
{
	jv v = gl_json_parse(in, strlen(in));
	CHECK(jv_is_valid(v), "refused %s", in);
	if (!jv_is_valid(v)) {
		jv_free(v);
		return;
	}
	struct gl_buf b = {0};
	gl_json_dump(&b, v);
	CHECK(b.len == strlen(want) && !memcmp(b.data, want, b.len), "dump %s: got %s want %s",
	      in, b.data, want);
	gl_buf_free(&b);
	jv_free(v);
}

static void canon_is(const char *in, const char *want)
{
	jv v = gl_json_parse(in, strlen(in));
	struct gl_buf b = {0};
	struct gl_fail f = {0};
	int r = gl_canon_dump(&b, v, &f);
	char *err = f.detail;
	if (want) {
		CHECK(r == 0 && b.len == strlen(want) && !memcmp(b.data, want, b.len),
		      "canon %s: got %s want %s", in, b.data ? b.data : "(err)", want);
	} else {
		CHECK(r < 0 && err, "canon accepted %s", in);
	}
	free(err);
	gl_buf_free(&b);
	jv_free(v);
}

static void canon_parse_refuses(const char *in, const char *why)
{
	jv v = gl_canon_parse(in, strlen(in));
	CHECK(!jv_is_valid(v), "canon_parse accepted %s", why);
	jv_free(v);
}

int main(void)
{
	/* The reader refuses what libjq would silently accept or rewrite. */
	refused("{\"a\":1,\"a\":2}", 13, "a duplicate key");
	refused("\"\xff\"", 3, "invalid UTF-8");
	refused("\"\xc0\xaf\"", 4, "an overlong encoding");
	refused("\"\xed\xa0\x80\"", 5, "an encoded surrogate");
	refused("\"\\ud800\"", 8, "a lone high surrogate");
	refused("\"\\udc00\"", 8, "a lone low surrogate");
	refused("\"a\\u0000b\"", 10, "NUL in a string");
	refused("\"a\nb\"", 5, "a raw control character");
	/* TUF metadata: securesystemslib's canonical form writes a PEM key's
	 * newlines raw; gl_json_parse_tuf takes them (and nothing else new),
	 * never a raw NUL; a control character ends no run of plain bytes. */
	{
		jv v = gl_json_parse_tuf("\"a\nb\tc\x01\"", 8);
		CHECK(jv_is_valid(v) && jv_string_length_bytes(jv_copy(v)) == 6 &&
			  !memcmp(jv_string_value(v), "a\nb\tc\x01", 6),
		      "gl_json_parse_tuf refused or changed raw control characters");
		jv_free(v);
		v = gl_json_parse_tuf("\"a\0b\"", 5);
		CHECK(!jv_is_valid(v), "gl_json_parse_tuf accepted a raw NUL");
		jv_free(v);
		v = gl_json_parse_tuf("{\"a\":1,\"a\":2}", 13);
		CHECK(!jv_is_valid(v), "gl_json_parse_tuf accepted a duplicate key");
		jv_free(v);
	}
	refused("[1,]", 4, "a trailing comma");
	refused("{} {}", 5, "trailing bytes");
	refused("01", 2, "a leading zero");
	refused("1.", 2, "a bare decimal point");
	refused("1e999", 5, "an overflowing number");
	refused("NaN", 3, "NaN");
	refused("nul", 3, "a truncated literal");
	refused("", 0, "empty input");
	refused("\"abc", 4, "an unterminated string");
	refused("[1]\0", 4, "an embedded NUL after the value");
	char deep[200];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	refused(deep, 200, "nesting past the depth bound");
	memset(deep, '[', 60);
	memset(deep + 60, ']', 60);
	jv ok = gl_json_parse(deep, 120);
	CHECK(jv_is_valid(ok), "refused nesting of 60");
	jv_free(ok);

	/* Depth (lib/json/json.h): 64 read, 65 not; gl_json_depth counts exactly up
	 * to its cap and stops past it. */
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	ok = gl_json_parse(deep, 128);
	CHECK(jv_is_valid(ok) && gl_json_depth(ok, GL_JSON_MAX_DEPTH) == 64, "nesting of 64");
	CHECK(gl_json_depth(ok, 10) == 11, "depth past the cap");
	jv_free(ok);
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	refused(deep, 130, "nesting of 65");
	ok = gl_json_parse("{\"a\":[1,{\"b\":[]}],\"c\":2}", 24);
	CHECK(gl_json_depth(ok, 64) == 4, "depth of a mixed value");
	jv_free(ok);
	CHECK(GL_JSON_VALUE_DEPTH_MAX + GL_JSON_NEST_MAX == GL_JSON_MAX_DEPTH, "the depth budget");

	/* Numbers: exact in the pipeline or refused (docs/pipeline.md "Numbers"). */
	refused("9007199254740993", 16, "2^53 + 1");
	refused("9007199254740992", 16, "2^53 (an integer literal past the safe range)");
	refused("-9007199254740993", 17, "-(2^53 + 1)");
	refused("18446744073709551616", 20, "2^64");
	refused("0.30000000000000001", 19, "a decimal that reads as another's double");
	refused("9007199254740993.0", 18, "2^53 + 1 with a fraction");
	refused("123456789.123456789", 19, "more digits than a double keeps");
	refused("1e-400", 6, "an underflow to 0");
	refused("5e-324", 6, "a subnormal written back otherwise");
	roundtrip("[9007199254740991,-9007199254740991,0.30000000000000004,1e300,0,-0,0.0]",
		  "[9007199254740991,-9007199254740991,0.30000000000000004,1e+300,0,0,0]");
	roundtrip("[1.0,1E2,2.5e-3,0.000123]",
		  "[1,100,0.0025,0.000123]");

	/* Compact writer: deterministic, escapes control characters. */
	roundtrip("{\"b\":1,\"a\":[true,false,null]}", "{\"a\":[true,false,null],\"b\":1}");
	roundtrip("\"\\u00e9\\ud83d\\ude00\\n\\t\\\"\"", "\"\xc3\xa9\xf0\x9f\x98\x80\\n\\t\\\"\"");
	roundtrip("\"\\u001f\"", "\"\\u001f\"");
	roundtrip("[0.1,-2,1e3,4.5e-7]", "[0.1,-2,1000,4.5e-07]");

	/* Canonical form of SPEC §3 (securesystemslib): sorted keys, only " and \ escaped. */
	canon_is("{\"z\":\"a\\\"b\\\\c\",\"a\":[1,-2],\"\xc3\xa9\":null}",
		 "{\"a\":[1,-2],\"z\":\"a\\\"b\\\\c\",\"\xc3\xa9\":null}");
	canon_is("\"\\u00e9/\"", "\"\xc3\xa9/\"");
	canon_is("1.5", NULL);
	canon_is("9007199254740992", NULL);
	canon_is("\"a\\nb\"", NULL);
	canon_is("-9007199254740991", "-9007199254740991");

	/* gl_canon_parse: only the canonical bytes of a value are accepted. */
	canon_parse_refuses("{\"a\":1,\"a\":1}", "a duplicate key");
	canon_parse_refuses("{\"a\": 1}", "whitespace");
	canon_parse_refuses("{\"b\":1,\"a\":1}", "unsorted keys");
	canon_parse_refuses("{\"a\":1.0}", "a float");
	canon_parse_refuses("{\"a\":\"\\u0041\"}", "an unneeded escape");
	canon_parse_refuses("{\"a\":\"\\n\"}", "a control character");
	jv c = gl_canon_parse("{\"a\":[1,\"x\"],\"b\":{}}", 20);
	CHECK(jv_is_valid(c), "canon_parse refused canonical bytes");
	jv_free(c);

	/* The node limit (json.h): scalars, strings and keys weigh 1, containers
	 * GL_JSON_CONTAINER_WEIGHT; nothing inside a string counts. */
	static const struct {
		const char *in;
		size_t want;
	} nodes[] = {
	    {"0", 1}, {" -1.5e3 ", 1}, {"true", 1}, {"\"a[{,\\\"]\"", 1}, {"[]", 16},
	    {"[0,1,2]", 19}, {"{\"a\":null,\"b\":[\"x\"]}", 16 + 2 + 1 + 16 + 1},
	    {"[ 1 , 2 ]", 18}, {"[[],{}]", 48},
	};
	for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
		size_t got = gl_json_nodes(nodes[i].in, strlen(nodes[i].in), SIZE_MAX);
		CHECK(got == nodes[i].want, "nodes of %s: %zu, want %zu", nodes[i].in, got,
		      nodes[i].want);
	}
	CHECK(gl_json_nodes("[0,0,0,0,0]", 11, 17) == 18, "nodes: the count stops past the cap");
	{
		/* one over GL_JSON_NODES_MAX is refused, the limit itself taken */
		size_t n = GL_JSON_NODES_MAX - GL_JSON_CONTAINER_WEIGHT;
		struct gl_buf b = {0};
		gl_buf_addc(&b, '[');
		for (size_t i = 0; i < n; i++)
			gl_buf_adds(&b, i ? ",0" : "0");
		gl_buf_addc(&b, ']');
		jv v = gl_json_parse(b.data, b.len);
		CHECK(jv_is_valid(v), "refused a document of GL_JSON_NODES_MAX nodes");
		jv_free(v);
		b.data[b.len - 1] = ',';
		gl_buf_adds(&b, "0]");
		v = gl_json_parse(b.data, b.len);
		CHECK(!jv_is_valid(v), "took a document over GL_JSON_NODES_MAX nodes");
		jv_free(v);
		free(b.data);
	}

	return check_done();
}
