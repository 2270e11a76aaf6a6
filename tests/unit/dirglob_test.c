/* Unit tests of the directory-item labelling of lib/plan/policy.c
 * (gl_glob_may_match_under, gl_glob_matches_all_under,
 * gl_policy_label_for_dir; docs/exec.md "Directory items"): fixed cases,
 * adversarial globs, and a randomised cross-check against gl_glob_match on
 * every path of a bounded tree beneath the directory (with names a policy
 * author does not think of: ".hidden", "*", "[a]", control and non-UTF-8
 * bytes). The two tests must err only on the safe side: "may" never false
 * when some path matches, "all" never true when some path does not; and a
 * directory's label must contain the label of every path beneath it.
 * Run by tests/lib.bats under the plain and the sanitizer build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "plan/labels.h"
#include "plan/policy.h"
#include "core/util.h"

#include "check.h"

/* gl_policy_parse with its failure's detail in *err (malloc'd, or NULL). */
static int parse_policy(struct gl_policy *p, const char *buf, size_t len, char **err)
{
	struct gl_fail f = {0};
	int r = gl_policy_parse(p, buf, len, &f);
	*err = f.detail;
	return r;
}

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

/* A policy of the globs g[0..n) (tags t[i], a JSON array), in order. */
static int policy_of(struct gl_policy *p, const char *const *g, const char *const *t, size_t n)
{
	struct gl_buf b = {0};
	gl_buf_adds(&b, "{\"clearances\":{},\"labels\":{");
	for (size_t i = 0; i < n; i++) {
		jv s = jv_string(g[i]);
		if (i)
			gl_buf_addc(&b, ',');
		gl_json_dump(&b, s);
		jv_free(s);
		gl_buf_addc(&b, ':');
		gl_buf_adds(&b, t[i]);
	}
	gl_buf_adds(&b, "}}");
	char *err = NULL;
	int r = parse_policy(p, b.data, b.len, &err);
	CHECK(r == 0, "policy %s: %s", b.data, err ? err : "");
	free(err);
	gl_buf_free(&b);
	return r;
}

/* want: the directory's label, or NULL for a refusal. */
static void dir_case(const char *const *g, const char *const *t, size_t n, const char *dir,
		     const char *want)
{
	struct gl_policy p;
	if (policy_of(&p, g, t, n) < 0)
		return;
	struct gl_labels l;
	int r = gl_policy_label_for_dir(&p, dir, &l);
	if (!want)
		CHECK(r < 0, "%s (first glob %s): labelled %s, want a refusal", dir, g[0], show(&l));
	else
		CHECK(r == 0 && !strcmp(show(&l), want), "%s (first glob %s): got %s, want %s", dir,
		      g[0], r == 0 ? show(&l) : "a refusal", want);
	gl_labels_free(&l);
	gl_policy_free(&p);
}

