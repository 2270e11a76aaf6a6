/* Unit tests of lib/release/bounds.c: the policy's "limits" (SPEC §4; issue 15),
 * parsed through gl_policy_parse as gl-run reads them. Run by tests/lib.bats
 * under the plain and the sanitizer build. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* parse s; the error (or "") into why */
static int parse(struct gl_policy *p, const char *s, char *why, size_t n)
{
	char *err = NULL;
	int r = parse_policy(p, s, strlen(s), &err);
	snprintf(why, n, "%s", err ? err : "");
	free(err);
	return r;
}

static void defaults(void)
{
	struct gl_policy p;
	char why[256];
	CHECK(parse(&p, "{\"clearances\":{}}", why, sizeof why) == 0, "%s", why);
	const struct gl_limits *l = gl_policy_limits(&p, "docs");
	CHECK(l->memory_mb == 512 && l->pids == 64 && l->tmp_mb == 64 && l->cpu_s == 30 &&
		      l->workspace_mb == 256,
	      "defaults are SPEC §4's");
	gl_policy_free(&p);
	struct gl_policy zero;
	memset(&zero, 0, sizeof zero);
	CHECK(gl_policy_limits(&zero, NULL)->memory_mb == 512, "a zeroed policy: defaults");
}

static void per_release(void)
{
	struct gl_policy p;
	char why[256];
	CHECK(parse(&p,
		    "{\"clearances\":{},\"limits\":{\"memory_mb\":256,\"releases\":{\"docs\":{\"pids\":8},"
		    "\"lint\":{\"memory_mb\":1024,\"cpu_s\":5}}}}",
		    why, sizeof why) == 0,
	      "%s", why);
	const struct gl_limits *g = gl_policy_limits(&p, NULL), *d = gl_policy_limits(&p, "docs"),
			       *l = gl_policy_limits(&p, "lint"), *o = gl_policy_limits(&p, "other");
	CHECK(g->memory_mb == 256 && g->pids == 64, "global fields over the defaults");
	CHECK(d->memory_mb == 256 && d->pids == 8, "a release's field over the global ones");
	CHECK(l->memory_mb == 1024 && l->cpu_s == 5 && l->pids == 64, "lint");
	CHECK(o == g, "an unnamed release: the global bounds");
	gl_policy_free(&p);
}

static void refused(void)
{
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{"{\"clearances\":{},\"limits\":[]}", "limits: not an object"},
		{"{\"clearances\":{},\"limits\":{\"memory\":1}}", "limits: unknown field"},
		{"{\"clearances\":{},\"limits\":{\"pids\":0}}", "limits.pids: 0 (from 1 to 65536)"},
		{"{\"clearances\":{},\"limits\":{\"memory_mb\":16}}", "limits.memory_mb: 16 (from 32"},
		{"{\"clearances\":{},\"limits\":{\"cpu_s\":1.5}}", "limits.cpu_s: not an integer"},
		{"{\"clearances\":{},\"limits\":{\"tmp_mb\":\"64\"}}", "limits.tmp_mb: not an integer"},
		{"{\"clearances\":{},\"limits\":{\"releases\":[]}}", "limits.releases: not an object"},
		{"{\"clearances\":{},\"limits\":{\"releases\":{\"docs\":{\"releases\":{}}}}}",
		 "limits.releases.\"docs\": unknown field"},
		{"{\"clearances\":{},\"limits\":{\"releases\":{\"docs\":{\"workspace_mb\":-1}}}}",
		 "limits.releases.\"docs\".workspace_mb: -1"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct gl_policy p;
		char why[256];
		CHECK(parse(&p, bad[i].doc, why, sizeof why) < 0 && strstr(why, bad[i].want),
		      "%s: got \"%s\", want \"%s\"", bad[i].doc, why, bad[i].want);
		gl_policy_free(&p);
	}
}

int main(void)
{
	defaults();
	per_release();
	refused();
	return check_done();
}
