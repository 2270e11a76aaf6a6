/* Unit test of the broker's tally of denied names (lib/broker/broker_record.c;
 * SPEC §6, docs/gl-run.md "Field labels"): names are capped per copy, so
 * that one copy's names never push another's into "(other)", and an entry
 * merges the requests of copies of one label only.
 *
 *   tally_test
 *
 * Run by tests/labelled-fields.bats. Exit 0 when every check holds. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "broker/broker_impl.h"
#include "json/json.h"
#include "plan/labels.h"
#include "core/util.h"
#include "check.h"

static bool json_eq(jv v, const char *want, bool loud)
{
	struct gl_buf b = {0};
	gl_json_dump(&b, v);
	bool ok = b.data && !strcmp(b.data, want);
	if (!ok && loud)
		fprintf(stderr, "got  %s\nwant %s\n", b.data ? b.data : "(null)", want);
	gl_buf_free(&b);
	return ok;
}

static bool json_is(jv v, const char *want)
{
	return json_eq(v, want, true);
}

int main(void)
{
	const char *hr[] = {"hr"};
	struct gl_labels lab[3] = {{NULL, 0}, {hr, 1}, {hr, 1}};
	struct tally t = {0};
	/* copy 1 (hr) floods 20 names first; copy 0 (public) names one after */
	char name[64];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "h%02d.evil.example", i);
		gl_broker_tally(&t, 1, name);
	}
	gl_broker_tally(&t, 0, "pub.evil.example");
	gl_broker_tally(&t, 0, "shared.example");
	gl_broker_tally(&t, 2, "shared.example"); /* copies 1 and 2: one label */
	gl_broker_tally(&t, 0, NULL);
	jv labels;
	jv out = gl_broker_tally_out(&t, lab, &labels);
	CHECK(t.n == 0 && t.e == NULL);
	/* 16 names of copy 1, its "(other)" with 4, and copy 0's names intact */
	int n = jv_array_length(jv_copy(out));
	CHECK(n == 16 + 1 + 4);
	jv pub = jv_array();
	jv_array_foreach(out, i, e)
	{
		jv l = jv_array_get(jv_copy(labels), i);
		if (json_eq(l, "[]", false))
			pub = jv_array_append(pub, jv_copy(e));
		jv_free(l);
		jv_free(e);
	}
	CHECK(json_is(pub, "[{\"destination\":\"(invalid)\",\"requests\":1},"
			   "{\"destination\":\"pub.evil.example\",\"requests\":1},"
			   "{\"destination\":\"shared.example\",\"requests\":1}]"));
	jv other = jv_array_get(jv_copy(out), 1); /* after "(invalid)" */
	CHECK(json_is(other, "{\"destination\":\"(other)\",\"requests\":4}"));
	jv last = jv_array_get(jv_copy(out), n - 1);
	CHECK(json_is(last, "{\"destination\":\"shared.example\",\"requests\":1}"));
	jv lastl = jv_array_get(jv_copy(labels), n - 1);
	CHECK(json_is(lastl, "[\"hr\"]")); /* copies 1 and 2 merged under hr: 1 + 0 names */
	jv_free(other);
	jv_free(last);
	jv_free(lastl);
	jv_free(pub);
	jv_free(out);
	jv_free(labels);
	return check_done();
}
