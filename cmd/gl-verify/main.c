/* gl-verify — the host's side of SPEC §3: pin a publisher's root, verify
 * and install releases. Parses flags, calls lib/sign/trust.h and lib/sign/install.h,
 * prints one JSON object. */
#define _GNU_SOURCE
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include "evidence/call_binding.h"
#include "sign/install.h"
#include "json/json.h"
#include "sign/keys.h"
#include "json/log.h"
#include "evidence/receipt_set.h"
#include "runtime/receipt.h"
#include "json/refusal.h"
#include "sign/trust.h"
#include "core/util.h"
#include "release/installed.h"

static const char usage[] =
    "usage: gl-verify pin REPO|ROOT.json\n"
    "       gl-verify install REPO PATH\n"
    "       gl-verify receipt FILE... --host KEY.pub [--expect-release H]\n"
    "                 [--expect-target-sha256 H] [--expect-manifest-sha256 H]\n"
    "                 [--expect-interpreter-sha256 H] [--expect-state STATE]\n"
    "                 [--expect-mode MODE] [--expect-tree-sha256 H]\n"
    "                 [--expect-config-sha256 H]\n"
    "                 [--expect-receipt ID] [--expect-profile PROFILE]\n"
    "       gl-verify call RESULTS --host KEY.pub --receipts DIR\n"
    "       gl-verify list [--releases DIR]\n"
    "every command also takes --log FILE (or GL_LOG=FILE): one JSON Lines\n"
    "         \"command\" event per run (what ran, exit, refusal code, elapsed).\n"
    "\n"
    "pin      trust REPO's root.json (or the given root file) explicitly; it must be\n"
    "         signed by its own root threshold and not expired.\n"
    "install  the TUF client workflow: refresh the root chain, then timestamp,\n"
    "         snapshot and targets (threshold, expiry, rollback, the versions and\n"
    "         hashes each names); check the target's length and hashes, extract it\n"
    "         read-only into $GL_HOME/releases/<sha256>/ and print the release record.\n"
    "         PATH is a target path listed in targets.json (read from the repository)\n"
    "         or a local file containing '/' (its basename is the target name).\n"
    "receipt  check each enforcement receipt (gl-run --receipts): the host key's\n"
    "         signature, canonical form, shape, state, timestamps and the expected\n"
    "         bindings; an exited receipt given with the launch receipt it closes\n"
    "         is checked against it. One JSON record per FILE with \"checks\" and\n"
    "         \"unchecked\" (what a receipt cannot prove). docs/receipts.md.\n"
    "call     check each result record of RESULTS (gl-run's output with --receipts;\n"
    "         - for stdin): the host key's signature over its id, mode, release and\n"
    "         the receipts it names, then each of those receipts in DIR as the\n"
    "         receipt of that id. One JSON record per result record.\n"
    "list     every release installed in $GL_HOME/releases (or DIR), one JSON\n"
    "         record each: release (sha256), name, version, runtime, protocol,\n"
    "         deterministic; by name and version (gl-run --release NAME@VERSION).\n"
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

/* gl-verify list [--releases DIR] (lib/release/installed.h). */
static int cmd_list(int argc, char **argv)
{
	const char *dir = NULL, *v;
	for (int i = 2; i < argc; i++) {
		if ((v = gl_flag_value(argc, argv, &i, "--releases", usage)))
			dir = v;
		else
			usage_error("list takes only --releases DIR");
	}
	autofree char *home = dir ? NULL : gl_home();
	autofree char *def = dir ? NULL : gl_xasprintf("%s/releases", home);
	autofail struct gl_fail f = {0};
	jv list;
	if (gl_installed_list(dir ? dir : def, &list, &f) < 0)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	jv_array_foreach(list, i, o)
	{
		(void)i;
		gl_json_emit(o);
	}
	jv_free(list);
	return GL_EXIT_OK;
}

static const char *hex_arg(const char *flag, const char *v)
{
	size_t n = strlen(v);
	if (n != 64 || strspn(v, "0123456789abcdef") != n)
		usage_error(gl_xasprintf("%s wants 64 lowercase hex digits", flag));
	return v;
}

/* The host's public key (--host), or exit 2. */
static void host_key(const char *host, struct gl_key *k)
{
	struct gl_fail f = {0};
	if (sodium_init() < 0)
		gl_die(GL_EXIT_USAGE, "libsodium: initialisation failed");
	if (gl_key_load(host, GL_KEY_PUBLIC, k, &f) != GL_E_OK)
		gl_die(GL_EXIT_USAGE, "--host %s", gl_fail_detail(&f));
}

