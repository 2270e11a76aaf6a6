/* Unit tests of lib/plan/readpaths.c (the deployer grants read_paths; issue 13
 * item 1) and of lib/json/jsonl.c's top-level field scan (item 7), without a
 * launch. Run by tests/read-paths.bats under the plain and the sanitizer
 * build. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/json.h"
#include "json/jsonl.h"
#include "plan/policy.h"
#include "plan/readpaths.h"

#include "check.h"

/* gl_policy_parse with its failure's detail in *err (malloc'd, or NULL). */
static int parse_policy(struct gl_policy *p, const char *buf, size_t len, char **err)
{
	struct gl_fail f = {0};
	int r = gl_policy_parse(p, buf, len, &f);
	*err = f.detail;
	return r;
}

static char tmp[256];

/* Does a manifest asking for path pass pol? want: NULL (admitted) or the
 * rule the detail must name. */
static void expect(const struct gl_policy *pol, const char *path, const char *want)
{
	autofree char *home = gl_xasprintf("%s/home", tmp);
	const char *state[] = {home, NULL};
	jv m = JV_OBJECT(jv_string("read_paths"), JV_ARRAY(jv_string(path)));
	autofail struct gl_fail f = {0};
	int rc = gl_readpaths_check(pol, state, m, &f);
	jv_free(m);
	if (!want)
		CHECK(rc == 0, "%s: refused: %s", path, gl_fail_detail(&f));
	else if (rc == 0)
		CHECK(0, "%s: admitted, wanted %s", path, want);
	else
		CHECK(f.code == GL_E_READ_PATHS && strstr(gl_fail_detail(&f), want) != NULL,
		      "%s: %s (wanted %s)", path, gl_fail_detail(&f), want);
}

/* A policy labelling TMP/LABELS/hr/ *.csv hr, granting read_paths. */
static void policy_at(struct gl_policy *p, const char *labels, const char *read_paths)
{
	autofree char *doc = gl_xasprintf("{\"clearances\":{},\"labels\":{\"%s/%s/hr/*.csv\":"
					  "[\"hr\"]},\"read_paths\":%s}",
					  tmp, labels, read_paths);
	char *err = NULL;
	if (parse_policy(p, doc, strlen(doc), &err) < 0) {
		fprintf(stderr, "policy: %s\n", err);
		exit(2);
	}
}

static void policy(struct gl_policy *p, const char *read_paths)
{
	policy_at(p, "data", read_paths);
}

