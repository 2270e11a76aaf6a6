/* gl-verify — the host's side of SPEC §3: pin a publisher's root, verify
 * and install releases. Parses flags, calls lib/trust.h and lib/install.h,
 * prints one JSON object. */
#define _GNU_SOURCE
#include <string.h>

#include "install.h"
#include "json.h"
#include "refusal.h"
#include "trust.h"
#include "util.h"

static const char usage[] =
    "usage: gl-verify pin REPO|ROOT.json\n"
    "       gl-verify install REPO FILE\n"
    "\n"
    "pin      trust REPO's root.json (or the given root file) explicitly; it must be\n"
    "         signed by its own root threshold and not expired.\n"
    "install  refresh the root chain, verify targets.json, check FILE's length and\n"
    "         SHA-256, extract it read-only into $GL_HOME/releases/<sha256>/ and print\n"
    "         the release record. FILE is a target name (read from REPO/targets/) or a\n"
    "         path containing '/' (its basename is the target name).\n"
    "\n"
    "State lives in GL_HOME (default ${XDG_STATE_HOME:-$HOME/.local/state}/germline).\n"
    "Prints one JSON object. Exit 0 ok; 1 refused ({\"ok\":false,\"error\":CODE,...});\n"
    "2 usage or I/O error. See docs/signing.md.\n";

GL_NORETURN static void usage_error(const char *msg)
{
	fprintf(stderr, "%s: %s\n%s", gl_prog, msg, usage);
	exit(GL_EXIT_USAGE);
}

static int finish(enum gl_refusal r, struct gl_fail *f, jv out)
{
	if (r != GL_R_OK)
		return gl_fail_report(f);
	gl_json_emit(out);
	return GL_EXIT_OK;
}

static int cmd_pin(int argc, char **argv)
{
	if (argc != 3)
		usage_error("pin takes one argument");
	autofree char *home = gl_home();
	autofail struct gl_fail f = {0};
	jv out = jv_invalid();
	return finish(gl_trust_pin(home, argv[2], gl_now(), &out, &f), &f, out);
}

static int cmd_install(int argc, char **argv)
{
	if (argc != 4)
		usage_error("install takes two arguments");
	autofree char *home = gl_home();
	autofail struct gl_fail f = {0};
	jv rec = jv_invalid();
	enum gl_refusal r = gl_install(home, argv[2], argv[3], gl_now(), &rec, &f);
	if (r != GL_R_OK)
		return gl_fail_report(&f);
	jv out = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	return finish(r, &f, jv_object_set(out, jv_string("release"), rec));
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-verify");
	gl_std_flags(argc, argv, usage);
	if (argc < 2)
		usage_error("missing command");
	for (int i = 2; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			usage_error("unknown option");
	}
	if (!strcmp(argv[1], "pin"))
		return cmd_pin(argc, argv);
	if (!strcmp(argv[1], "install"))
		return cmd_install(argc, argv);
	usage_error("unknown command");
}
