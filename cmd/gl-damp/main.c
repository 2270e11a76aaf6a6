/* gl-damp — result records and verdicts -> penalties and suppression
 * (SPEC §8; the paper's Appendix B-E). The rule and the state file live in
 * lib/damp/damp.c, the per-record transaction in lib/damp/damp_stream.c, the
 * analysis and the simulator in lib/damp/damp_sim.c; flags in args.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "damp/damp.h"
#include "damp/damp_sim.h"
#include "damp/damp_stream.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "json/log.h"
#include "core/util.h"

#include "args.h"

static int analyze(const struct args *a)
{
	jv r = gl_damp_analyze(&a->params, a->rates, a->nrates);
	if (a->text)
		return gl_damp_analyze_text(&a->params, r);
	gl_json_emit(r);
	return GL_EXIT_OK;
}

static int simulate(const struct args *a)
{
	struct gl_damp_sim_result res;
	gl_damp_simulate(&a->params, &a->sim, &res);
	if (a->text)
		return gl_damp_simulate_text(&a->sim, &res);
	gl_json_emit(gl_damp_sim_json(&a->params, &a->sim, &res));
	return GL_EXIT_OK;
}

static int stream(const struct args *a)
{
	autofree char *path = NULL;
	if (a->state) {
		path = gl_xstrdup(a->state);
	} else {
		autofree char *home = gl_home();
		if (gl_mkdir_p(home, 0700) < 0)
			gl_die_errno(GL_EXIT_USAGE, "%s", home);
		path = gl_xasprintf("%s/damp.json", home);
	}
	struct gl_damp_store store;
	autofail struct gl_fail f = {0};
	if (gl_damp_store_open(&store, path, &f) < 0)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	/* Refuse a corrupt state before reading any record. */
	if (gl_damp_store_begin(&store, &f) < 0)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	gl_damp_store_abort(&store);

	gl_log_open("gl-damp", a->log);
	struct gl_lines rd;
	gl_lines_init(&rd, STDIN_FILENO);
	autobuf struct gl_buf line = {0};
	uint64_t lineno = 0;
	bool all_ok = true;
	for (;;) {
		enum gl_line_status ls = gl_lines_next(&rd, &line, GL_JSON_LINE_MAX);
		if (ls == GL_LINE_EOF)
			break;
		if (ls == GL_LINE_IO)
			gl_die_errno(GL_EXIT_USAGE, "reading stdin");
		lineno++;
		int rc;
		if (ls == GL_LINE_TOO_LONG) {
			rc = gl_damp_stream_too_long(&store, &a->params, &line, lineno, &f);
			all_ok = false;
		} else if (line.data[strspn(line.data, " \t\r")] == 0) {
			continue; /* a blank line is not a record */
		} else {
			rc = gl_damp_stream_line(&store, &a->params, &line, lineno, &f);
			all_ok &= rc == 1;
		}
		if (rc < 0)
			gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	}
	gl_damp_store_close(&store);
	gl_log_close();
	return all_ok ? GL_EXIT_OK : GL_EXIT_REFUSED;
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-damp");
	gl_std_flags(argc, argv, gl_damp_usage);
	struct args a = {0};
	parse(argc, argv, &a);
	switch (a.mode) {
	case ANALYZE: return analyze(&a);
	case SIMULATE: return simulate(&a);
	case STREAM: break;
	}
	return stream(&a);
}