static void readpaths(void)
{
	char b[512];
	snprintf(tmp, sizeof tmp, "/tmp/gl-rp-unit-XXXXXX");
	if (!mkdtemp(tmp))
		exit(2);
	const char *dirs[] = {"home", "home/slots", "data", "data/hr", "data2"};
	for (size_t i = 0; i < 5; i++) {
		snprintf(b, sizeof b, "%s/%s", tmp, dirs[i]);
		mkdir(b, 0700);
	}
	char l1[512], l2[512];
	snprintf(b, sizeof b, "%s/home/slots", tmp);
	snprintf(l1, sizeof l1, "%s/link", tmp);
	CHECK(symlink(b, l1) == 0, "symlink");
	snprintf(l2, sizeof l2, "%s/rootlink", tmp);
	CHECK(symlink("/", l2) == 0, "symlink");

	struct gl_policy all, some;
	policy(&all, "[\"/**\"]");
	policy(&some, "[\"/usr/share/**\"]");
	expect(&all, "/usr/share", NULL);
	expect(&some, "/usr/share", NULL);       /* "**" matches zero components */
	expect(&some, "/usr/share/dict", NULL);
	expect(&some, "/usr/lib", "not_granted");
	expect(NULL, "/usr/share", "not_granted"); /* no policy: none granted */
	expect(&all, "/proc", "proc_sys");
	expect(&all, "/proc/self/environ", "proc_sys");
	expect(&all, "/sys", "proc_sys");
	expect(&all, "/procfs", NULL); /* a sibling, not beneath */
	expect(&all, "/dev", "host_runtime");
	expect(&all, "/dev/sda", "host_runtime");
	expect(&all, "/run/secrets", "host_runtime");
	expect(&all, "/var/run", "host_runtime");
	expect(&all, "/var/lib", NULL);
#define AT(rel) (snprintf(b, sizeof b, "%s%s", tmp, rel), b)
	expect(&all, AT("/home"), "gl_home");
	expect(&all, AT("/home/slots/x/y"), "gl_home");
	expect(&all, AT(""), "gl_home"); /* an ancestor */
	expect(&all, "/tmp", "gl_home");
	expect(&all, AT("/homework"), NULL);
	expect(&all, AT("/data"), "labelled");     /* an ancestor of a labelled path */
	expect(&all, AT("/data/hr"), "labelled");
	expect(&all, AT("/data/hr/a.csv"), "labelled");
	expect(&all, AT("/data/hr/a.csv/x"), "labelled"); /* beneath a labelled path */
	expect(&all, AT("/data/hr/a.txt"), NULL);  /* no labels glob may match it */
	expect(&all, AT("/data2"), NULL);
	expect(&all, AT("/link"), "gl_home");      /* through the symlink */
	expect(&all, AT("/link/later/x"), "gl_home"); /* not there yet */
	expect(&all, AT("/rootlink"), "root");
	expect(&all, AT("/rootlink/proc"), "proc_sys");
	/* granted only when the resolved path is granted too */
	struct gl_policy named;
	char rp[600];
	snprintf(rp, sizeof rp, "[\"%s/rootlink\"]", tmp);
	policy(&named, rp);
	expect(&named, AT("/rootlink"), "root");
	gl_policy_free(&named);
	snprintf(b, sizeof b, "%s/data2/etc", tmp);
	CHECK(symlink("/etc", b) == 0, "symlink");
	snprintf(rp, sizeof rp, "[\"%s/data2/**\"]", tmp);
	policy(&named, rp);
	expect(&named, AT("/data2/etc"), "not_granted"); /* /etc is not granted */
	expect(&named, AT("/data2"), NULL);
	gl_policy_free(&named);
	/* a labels glob (and a read_paths glob) through a symlink: resolved too */
	snprintf(b, sizeof b, "%s/real/hr", tmp);
	CHECK(gl_mkdir_p(b, 0700) == 0, "mkdir");
	snprintf(b, sizeof b, "%s/real", tmp);
	snprintf(rp, sizeof rp, "%s/alias", tmp);
	CHECK(symlink(b, rp) == 0, "symlink");
	snprintf(rp, sizeof rp, "[\"%s/alias/**\"]", tmp);
	policy_at(&named, "alias", rp);
	expect(&named, AT("/real"), "labelled");
	expect(&named, AT("/real/hr/a.csv"), "labelled");
	expect(&named, AT("/alias/hr"), "labelled");
	expect(&named, AT("/alias/notes"), NULL); /* granted as alias/ **, resolved too */
	expect(&named, AT("/real/notes"), NULL); /* the same directory */
	expect(&named, AT("/data2"), "not_granted");
	gl_policy_free(&named);
	/* bad policy read_paths */
	const char *bad[] = {"\"/x\"", "[\"x\"]", "[\"/x/../y\"]", "[\"/x/\"]", "[1]", "{}"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct gl_policy p;
		autofree char *doc = gl_xasprintf("{\"clearances\":{},\"read_paths\":%s}", bad[i]);
		char *err = NULL;
		CHECK(parse_policy(&p, doc, strlen(doc), &err) < 0 && strstr(err, "read_paths"),
		      "%s: accepted", bad[i]);
		free(err);
		gl_policy_free(&p);
	}
	gl_policy_free(&all);
	gl_policy_free(&some);
	autofree char *cmd = gl_xasprintf("rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		failures++;
}

/* gl_jsonl_named on the first n bytes of s, as gl_json_dump writes it
 * (keys sorted) */
static void named(const char *s, size_t n, const char *want)
{
	jv o = gl_jsonl_named(s, n);
	struct gl_buf b = {0};
	gl_json_dump(&b, o);
	jv_free(o);
	CHECK(!strcmp(b.data, want), "%.60s…: %s, wanted %s", s, b.data, want);
	gl_buf_free(&b);
}

#define H "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define K "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void jsonl(void)
{
	const char *full = "{\"id\":\"c1\",\"release\":\"" H "\",\"pad\":\"xxxx";
	named(full, strlen(full), "{\"id\":\"c1\",\"release\":\"" H "\"}");
	named(full, 20, "{\"id\":\"c1\"}"); /* release cut */
	const char *nest = "{\"args\":{\"release\":\"" K "\",\"s\":\"}\\\"{\"},\"id\":7,"
			   "\"release\":\"" H "\",\"x\":[";
	named(nest, strlen(nest), "{\"id\":7,\"release\":\"" H "\"}");
	const char *only_nested = "{\"args\":{\"release\":\"" K "\"},\"pad\":\"xx";
	named(only_nested, strlen(only_nested), "{}");
	const char *esc = "{\"rel\\u0065ase\":\"" H "\",\"pad\":\"";
	named(esc, strlen(esc), "{}");
	const char *bad = "{\"release\":\"ABC\",\"id\":{\"x\":1},\"pad\":\"";
	named(bad, strlen(bad), "{}");
	named("xxxxxxxx", 8, "{}");
	named("", 0, "{}");
	const char *ws = " { \"release\" : \"" H "\" , \"id\" : \"c 2\" ,";
	named(ws, strlen(ws), "{\"id\":\"c 2\",\"release\":\"" H "\"}");
}

/* gl-run's capped record: values withheld, triggers kept, or counted when
 * they alone are too long */
static void capped(void)
{
	size_t big = GL_JSON_LINE_MAX + 16;
	char *pad = malloc(big + 1);
	memset(pad, 'x', big);
	pad[big] = 0;
	jv res = JV_ARRAY(JV_OBJECT(jv_string("consumer"), jv_string("agent"), jv_string("ok"),
				    jv_true(), jv_string("value"), jv_string(pad)));
	jv trig = JV_ARRAY(JV_OBJECT(jv_string("id"), jv_string("t1"), jv_string("witness"),
				     jv_string("/w/t1.json")));
	jv rec = JV_OBJECT(jv_string("id"), jv_string("c1"), jv_string("ok"), jv_true(),
			   jv_string("release"), jv_string(H), jv_string("results"), res,
			   jv_string("triggers"), trig, jv_string("delivered"), jv_array());
	CHECK(!gl_jsonl_fits(rec), "the padded record fits");
	jv out = gl_jsonl_oversized_result(rec);
	struct gl_buf b = {0};
	gl_json_dump(&b, out);
	jv_free(out);
	CHECK(!strcmp(b.data, "{\"detail\":\"the result record would be longer than the "
			      "pipeline's line limit of 16 MiB or deeper than its depth "
			      "limit of 64 (SPEC §2): every value is "
			      "withheld\",\"error\":\"oversized\",\"id\":\"c1\",\"ok\":false,"
			      "\"release\":\"" H "\",\"results\":[{\"consumer\":\"agent\","
			      "\"error\":\"oversized\",\"ok\":false}],\"triggers\":[{\"id\":"
			      "\"t1\",\"witness\":\"/w/t1.json\"}]}"),
	      "%.300s", b.data);
	gl_buf_free(&b);
	/* triggers that alone do not fit: counted, not kept */
	b = (struct gl_buf){0};
	trig = JV_ARRAY(JV_OBJECT(jv_string("id"), jv_string(pad)), jv_string("t2"));
	rec = JV_OBJECT(jv_string("id"), jv_number(3), jv_string("release"), jv_string(H),
			jv_string("triggers"), trig);
	out = gl_jsonl_oversized_result(rec);
	CHECK(gl_jsonl_fits(out), "still too long");
	jv n = gl_json_get(out, "triggers_withheld");
	CHECK(jv_get_kind(n) == JV_KIND_NUMBER && jv_number_value(n) == 2, "triggers_withheld");
	jv_free(n);
	jv_free(out);
	gl_buf_free(&b);
	free(pad);
}

int main(void)
{
	readpaths();
	jsonl();
	capped();
	return check_done();
}
