/* Unit tests of lib/plan/labels.c (tag sets), the glob matcher of lib/plan/policy.c
 * and the name rules of lib/release/manifest.c — the parts of gl-plan's library that
 * gl-plan itself exercises only partly (the join ⊔ is gl-run's).
 * Run by tests/gl-plan.bats under the plain and the sanitizer build. */
#include <string.h>

#include "json/json.h"
#include "plan/labels.h"
#include "release/manifest.h"
#include "plan/policy.h"

#include "check.h"

/* gl_policy_parse with its failure's detail in *err (malloc'd, or NULL). */
static int parse_policy(struct gl_policy *p, const char *buf, size_t len, char **err)
{
	struct gl_fail f = {0};
	int r = gl_policy_parse(p, buf, len, &f);
	*err = f.detail;
	return r;
}

/* The set as compact JSON, for comparisons (static buffer). */
static const char *show(const struct gl_labels *l)
{
	static char out[512];
	struct gl_buf b = {0};
	jv a = gl_labels_to_jv(l);
	gl_json_dump(&b, a);
	jv_free(a);
	snprintf(out, sizeof out, "%s", b.data);
	gl_buf_free(&b);
	return out;
}

/* Parse JSON text into a tag set; the jv is kept in *keep (tags borrow it). */
static int set_of(const char *json, struct gl_labels *l, jv *keep, char **err)
{
	*keep = gl_json_parse(json, strlen(json));
	struct gl_fail f = {0};
	int rc = gl_labels_from_jv(l, *keep, &f);
	*err = f.detail; /* NULL when it was read */
	return rc;
}

static void labels(void)
{
	struct gl_labels a, b, u, i;
	jv ja, jb;
	char *err;
	CHECK(set_of("[\"hr\",\"finance\",\"hr\"]", &a, &ja, &err) == 0, "refused %s", err);
	CHECK(!strcmp(show(&a), "[\"finance\",\"hr\"]"), "sorted unique: %s", show(&a));
	CHECK(set_of("[\"projx\",\"finance\"]", &b, &jb, &err) == 0, "refused %s", err);

	gl_labels_union(&u, &a, &b);
	CHECK(!strcmp(show(&u), "[\"finance\",\"hr\",\"projx\"]"), "union: %s", show(&u));
	gl_labels_intersect(&i, &a, &b);
	CHECK(!strcmp(show(&i), "[\"finance\"]"), "intersection: %s", show(&i));
	CHECK(gl_labels_subset(&i, &a) && gl_labels_subset(&i, &b), "∩ ⊆ operands");
	CHECK(gl_labels_subset(&a, &u) && gl_labels_subset(&b, &u), "operands ⊆ ∪");
	CHECK(!gl_labels_subset(&a, &b) && !gl_labels_subset(&u, &a), "not subsets");
	struct gl_labels empty = {NULL, 0};
	CHECK(gl_labels_subset(&empty, &a) && !gl_labels_subset(&a, &empty), "[] ⊆ everything");
	CHECK(gl_labels_equal(&a, &a) && !gl_labels_equal(&a, &b), "equality");
	CHECK(gl_labels_cmp(&i, &a) < 0 && gl_labels_cmp(&a, &i) > 0, "a prefix sorts first");
	CHECK(gl_labels_cmp(&a, &b) < 0, "lexicographic over tags");
	struct gl_labels c;
	gl_labels_copy(&c, &u);
	CHECK(gl_labels_equal(&c, &u), "copy");
	gl_labels_free(&c);
	gl_labels_free(&u);
	gl_labels_intersect(&u, &a, &empty);
	CHECK(u.n == 0, "x ∩ [] = []");
	gl_labels_free(&u);
	gl_labels_union(&u, &empty, &empty);
	CHECK(u.n == 0, "[] ∪ [] = []");
	gl_labels_free(&u);
	gl_labels_free(&i);
	gl_labels_free(&a);
	gl_labels_free(&b);
	jv_free(ja);
	jv_free(jb);

	static const char *const bad[] = {
	    "\"hr\"", "[1]", "[\"\"]", "[\"a\\nb\"]", "{\"hr\":true}", "null",
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		int r = set_of(bad[k], &a, &ja, &err);
		CHECK(r < 0 && err && a.n == 0, "accepted label %s", bad[k]);
		free(err);
		jv_free(ja);
	}
	/* More than GL_TAGS_MAX tags, and a tag longer than GL_TAG_MAX bytes. */
	struct gl_buf many = {0};
	gl_buf_adds(&many, "[");
	for (int k = 0; k <= GL_TAGS_MAX; k++)
		gl_buf_printf(&many, "%s\"t%d\"", k ? "," : "", k);
	gl_buf_adds(&many, "]");
	CHECK(set_of(many.data, &a, &ja, &err) < 0, "accepted %d tags", GL_TAGS_MAX + 1);
	free(err);
	jv_free(ja);
	gl_buf_free(&many);
	char longtag[GL_TAG_MAX + 8];
	memset(longtag, 'x', sizeof longtag);
	longtag[0] = '[', longtag[1] = '"';
	strcpy(longtag + GL_TAG_MAX + 3, "\"]");
	CHECK(set_of(longtag, &a, &ja, &err) < 0, "accepted a %d-byte tag", GL_TAG_MAX + 1);
	free(err);
	jv_free(ja);
}

