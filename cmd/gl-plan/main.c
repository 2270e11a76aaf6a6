/* gl-plan — call envelopes in, planned envelopes out (SPEC §4).
 *
 * Reads JSON Lines on stdin; for each call envelope writes the envelope
 * with "plan" added (paper Algorithm 1 lines 1–4, lib/plan/plan.c), one line per
 * input, flushed. A bad record yields {"ok":false,"error","detail"} and the
 * stream goes on; the exit status is then 1. docs/plan.md. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/stat.h>

#include "plan/call.h"
#include "broker/itempath.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "json/log.h"
#include "release/manifest.h"
#include "plan/plan.h"
#include "plan/policy.h"
#include "core/util.h"

static const char usage[] =
    "usage: gl-plan --policy FILE [--mode germline|nosplit] [--releases DIR]\n"
    "               [--log FILE]\n"
    "\n"
    "Reads call envelopes (JSON Lines) on stdin and writes each one with \"plan\"\n"
    "added: the groups of copies a call runs as (paper Algorithm 1, Theorem 3).\n"
    "\n"
    "  --policy FILE     clearances, routes and labels (SPEC §4, docs/formats.md)\n"
    "  --mode MODE       germline (default): declared-destination splitting;\n"
    "                    nosplit: one group holding every item and member\n"
    "  --releases DIR    manifests from DIR/<sha256>/manifest.json\n"
    "                    (default: $GL_HOME/releases)\n"
    "  --log FILE        append JSON Lines events (plans, refusals; never item\n"
    "                    contents) to FILE (or GL_LOG)\n"
    "\n"
    "Exit status: 0 all planned, 1 some record refused, 2 usage or I/O error.\n";

static GL_NORETURN void bad_usage(const char *what)
{
	gl_warn("%s", what);
	fputs(usage, stderr);
	exit(GL_EXIT_USAGE);
}

static bool is_error_record(jv v)
{
	jv ok = gl_json_get(v, "ok");
	bool failed = jv_get_kind(ok) == JV_KIND_FALSE && gl_json_get_str(v, "error");
	jv_free(ok);
	return failed;
}

/* Write the planned envelope: the envelope's bytes as they came (strictly
 * parsed already), with ,"plan":{…} added before the closing brace. When
 * gl-plan had to change the envelope (items_from_args items appended, an
 * old "plan" dropped) the envelope is written compactly with sorted keys
 * instead, and the plan added the same way. */
static bool emit_planned(const struct gl_buf *line, const struct gl_call *c,
			 const struct gl_plan *plan)
{
	autobuf struct gl_buf out = {0};
	jv key = jv_string("plan");
	if (c->env_changed || jv_object_has(jv_copy(c->env), jv_copy(key))) {
		jv env = jv_object_delete(jv_copy(c->env), jv_copy(key));
		gl_json_dump(&out, env);
		jv_free(env);
	} else {
		gl_buf_add(&out, line->data, line->len);
	}
	jv_free(key);
	while (out.len > 0 && out.data[out.len - 1] != '}')
		out.len--; /* trailing whitespace: the value is an object */
	out.len--;
	/* An envelope is never empty (it has a release), so a comma follows. */
	gl_buf_adds(&out, ",\"plan\":");
	gl_plan_dump(&out, plan, c);
	gl_buf_adds(&out, "}\n");
	if (out.len - 1 > GL_JSON_LINE_MAX) {
		/* gl-run could not read it (SPEC §2, lib/json/jsonl.h): a record it
		 * passes on and gl-damp counts instead */
		jv extra = JV_OBJECT(jv_string("release"), jv_string(c->release));
		if (jv_is_valid(c->id))
			extra = jv_object_set(extra, jv_string("id"), jv_copy(c->id));
		gl_json_emit_error(extra, GL_ERR_OVERSIZED,
				   "the planned envelope would be longer than the pipeline's line "
				   "limit of %u bytes (SPEC §2)",
				   GL_JSON_LINE_MAX);
		return false;
	}
	if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0)
		gl_die_errno(GL_EXIT_USAGE, "writing to stdout");
	return true;
}

