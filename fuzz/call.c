/* call.c — a call envelope (lib/plan/call.c), as gl-plan reads one line:
 * the strict reader, then gl_call_read against a fixed policy (the one of
 * tests/fixtures/plan/policy.json, with read_paths) and two installed
 * releases (the manifests of tests/fixtures/plan/manifests/docs.json, at
 * release dddd…, and valid-exec-mcp.json, at eeee…), written once into a
 * temporary releases directory. An envelope it took is planned in both
 * modes and the plan written, as gl-plan does. */
#include "fuzz.h"

#include <stdio.h>
#include <sys/stat.h>

#include "json/json.h"
#include "plan/call.h"
#include "plan/plan.h"
#include "plan/policy.h"

static const char policy_json[] =
    "{\"clearances\":{\"ocr.example\":[\"finance\"],\"mail.example\":[\"projx\"],"
    "\"blog.example\":[],\"agent\":[\"finance\",\"hr\"],\"accountant\":[\"finance\"]},"
    "\"routes\":{\"ocr.example\":\"127.0.0.1:18080\",\"mail.example\":\"[::1]:2525\"},"
    "\"labels\":{\"/data/hr/**\":[\"hr\"],\"/data/finance/*.pdf\":[\"finance\"],"
    "\"/data/public/**\":[]},\"read_paths\":[\"/usr/share/dict\"]}";

static const char docs_manifest[] =
    "{\"name\":\"docs\",\"version\":\"1.1.0\",\"runtime\":\"python\",\"entry\":\"docs_tool\","
    "\"protocol\":\"germline\",\"description\":\"OCR and document helpers\","
    "\"functions\":{\"ocr_annotate\":{\"destinations\":[\"ocr.example\"]},"
    "\"ocr_pdf\":{\"destinations\":[\"ocr.example\"]},\"summarize\":{\"destinations\":[]},"
    "\"share\":{\"destinations\":[\"ocr.example\",\"mail.example\"]},"
    "\"fetch\":{\"destinations_from_call\":true},"
    "\"annotate_to\":{\"destinations\":[\"ocr.example\"],\"destinations_from_call\":true},"
    "\"read_files\":{\"destinations\":[],\"items_from_args\":[\"path\",\"paths\"]}},"
    "\"read_paths\":[\"/usr/share/dict\"],\"deterministic\":true}";

static const char mcp_manifest[] =
    "{\"name\":\"files-mcp\",\"version\":\"2.0.0+build.7\",\"runtime\":\"exec\","
    "\"entry\":[\"bin/server\",\"--stdio\"],\"protocol\":\"mcp-stdio\","
    "\"functions\":{\"read-file\":{\"items_from_args\":[\"path\"]},"
    "\"web.fetch\":{\"destinations_from_call\":true},"
    "\"ping\":{\"destinations\":[\"10.0.0.1\",\"2001:db8::1\",\"localhost\"]},"
    "\"resources/read\":{\"items_from_args\":[\"uri\"]}}}";

#define DOCS "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define MCP "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

static struct gl_policy pol;
static struct gl_releases *rel;
static char dir[] = "/tmp/gl-fuzz-call.XXXXXX";

static void cleanup(void)
{
	gl_releases_free(rel);
	gl_policy_free(&pol);
	gl_rm_rf(dir);
}

static void install(const char *sha, const char *manifest)
{
	autofree char *d = gl_xasprintf("%s/%s", dir, sha);
	autofree char *m = gl_xasprintf("%s/manifest.json", d);
	if (mkdir(d, 0700) < 0 || gl_atomic_write(m, manifest, strlen(manifest), 0600) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct gl_fail f = {0};
	if (!mkdtemp(dir) || gl_policy_parse(&pol, policy_json, strlen(policy_json), &f) < 0)
		abort();
	install(DOCS, docs_manifest);
	install(MCP, mcp_manifest);
	rel = gl_releases_new(dir);
	atexit(cleanup);
	return 0;
}

static void plan(const struct gl_call *c, enum gl_plan_mode mode)
{
	struct gl_plan p;
	autobuf struct gl_buf out = {0};
	gl_plan_make(&p, c, &pol, mode);
	gl_plan_dump(&out, &p, c);
	gl_plan_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jv env = gl_json_parse((const char *)data, size);
	if (!jv_is_valid(env)) {
		jv_free(env);
		return 0;
	}
	struct gl_call c;
	struct gl_call_error err = {0};
	if (gl_call_read(&c, env, &pol, rel, &err) == 0) {
		plan(&c, GL_PLAN_GERMLINE);
		plan(&c, GL_PLAN_NOSPLIT);
	} else {
		free(err.detail);
	}
	gl_call_free(&c);
	return 0;
}