static void fixed(void)
{
	/* the usual policy: an hr subtree inside a public one */
	const char *g1[] = {"/data/hr/**", "/data/**"};
	const char *t1[] = {"[\"hr\"]", "[]"};
	dir_case(g1, t1, 2, "/data/pub", "[]");
	dir_case(g1, t1, 2, "/data/pub/deep/er", "[]");
	dir_case(g1, t1, 2, "/data", "[\"hr\"]"); /* data/hr is beneath it */
	dir_case(g1, t1, 2, "/data/hr", "[\"hr\"]");
	dir_case(g1, t1, 2, "/data/hr/x", "[\"hr\"]");
	dir_case(g1, t1, 2, "/data/hrx", "[]");
	dir_case(g1, t1, 2, "/etc", NULL);
	dir_case(g1, t1, 2, "/dat", NULL);

	/* the directory itself must be labelled, and every depth beneath it */
	const char *g2[] = {"/data/pub/*"};
	const char *t2[] = {"[]"};
	dir_case(g2, t2, 1, "/data/pub", NULL);
	const char *g3[] = {"/data/pub/*/**", "/data/pub"};
	const char *t3[] = {"[\"a\"]", "[\"b\"]"};
	dir_case(g3, t3, 2, "/data/pub", NULL); /* no single glob covers it: refused */
	const char *g4[] = {"/data/pub", "/data/pub/**"};
	const char *t4[] = {"[\"a\"]", "[\"b\"]"};
	dir_case(g4, t4, 2, "/data/pub", "[\"a\",\"b\"]");
	dir_case(g4, t4, 2, "/data/pub/x", "[\"b\"]");

	/* a glob that can only match some names beneath: joined, never stops */
	const char *g5[] = {"/data/*.csv", "/data/**"};
	const char *t5[] = {"[\"x\"]", "[]"};
	dir_case(g5, t5, 2, "/data", "[\"x\"]");
	dir_case(g5, t5, 2, "/data/sub", "[]");
	dir_case(g5, t5, 2, "/data/a.csv", "[\"x\"]"); /* a directory named a.csv */

	/* "**" in the middle: a secret directory anywhere below */
	const char *g6[] = {"/data/**/secret/**", "/**"};
	const char *t6[] = {"[\"s\"]", "[]"};
	dir_case(g6, t6, 2, "/data/pub", "[\"s\"]");
	dir_case(g6, t6, 2, "/etc", "[]");
	dir_case(g6, t6, 2, "/data/secret", "[\"s\"]");

	/* names a glob author forgets: hidden files, one-character names */
	const char *g7[] = {"/p/[!.]*/**", "/p/??*"};
	const char *t7[] = {"[]", "[]"};
	dir_case(g7, t7, 2, "/p", NULL);
	const char *g8[] = {"/p/?", "/p/**"};
	const char *t8[] = {"[\"one\"]", "[]"};
	dir_case(g8, t8, 2, "/p", "[\"one\"]");
	const char *g9[] = {"/p/*?*/**", "/p"};
	const char *t9[] = {"[\"a\"]", "[\"b\"]"};
	dir_case(g9, t9, 2, "/p", NULL); /* covers every name beneath, not /p itself */
	dir_case(g9, t9, 2, "/p/x", "[\"a\"]");

	/* escapes and brackets on the directory's own components are exact */
	const char *g10[] = {"/d/p[u]b/**", "/d/\\*/**", "/**"};
	const char *t10[] = {"[\"q\"]", "[\"star\"]", "[]"};
	dir_case(g10, t10, 3, "/d/pub", "[\"q\"]");
	dir_case(g10, t10, 3, "/d/*", "[\"star\"]");
	dir_case(g10, t10, 3, "/d/x", "[]");
	dir_case(g10, t10, 3, "/d", "[\"q\",\"star\"]");

	/* "***" is one component matching every name; "**" any number */
	const char *g11[] = {"/a/***", "/a/**"};
	const char *t11[] = {"[\"one\"]", "[\"many\"]"};
	dir_case(g11, t11, 2, "/a/b", "[\"many\",\"one\"]");
	dir_case(g11, t11, 2, "/a/b/c", "[\"many\"]");

	/* the two tests on their own */
	struct gl_policy p;
	const char *g12[] = {"/a/**/b/**/c", "/**", "/x/*/*", "/x/**/*"};
	const char *t12[] = {"[]", "[]", "[]", "[]"};
	if (policy_of(&p, g12, t12, 4) == 0) {
		CHECK(gl_glob_may_match_under(&p.glob[0], "/a"), "a/**/b/**/c under /a");
		CHECK(gl_glob_may_match_under(&p.glob[0], "/a/q/b"), "under /a/q/b");
		CHECK(!gl_glob_may_match_under(&p.glob[0], "/b"), "not under /b");
		CHECK(!gl_glob_matches_all_under(&p.glob[0], "/a/b/c"), "/a/b/c/x is not matched");
		CHECK(gl_glob_matches_all_under(&p.glob[1], "/z"), "/** matches all under /z");
		CHECK(!gl_glob_matches_all_under(&p.glob[2], "/x"), "x/*/* leaves /x/y");
		CHECK(!gl_glob_matches_all_under(&p.glob[3], "/x"), "x/**/* leaves /x itself");
		CHECK(gl_glob_matches_all_under(&p.glob[3], "/x/y"), "x/**/* matches all under /x/y");
		/* many "**" against a deep directory: no blow-up */
		char deep[4000] = "/a";
		for (int k = 0; k < 900; k++)
			strcat(deep, "/z");
		CHECK(gl_glob_may_match_under(&p.glob[0], deep), "deep");
		CHECK(!gl_glob_matches_all_under(&p.glob[0], deep), "deep: not all");
		gl_policy_free(&p);
	}
}

/* ---- randomised cross-check against gl_glob_match ----------------------- */