/* One input line; returns false when the record was refused. */
static bool plan_line(const struct gl_buf *line, const struct gl_policy *pol,
		      struct gl_releases *rel, const struct gl_state_roots *roots,
		      enum gl_plan_mode mode)
{
	jv env = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(env)) {
		jv msg = jv_invalid_get_msg(env);
		gl_json_emit_error(jv_null(), "bad_json", "%s", jv_string_value(msg));
		jv_free(msg);
		return false;
	}
	if (jv_get_kind(env) == JV_KIND_OBJECT && is_error_record(env)) {
		gl_json_emit(env); /* an upstream refusal passes through */
		return false;
	}
	struct gl_call c;
	struct gl_call_error err;
	/* item paths never name host state (lib/broker/itempath.h; gl-run's broker
	 * checks again on what it opens) */
	bool ok = gl_call_read(&c, env, pol, rel, &err) == 0 &&
		  gl_itempath_check_call(&c, roots, &err) == 0;
	if (ok) {
		struct gl_plan plan;
		gl_plan_make(&plan, &c, pol, mode);
		ok = emit_planned(line, &c, &plan);
		gl_log_event("plan", JV_OBJECT(jv_string("id"), jv_is_valid(c.id) ? jv_copy(c.id) : jv_null(),
					       jv_string("release"), jv_string(c.release),
					       jv_string("function"), jv_string(c.function),
					       jv_string("groups"), jv_number(plan.ngroup)));
		gl_plan_free(&plan);
	} else {
		jv extra = jv_object();
		if (jv_is_valid(c.id))
			extra = jv_object_set(extra, jv_string("id"), jv_copy(c.id));
		gl_log_event("refusal", JV_OBJECT(jv_string("id"), jv_is_valid(c.id) ? jv_copy(c.id) : jv_null(),
						  jv_string("error"), jv_string(err.code)));
		gl_json_emit_error(extra, err.code, "%s", err.detail);
		free(err.detail);
	}
	gl_call_free(&c);
	return ok;
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-plan");
	gl_std_flags(argc, argv, usage);
	const char *policy_path = NULL, *mode_name = "germline", *releases = NULL, *v;
	const char *log_path = NULL;
	for (int i = 1; i < argc; i++) {
		if ((v = gl_flag_value(argc, argv, &i, "--policy", usage)))
			policy_path = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--mode", usage)))
			mode_name = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--releases", usage)))
			releases = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--log", usage)))
			log_path = v;
		else
			bad_usage(gl_xasprintf("unknown argument '%s'", argv[i]));
	}
	if (!policy_path)
		bad_usage("--policy is required");
	gl_log_open("gl-plan", log_path);
	enum gl_plan_mode mode;
	if (!strcmp(mode_name, "germline"))
		mode = GL_PLAN_GERMLINE;
	else if (!strcmp(mode_name, "nosplit"))
		mode = GL_PLAN_NOSPLIT;
	else
		bad_usage(gl_xasprintf("--mode must be germline or nosplit, not '%s'", mode_name));

	struct gl_policy pol;
	struct gl_fail f = {0};
	if (gl_policy_load(&pol, policy_path, &f) < 0)
		gl_die(GL_EXIT_USAGE, "policy %s", gl_fail_detail(&f));

	autofree char *home = gl_home(), *dir = NULL;
	if (releases) {
		struct stat st;
		if (stat(releases, &st) < 0)
			gl_die_errno(GL_EXIT_USAGE, "--releases %s", releases);
		if (!S_ISDIR(st.st_mode))
			gl_die(GL_EXIT_USAGE, "--releases %s: not a directory", releases);
		dir = gl_xstrdup(releases);
	} else {
		dir = gl_xasprintf("%s/releases", home);
	}
	struct gl_releases *rel = gl_releases_new(dir);
	/* what no item path may reach: GL_HOME and the releases */
	const char *const state[] = {home, dir, NULL};
	struct gl_state_roots roots;
	gl_state_roots_init(&roots, state);

	struct gl_lines in;
	gl_lines_init(&in, 0);
	autobuf struct gl_buf line = {0};
	bool failed = false;
	while (gl_lines_record(&in, &line, &failed))
		failed |= !plan_line(&line, &pol, rel, &roots, mode);
	gl_state_roots_free(&roots);
	gl_releases_free(rel);
	gl_policy_free(&pol);
	gl_log_close();
	return failed ? GL_EXIT_REFUSED : GL_EXIT_OK;
}
