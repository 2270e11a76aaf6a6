/* The pipeline's one number rule (docs/pipeline.md "Numbers"): every number
 * that a reader of ours takes — the strict reader (gl_json_parse), its TUF
 * variant, canonical JSON and a copy's message — the writer
 * (gl_json_dump) writes as text that the same reader takes back as the same
 * value, and writing that again gives the same text. Checked on the values
 * that once broke it (9007199254740994.0: written as an integer literal the
 * reader refuses), on random doubles by bit pattern and on random decimal
 * spellings. Run by tests/lib.bats under the plain and the sanitizer build. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "json/msg.h"

#include "check.h"

typedef jv (*reader)(const char *, size_t);

/* A copy's result message holding the number text t, read as the broker
 * reads it: the value, or jv_invalid(). */
static jv msg_reader(const char *t, size_t n)
{
	char buf[128];
	int len = snprintf(buf, sizeof buf, "{\"type\":\"result\",\"value\":%.*s}", (int)n, t);
	struct gl_msg m;
	struct gl_fail f = {0};
	jv v = jv_invalid();
	if (len > 0 && (size_t)len < sizeof buf && gl_msg_parse(&m, buf, (size_t)len, &f) == 0)
		v = jv_copy(m.value);
	gl_msg_free(&m);
	gl_fail_clear(&f);
	return v;
}

static const struct {
	const char *name;
	reader read;
} readers[] = {
    {"strict", gl_json_parse},
    {"tuf", gl_json_parse_tuf},
    {"canonical", gl_canon_parse},
    {"message", msg_reader},
};

/* The text t (n bytes) through reader k: refused, or accepted and then
 * written, read back (the same value, by bits but for zero's sign) and
 * written again (the same text). 1 accepted, 0 refused. */
static int through(size_t k, const char *t, size_t n)
{
	jv v = readers[k].read(t, n);
	if (!jv_is_valid(v)) {
		jv_free(v);
		return 0;
	}
	CHECK(jv_get_kind(v) == JV_KIND_NUMBER, "%s: %.*s is not a number", readers[k].name, (int)n,
	      t);
	struct gl_buf w = {0}, w2 = {0};
	gl_json_dump(&w, v);
	jv back = readers[k].read(w.data, w.len);
	CHECK(jv_is_valid(back), "%s: took %.*s but refuses what the writer wrote for it: %.*s",
	      readers[k].name, (int)n, t, (int)w.len, w.data);
	if (jv_is_valid(back)) {
		double a = jv_number_value(v), b = jv_number_value(back);
		CHECK(a == b && (a != 0 || b == 0), "%s: %.*s -> %.*s reads back as another number",
		      readers[k].name, (int)n, t, (int)w.len, w.data);
		gl_json_dump(&w2, back);
		CHECK(w.len == w2.len && !memcmp(w.data, w2.data, w.len),
		      "%s: %.*s written as %.*s, then as %.*s", readers[k].name, (int)n, t,
		      (int)w.len, w.data, (int)w2.len, w2.data);
	}
	gl_buf_free(&w);
	gl_buf_free(&w2);
	jv_free(back);
	jv_free(v);
	return 1;
}

static int through_all(const char *t)
{
	int took = 0;
	for (size_t k = 0; k < sizeof readers / sizeof *readers; k++)
		took |= through(k, t, strlen(t)) << k;
	return took;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) /* xorshift64*: the same sequence every run */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

int main(void)
{
	/* the values of the pipeline test, and their neighbours */
	static const char *const took[] = {
	    "9007199254740994.0", "-9007199254740994e0", "9007199254740992.0", "9.007199254740994e15",
	    "1e16", "12345678901234568.0", "-0.0", "0", "-0", "1.0", "1E2", "0.1", "1e300",
	    "4.94065645841247e-324", "1.7976931348623157e308", "9007199254740991", "-9007199254740991"};
	for (size_t i = 0; i < sizeof took / sizeof *took; i++)
		CHECK(through_all(took[i]) & 1, "the strict reader refuses %s", took[i]);
	static const char *const refused[] = {"1e400", "-1e400", "9007199254740993", "5e-324",
					      "9007199254740992", "0.30000000000000001"};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		CHECK(!(through_all(refused[i]) & 1), "the strict reader takes %s", refused[i]);
	/* the written form of 2^53+2 is no integer literal */
	jv big = jv_number(9007199254740994.0);
	struct gl_buf b = {0};
	gl_json_dump(&b, big);
	CHECK(b.len && memchr(b.data, 'e', b.len), "9007199254740994 written as %.*s", (int)b.len,
	      b.data);
	gl_buf_free(&b);
	jv_free(big);

	/* every finite double, as the writer writes it, through every reader
	 * (a sample: the JSON fuzz target searches on, fuzz/) */
	long accepted = 0;
	for (int i = 0; i < 20000; i++) {
		uint64_t bits = next();
		double d;
		memcpy(&d, &bits, sizeof d);
		if (!isfinite(d))
			continue;
		char t[40];
		gl_json_number_text(d, t);
		int k = through_all(t);
		CHECK(k & 1, "the strict reader refuses the writer's %s", t);
		accepted += k != 0;
	}
	/* random spellings: integers of 1 to 20 digits, with or without a
	 * fraction and an exponent; whatever a reader takes round-trips */
	for (int i = 0; i < 20000; i++) {
		char t[64];
		int n = 0, digits = 1 + (int)(next() % 20);
		if (next() & 1)
			t[n++] = '-';
		t[n++] = (char)('1' + next() % 9);
		for (int j = 1; j < digits; j++)
			t[n++] = (char)('0' + next() % 10);
		if (next() % 3 == 0) {
			t[n++] = '.';
			for (int j = 0, f = 1 + (int)(next() % 4); j < f; j++)
				t[n++] = (char)('0' + next() % 10);
		}
		if (next() % 3 == 0)
			n += snprintf(t + n, sizeof t - (size_t)n, "e%d", (int)(next() % 700) - 350);
		t[n] = 0;
		accepted += through_all(t) != 0;
	}
	CHECK(accepted > 20000, "only %ld texts taken: the property checked little", accepted);
	return check_done();
}