static const char *const gcomp[] = {"a", "b", "*", "?", "**", "[ab]", "a*", "*?*", "[!a]*",
				    "\\*", ".*", "??", "***", "*b"};
static const char *const dcomp[] = {"a", "b", "ab", "*", ".h"};
/* names beneath: what a file system can hold */
static const char *const names[] = {"a", "b", ".h", "*", "\x01", "\xff\xfe", "[a]", "ab"};
#define NG (sizeof gcomp / sizeof *gcomp)
#define ND (sizeof dcomp / sizeof *dcomp)
#define NN (sizeof names / sizeof *names)
#define DEPTH 3

static unsigned rnd_state = 12345;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 16) % n;
}

static void rand_path(char *out, size_t cap, const char *const *from, size_t nfrom, int ncomp)
{
	out[0] = 0;
	for (int i = 0; i < ncomp; i++) {
		strncat(out, "/", cap - strlen(out) - 1);
		strncat(out, from[rnd((unsigned)nfrom)], cap - strlen(out) - 1);
	}
}

/* Every path of S(dir) up to DEPTH names beneath, into paths[] (count). */
static size_t subtree(const char *dir, char paths[][64])
{
	size_t n = 0;
	snprintf(paths[n++], 64, "%s", dir);
	size_t from = 0;
	for (int d = 0; d < DEPTH; d++) {
		size_t to = n;
		for (size_t i = from; i < to; i++)
			for (size_t k = 0; k < NN; k++)
				snprintf(paths[n++], 64, "%s/%s", paths[i], names[k]);
		from = to;
	}
	return n;
}

static void randomised(void)
{
	static char paths[1 + NN + NN * NN + NN * NN * NN][64];
	int claimed_all = 0, refused = 0, labelled = 0;
	for (int round = 0; round < 300; round++) {
		char g[3][64];
		const char *gp[3], *tp[3];
		static const char *const tags[] = {"[\"t0\"]", "[\"t1\"]", "[\"t2\"]"};
		size_t ng = 1 + rnd(3);
		for (size_t i = 0; i < ng; i++) {
			bool dup;
			do { /* distinct globs: a JSON object's keys */
				rand_path(g[i], sizeof g[i], gcomp, NG, 1 + (int)rnd(4));
				dup = false;
				for (size_t j = 0; j < i; j++)
					dup = dup || !strcmp(g[i], g[j]);
			} while (dup);
			gp[i] = g[i];
			tp[i] = tags[i];
		}
		struct gl_policy p;
		if (policy_of(&p, gp, tp, ng) < 0)
			continue;
		for (int k = 0; k < 3; k++) {
			char dir[64];
			rand_path(dir, sizeof dir, dcomp, ND, 1 + (int)rnd(3));
			size_t np = subtree(dir, paths);
			for (size_t i = 0; i < ng; i++) {
				bool may = gl_glob_may_match_under(&p.glob[i], dir);
				bool all = gl_glob_matches_all_under(&p.glob[i], dir);
				claimed_all += all;
				for (size_t j = 0; j < np; j++) {
					bool m = gl_glob_match(&p.glob[i], paths[j]);
					CHECK(may || !m, "glob %s: may false under %s but %s matches",
					      g[i], dir, paths[j]);
					CHECK(!all || m, "glob %s: all under %s but %s does not match",
					      g[i], dir, paths[j]);
				}
			}
			struct gl_labels l;
			if (gl_policy_label_for_dir(&p, dir, &l) < 0) {
				refused++;
				continue;
			}
			labelled++;
			for (size_t j = 0; j < np; j++) {
				const struct gl_labels *pl = gl_policy_label_for(&p, paths[j]);
				CHECK(pl, "dir %s labelled %s, but %s has no label", dir, show(&l),
				      paths[j]);
				CHECK(!pl || gl_labels_subset(pl, &l),
				      "dir %s labelled %s misses the label of %s", dir, show(&l), paths[j]);
			}
			gl_labels_free(&l);
		}
		gl_policy_free(&p);
	}
	/* the cross-check must have exercised both outcomes */
	CHECK(claimed_all > 50 && refused > 50 && labelled > 50,
	      "too few cases: all %d, refused %d, labelled %d", claimed_all, refused, labelled);
	printf("# randomised: %d 'all' claims, %d directories labelled, %d refused\n", claimed_all,
	       labelled, refused);
}

int main(void)
{
	fixed();
	randomised();
	return check_done();
}
