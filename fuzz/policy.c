/* policy.c — the deployer's policy (lib/plan/policy.c): gl_policy_parse on
 * any bytes; a policy it took answers the questions gl-plan and gl-run ask
 * of it (clearances, routes, limits, a release's configuration in its
 * public form, the label of a file and of a
 * directory), over fixed names and paths, so the globs the input holds are
 * matched against real paths (lib/plan/policy_query.c). */
#include "fuzz.h"

#include "plan/policy.h"

static const char *const names[] = {"agent", "ocr.example", "docs", "", NULL};
static const char *const paths[] = {"/",
				    "/data",
				    "/data/hr/salary.csv",
				    "/data/finance/invoice.pdf",
				    "/data/public/notes/a/b/c.txt",
				    "/usr/share/dict/words",
				    "/opt/models/x/y/z/w.bin",
				    "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
				    NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gl_policy p;
	autofail struct gl_fail f = {0};
	if (gl_policy_parse(&p, (const char *)data, size, &f) == 0) {
		for (size_t i = 0; names[i]; i++) {
			gl_policy_clearance(&p, names[i]);
			gl_policy_route(&p, names[i]);
			gl_policy_limits(&p, names[i]);
			const struct gl_config *c = gl_policy_config(&p, names[i]);
			if (c)
				jv_free(gl_config_public(c));
		}
		gl_policy_limits(&p, NULL);
		for (size_t i = 0; paths[i]; i++) {
			gl_policy_label_for(&p, paths[i]);
			struct gl_labels l;
			if (gl_policy_label_for_dir(&p, paths[i], &l) == 0)
				gl_labels_free(&l);
		}
	}
	gl_policy_free(&p); /* safe on a refused policy: left empty */
	return 0;
}