static void globs(void)
{
	static const char pol[] = "{\"clearances\":{},\"labels\":{"
				  "\"/data/hr/**\":[\"hr\"],"
				  "\"/data/*/invoices/*.pdf\":[\"finance\"],"
				  "\"/a/**/b/**/c\":[\"x\"],"
				  "\"/data/[pq]ub?ic/*\":[]}}";
	struct gl_policy p;
	char *err = NULL;
	CHECK(parse_policy(&p, pol, strlen(pol), &err) == 0, "policy: %s", err);
	static const struct {
		const char *path, *want; /* want: the label, or NULL for no match */
	} cases[] = {
	    {"/data/hr", "[\"hr\"]"},
	    {"/data/hr/a.csv", "[\"hr\"]"},
	    {"/data/hr/2027/q1/.hidden", "[\"hr\"]"},
	    {"/data/hrx/a.csv", NULL},
	    {"/data/acme/invoices/1.pdf", "[\"finance\"]"},
	    {"/data/acme/invoices/1.pdf.txt", NULL},
	    {"/data/acme/x/invoices/1.pdf", NULL},
	    {"/a/b/c", "[\"x\"]"},
	    {"/a/1/2/b/3/c", "[\"x\"]"},
	    {"/a/1/2/b/3/c/d", NULL},
	    {"/data/public/readme", "[]"},
	    {"/data/qublic/readme", "[]"},
	    {"/data/public/sub/readme", NULL},
	    {"/etc/passwd", NULL},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		const struct gl_labels *l = gl_policy_label_for(&p, cases[k].path);
		if (!cases[k].want)
			CHECK(!l, "%s matched %s", cases[k].path, l ? show(l) : "");
		else
			CHECK(l && !strcmp(show(l), cases[k].want), "%s: got %s, want %s",
			      cases[k].path, l ? show(l) : "no match", cases[k].want);
	}
	/* Many "**" against a long path: dynamic programming, no blow-up. */
	const struct gl_policy_glob *g = &p.glob[2];
	char deep[4000] = "/a";
	for (int k = 0; k < 900; k++)
		strcat(deep, "/z");
	strcat(deep, "/b/c/c");
	CHECK(gl_glob_match(g, deep), "a/**/b/**/c on a deep path");
	CHECK(gl_policy_route(&p, "ocr.example") == NULL, "no routes");
	CHECK(gl_policy_clearance(&p, "nobody")->n == 0, "no clearance is public");
	gl_policy_free(&p);
}

static void names(void)
{
	static const char *const hosts_ok[] = {"ocr.example", "localhost", "a-b.c0", "10.0.0.1",
					       "::1", "2001:db8::1", "::ffff:1.2.3.4", "x.1a"};
	static const char *const hosts_bad[] = {
	    "", "OCR.example", "ocr.example.", "ocr.example:443", "https://ocr.example",
	    "ocr.example/x", "-a.example", "a-.example", "a..b", "1.2.3", "01.2.3.4",
	    "256.1.1.1", "[::1]", "0:0::1", "2001:DB8::1", "a b", "ocr_example.com",
	    "user@ocr.example"};
	for (size_t k = 0; k < sizeof hosts_ok / sizeof *hosts_ok; k++)
		CHECK(gl_host_ok(hosts_ok[k], strlen(hosts_ok[k])), "refused host %s", hosts_ok[k]);
	for (size_t k = 0; k < sizeof hosts_bad / sizeof *hosts_bad; k++)
		CHECK(!gl_host_ok(hosts_bad[k], strlen(hosts_bad[k])), "accepted host '%s'",
		      hosts_bad[k]);
	char label64[80] = {0};
	memset(label64, 'a', 64);
	CHECK(!gl_host_ok(label64, 64), "accepted a 64-byte label");
	CHECK(gl_host_ok(label64, 63), "refused a 63-byte label");

	static const char *const paths_ok[] = {"/a", "/data/hr/x.csv", "/a/.b/c..d"};
	static const char *const paths_bad[] = {"", "/", "a/b", "/a/", "/a//b", "/a/./b",
						"/a/../b", "/..", "/a/b/.", "/a\nb"};
	for (size_t k = 0; k < sizeof paths_ok / sizeof *paths_ok; k++)
		CHECK(gl_path_clean(paths_ok[k], strlen(paths_ok[k])), "refused path %s", paths_ok[k]);
	for (size_t k = 0; k < sizeof paths_bad / sizeof *paths_bad; k++)
		CHECK(!gl_path_clean(paths_bad[k], strlen(paths_bad[k])), "accepted path '%s'",
		      paths_bad[k]);

	const char *sha = "46b42b4229cd7a39c564e780bb665a8bde4fdf722007e8473f167fe53ed4b995";
	CHECK(gl_sha256_hex_ok(sha, 64), "refused a sha256");
	CHECK(!gl_sha256_hex_ok(sha, 63), "accepted 63 digits");
	CHECK(!gl_sha256_hex_ok("46B42B4229CD7A39C564E780BB665A8BDE4FDF722007E8473F167FE53ED4B995", 64),
	      "accepted upper case");
	CHECK(!gl_sha256_hex_ok("../../../../../../../../../../../../../../../../../../../etc/x", 64),
	      "accepted a path");
}

int main(void)
{
	labels();
	globs();
	names();
	return check_done();
}