/* gl-verify receipt (SPEC §9): offline, with only the host's public key. */
static int cmd_receipt(int argc, char **argv)
{
	const char *host = NULL, *v;
	struct gl_receipt_expect x = {0};
	const char *files[256];
	size_t nf = 0;
	for (int i = 2; i < argc; i++) {
		if ((v = gl_flag_value(argc, argv, &i, "--host", usage)))
			host = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-release", usage)))
			x.release = hex_arg("--expect-release", v);
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-target-sha256", usage)))
			x.target_sha256 = hex_arg("--expect-target-sha256", v);
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-manifest-sha256", usage)))
			x.manifest_sha256 = hex_arg("--expect-manifest-sha256", v);
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-interpreter-sha256", usage)))
			x.interpreter_sha256 = hex_arg("--expect-interpreter-sha256", v);
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-state", usage)))
			x.state = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-mode", usage)))
			x.mode = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-tree-sha256", usage)))
			x.tree_sha256 = hex_arg("--expect-tree-sha256", v);
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-config-sha256", usage)))
			x.config_sha256 = hex_arg("--expect-config-sha256", v);
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-receipt", usage)))
			x.receipt = hex_arg("--expect-receipt", v);
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-profile", usage)))
			x.profile = v;
		else if (argv[i][0] == '-' && argv[i][1])
			usage_error(gl_xasprintf("unknown option '%s'", argv[i]));
		else if (nf == sizeof files / sizeof *files)
			usage_error("at most 256 receipts at once");
		else
			files[nf++] = argv[i];
	}
	if (!host || !nf)
		usage_error("receipt takes FILE... and --host KEY.pub");
	if (x.state && strcmp(x.state, "rejected") && strcmp(x.state, "bootstrap_failed") &&
	    strcmp(x.state, "fully_enforced") && strcmp(x.state, "exited"))
		usage_error("--expect-state: rejected, bootstrap_failed, fully_enforced or exited");
	static const char *const modes[] = {"germline", "nosplit", "lazy",  "fresh",
					    "confined", "sigpin",  "sigifc"};
	bool mode_ok = !x.mode;
	for (size_t i = 0; x.mode && i < sizeof modes / sizeof *modes; i++)
		mode_ok |= !strcmp(x.mode, modes[i]);
	if (!mode_ok)
		usage_error("--expect-mode: germline, nosplit, lazy, fresh, confined, sigpin or "
			    "sigifc (gl-run's --mode)");
	if (x.profile && !gl_profile_find(x.profile))
		usage_error(gl_xasprintf("--expect-profile: no profile '%s' (docs/receipts.md)",
					 x.profile));
	struct gl_key k = {0};
	struct gl_fail f = {0};
	host_key(host, &k);
	jv recs[256];
	if (gl_receipt_set_verify(files, nf, k.pk, &x, gl_now(), recs, &f) < 0)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	bool all_ok = true;
	for (size_t i = 0; i < nf; i++) {
		all_ok &= gl_json_get_bool(recs[i], "ok", 0) == 1;
		gl_json_emit(recs[i]);
	}
	gl_key_free(&k);
	return all_ok ? GL_EXIT_OK : GL_EXIT_REFUSED;
}

/* gl-verify call (SPEC §9, extended; lib/evidence/call_binding.h). */
static int cmd_call(int argc, char **argv)
{
	const char *host = NULL, *dir = NULL, *profile = NULL, *file = NULL, *v;
	for (int i = 2; i < argc; i++) {
		if ((v = gl_flag_value(argc, argv, &i, "--host", usage)))
			host = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--receipts", usage)))
			dir = v;
		else if ((v = gl_flag_value(argc, argv, &i, "--expect-profile", usage)))
			profile = v;
		else if (argv[i][0] == '-' && argv[i][1])
			usage_error(gl_xasprintf("unknown option '%s'", argv[i]));
		else if (file)
			usage_error("call takes one RESULTS file");
		else
			file = argv[i];
	}
	if (!host || !dir || !file)
		usage_error("call takes RESULTS, --host KEY.pub and --receipts DIR");
	if (profile && !gl_profile_find(profile))
		usage_error(gl_xasprintf("--expect-profile: no profile '%s' (docs/receipts.md)",
					 profile));
	struct gl_key k = {0};
	struct gl_fail f = {0};
	host_key(host, &k);
	int fd = strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		gl_die(GL_EXIT_USAGE, "%s: %s", file, strerror(errno));
	struct gl_lines *lr = gl_xmalloc(sizeof *lr);
	gl_lines_init(lr, fd);
	autobuf struct gl_buf b = {0};
	bool all_ok = true;
	size_t line = 0;
	for (;;) {
		enum gl_line_status st = gl_lines_next(lr, &b, GL_JSON_LINE_MAX);
		if (st == GL_LINE_EOF)
			break;
		if (st == GL_LINE_IO)
			gl_die(GL_EXIT_USAGE, "%s: %s", file, strerror(errno));
		line++;
		jv out;
		if (st == GL_LINE_TOO_LONG) {
			out = JV_OBJECT(jv_string("line"), jv_number((double)line), jv_string("ok"),
					jv_false(), jv_string("error"), jv_string("too_long"));
		} else if (b.len == 0) {
			line--; /* a blank line is no record */
			continue;
		} else {
			if (gl_call_check(gl_json_parse(b.data, b.len), k.pk, dir, profile,
					  gl_now(), &out, &f) < 0)
				gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
			out = jv_object_set(out, jv_string("line"), jv_number((double)line));
		}
		all_ok &= gl_json_get_bool(out, "ok", 0) == 1;
		gl_json_emit(out);
	}
	free(lr);
	if (fd > 0)
		close(fd);
	gl_key_free(&k);
	return all_ok ? GL_EXIT_OK : GL_EXIT_REFUSED;
}

static int run(int argc, char **argv)
{
	if (!strcmp(argv[1], "receipt"))
		return cmd_receipt(argc, argv);
	if (!strcmp(argv[1], "call"))
		return cmd_call(argc, argv);
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc, argv);
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

int main(int argc, char **argv)
{
	gl_stdio_init("gl-verify");
	gl_std_flags(argc, argv, usage);
	gl_log_take_flag("gl-verify", &argc, argv); /* --log FILE, anywhere (lib/json/log.h) */
	if (argc < 2)
		usage_error("missing command");
	int rc = run(argc, argv);
	gl_log_command(argv[1], rc, rc ? gl_fail_last() : NULL);
	gl_log_close();
	return rc;
}
