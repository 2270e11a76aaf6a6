/* gl-sign — the publisher's side of SPEC §3: keys, repository metadata,
 * reproducible release archives. Parses flags, loads keys, calls
 * lib/sign/publish.h, prints one JSON object. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <string.h>

#include "json/json.h"
#include "sign/keys.h"
#include "json/log.h"
#include "sign/publish.h"
#include "json/refusal.h"
#include "core/util.h"

static const char usage[] =
    "usage: gl-sign keygen [--no-passphrase] [--force] OUT\n"
    "       gl-sign init REPO --root-key K... --targets-key K... [--snapshot-key K...]\n"
    "                    [--timestamp-key K...] [--threshold N] [--expires DAYS|TIME]\n"
    "                    [--no-consistent-snapshot]\n"
    "       gl-sign pack SRC_DIR OUT.tar.gz\n"
    "       gl-sign add REPO --key K... [--expires DAYS|TIME] [--minisign] ARCHIVE\n"
    "       gl-sign remove REPO --key K... [--expires DAYS|TIME] TARGET\n"
    "       gl-sign timestamp REPO --key K... [--expires DAYS|TIME]\n"
    "       gl-sign rotate REPO [--role ROLE] --key OLD... --new-key NEW...\n"
    "                      [--threshold N] [--expires DAYS|TIME]\n"
    "\n"
    "A TUF 1.0 repository: roles root, targets, snapshot and timestamp (snapshot and\n"
    "timestamp keys default to the targets keys), consistent snapshots by default.\n"
    "add and remove re-sign targets, snapshot and timestamp, each with the --key keys\n"
    "its role lists; timestamp renews timestamp.json alone (a cron job); rotate\n"
    "gives ROLE (root, targets, snapshot or timestamp; default root) new keys in\n"
    "root version N+1, signed by the old root keys (and the new ones for root).\n"
    "K names a key by path prefix (K.key, K.pub) or by its .key/.pub path; give\n"
    "several after one flag or repeat the flag. Passphrases come from GL_PASSPHRASE,\n"
    "else from the terminal. --expires takes days from now or an RFC 3339 UTC time\n"
    "(defaults: root 365 days, targets 90, snapshot 7, timestamp 1; for init and add\n"
    "it sets root and targets, for timestamp the timestamp).\n"
    "Every command also takes --log FILE (or GL_LOG=FILE): one JSON Lines \"command\"\n"
    "event per run (what ran, exit, refusal code, elapsed; never a secret).\n"
    "Prints one JSON object. Exit 0 ok; 1 refused ({\"ok\":false,\"error\":CODE,...});\n"
    "2 usage or I/O error. See docs/signing.md.\n";

struct strv {
	const char **v;
	size_t n;
};

struct args {
	const char *pos[3];
	size_t npos;
	struct strv root_key, targets_key, snapshot_key, timestamp_key, key, new_key;
	const char *threshold, *expires, *role;
	int no_passphrase, force, no_consistent, minisign;
	struct strv *greedy; /* the last key list, and how many of its values */
	size_t greedy_extra; /* were taken without a flag of their own */
};

enum flag {
	F_ROOT_KEY,
	F_TARGETS_KEY,
	F_KEY,
	F_NEW_KEY,
	F_THRESHOLD,
	F_EXPIRES,
	F_NO_PASS,
	F_FORCE,
	F_SNAPSHOT_KEY,
	F_TIMESTAMP_KEY,
	F_ROLE,
	F_NO_CONSISTENT,
	F_MINISIGN,
};
static const char *const flag_names[] = {
	"--root-key",	  "--targets-key",   "--key",	 "--new-key",
	"--threshold",	  "--expires",	     "--no-passphrase", "--force",
	"--snapshot-key", "--timestamp-key", "--role",	 "--no-consistent-snapshot",
	"--minisign",
};

GL_NORETURN static void usage_error(const char *fmt, ...) GL_PRINTF(1, 2);
static void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", gl_prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage);
	exit(GL_EXIT_USAGE);
}

static void strv_add(struct strv *s, const char *v)
{
	s->v = gl_xrealloc(s->v, (s->n + 1) * sizeof *s->v);
	s->v[s->n++] = v;
}

static struct strv *key_list(struct args *a, enum flag fl)
{
	switch (fl) {
	case F_ROOT_KEY: return &a->root_key;
	case F_TARGETS_KEY: return &a->targets_key;
	case F_KEY: return &a->key;
	case F_NEW_KEY: return &a->new_key;
	case F_SNAPSHOT_KEY: return &a->snapshot_key;
	case F_TIMESTAMP_KEY: return &a->timestamp_key;
	default: return NULL;
	}
}

/* One flag at argv[*i] (with an inline "=value" or the next argument). */
static void parse_flag(struct args *a, int argc, char **argv, int *i, unsigned allowed)
{
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	int fl = -1;
	for (int k = 0; k < (int)(sizeof flag_names / sizeof flag_names[0]); k++)
		if (strlen(flag_names[k]) == len && !strncmp(arg, flag_names[k], len))
			fl = k;
	if (fl < 0 || !(allowed & 1u << fl))
		usage_error("unknown option %.*s for %s", (int)len, arg, argv[1]);
	if (fl == F_NO_PASS || fl == F_FORCE || fl == F_NO_CONSISTENT || fl == F_MINISIGN) {
		if (eq)
			usage_error("%s takes no value", flag_names[fl]);
		*(fl == F_NO_PASS	  ? &a->no_passphrase
		  : fl == F_FORCE	  ? &a->force
		  : fl == F_MINISIGN	  ? &a->minisign
					  : &a->no_consistent) = 1;
		return;
	}
	const char *val = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
	if (!val || !*val)
		usage_error("%s needs a value", flag_names[fl]);
	struct strv *list = key_list(a, (enum flag)fl);
	if (!list) {
		*(fl == F_THRESHOLD ? &a->threshold : fl == F_ROLE ? &a->role : &a->expires) = val;
		a->greedy = NULL;
		return;
	}
	strv_add(list, val);
	a->greedy = list;
	a->greedy_extra = 0;
	while (!eq && *i + 1 < argc && argv[*i + 1][0] != '-') {
		strv_add(list, argv[++*i]);
		a->greedy_extra++;
	}
}

/* Parse argv[2..] for a subcommand taking npos positionals. Values after a
 * key flag are keys, except that trailing ones become the positionals that
 * are still missing ("add REPO --key K1 K2 ARCHIVE"). */
static void parse(struct args *a, int argc, char **argv, unsigned allowed, size_t npos)
{
	int dashdash = 0;
	for (int i = 2; i < argc; i++) {
		if (!dashdash && !strcmp(argv[i], "--")) {
			dashdash = 1;
			continue;
		}
		if (!dashdash && argv[i][0] == '-' && argv[i][1]) {
			parse_flag(a, argc, argv, &i, allowed);
			continue;
		}
		if (a->npos == sizeof a->pos / sizeof a->pos[0])
			usage_error("too many arguments");
		a->pos[a->npos++] = argv[i];
		a->greedy = NULL;
	}
	size_t missing = npos > a->npos ? npos - a->npos : 0;
	if (missing && a->greedy && a->greedy_extra >= missing) {
		for (size_t k = 0; k < missing; k++)
			a->pos[a->npos++] = a->greedy->v[a->greedy->n - missing + k];
		a->greedy->n -= missing;
	}
	if (a->npos != npos)
		usage_error("%s takes %zu argument%s", argv[1], npos, npos == 1 ? "" : "s");
}

static int64_t parse_expires(const char *s, int days_default)
{
	int64_t now = gl_now(), t;
	if (!s)
		return now + (int64_t)days_default * 86400;
	if (strspn(s, "0123456789") == strlen(s) && strlen(s) <= 5) {
		long d = strtol(s, NULL, 10);
		if (d > 36500)
			usage_error("--expires %s: at most 36500 days", s);
		return now + d * 86400;
	}
	if (gl_time_parse(s, &t) < 0)
		usage_error(
		    "--expires %s: give days or an RFC 3339 UTC time (2027-01-31T00:00:00Z)", s);
	return t;
}

static int64_t parse_threshold(const char *s)
{
	if (!s)
		return 0;
	if (strspn(s, "0123456789") != strlen(s) || strlen(s) > 4 || atoi(s) < 1)
		usage_error("--threshold %s: give an integer from 1 to 9999", s);
	return atoi(s);
}

/* ---- keys: loaded once per argument, wiped at exit -------------------- */

static struct {
	struct gl_key *k;
	const char **arg;
	size_t n;
} ring;

static void ring_free(void)
{
	for (size_t i = 0; i < ring.n; i++)
		gl_key_free(&ring.k[i]);
	free(ring.k);
	free(ring.arg);
	ring.n = 0;
}

/* Load each of list with need; returns a shallow array (free it, not the keys). */
static struct gl_keys load_keys(struct strv list, enum gl_key_need need)
{
	struct gl_key *out = gl_xcalloc(list.n, sizeof *out);
	for (size_t i = 0; i < list.n; i++) {
		size_t j = 0;
		while (j < ring.n && !(strcmp(ring.arg[j], list.v[i]) == 0 &&
				       (need != GL_KEY_SECRET || ring.k[j].sk)))
			j++;
		if (j == ring.n) {
			struct gl_key k;
			autofree char *err = NULL;
			enum gl_key_status st = gl_key_load(list.v[i], need, &k, &err);
			if (st == GL_KEY_BAD_PASSPHRASE) {
				autofail struct gl_fail f = {0};
				gl_fail_set(&f, GL_R_BAD_PASSPHRASE, "%s", err);
				exit(gl_fail_report(&f));
			}
			if (st != GL_KEY_OK)
				gl_die(GL_EXIT_USAGE, "%s", err);
			ring.k = gl_xrealloc(ring.k, (ring.n + 1) * sizeof *ring.k);
			ring.arg = gl_xrealloc(ring.arg, (ring.n + 1) * sizeof *ring.arg);
			ring.k[ring.n] = k;
			ring.arg[ring.n++] = list.v[i];
		}
		out[i] = ring.k[j];
	}
	return (struct gl_keys){out, list.n};
}

/* ---- subcommands ------------------------------------------------------- */

static int finish(enum gl_refusal r, struct gl_fail *f, jv out)
{
	if (r != GL_R_OK)
		return gl_fail_report(f);
	gl_json_emit(out);
	return GL_EXIT_OK;
}

static int cmd_keygen(struct args *a)
{
	struct gl_key k;
	memset(&k, 0, sizeof k);
	autofree char *err = NULL;
	enum gl_key_status st = gl_key_generate(a->pos[0], a->no_passphrase, a->force, &k, &err);
	gl_key_free(&k);
	if (st != GL_KEY_OK)
		gl_die(GL_EXIT_USAGE, "%s", err);
	autofree char *kp = NULL, *pp = NULL;
	gl_key_paths(a->pos[0], &kp, &pp);
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	o = jv_object_set(o, jv_string("keyid"), jv_string(k.keyid));
	o = jv_object_set(o, jv_string("public"), jv_string(pp));
	o = jv_object_set(o, jv_string("secret"), jv_string(kp));
	o = jv_object_set(o, jv_string("encrypted"), jv_bool(!a->no_passphrase));
	gl_json_emit(o);
	return GL_EXIT_OK;
}

static int cmd_init(struct args *a)
{
	if (!a->root_key.n || !a->targets_key.n)
		usage_error("init needs --root-key and --targets-key");
	int64_t t = parse_threshold(a->threshold);
	struct gl_init in = {
	    .root = load_keys(a->root_key, GL_KEY_SECRET),
	    .targets = load_keys(a->targets_key, GL_KEY_SECRET),
	    .snapshot = load_keys(a->snapshot_key, GL_KEY_SECRET),
	    .timestamp = load_keys(a->timestamp_key, GL_KEY_SECRET),
	    .threshold = t ? t : 1,
	    .root_expires = parse_expires(a->expires, GL_ROOT_DAYS_DEFAULT),
	    .exp = {.targets = parse_expires(a->expires, GL_TARGETS_DAYS_DEFAULT)},
	    .consistent = !a->no_consistent,
	};
	autofail struct gl_fail f = {0};
	jv out = jv_invalid();
	enum gl_refusal r = gl_publish_init(a->pos[0], &in, &out, &f);
	free((void *)in.root.k);
	free((void *)in.targets.k);
	free((void *)in.snapshot.k);
	free((void *)in.timestamp.k);
	return finish(r, &f, out);
}

/* add, remove and timestamp: one repository, --key, [--expires], a target. */
static int cmd_change(struct args *a, const char *cmd)
{
	if (!a->key.n)
		usage_error("%s needs --key", cmd);
	struct gl_keys ks = load_keys(a->key, GL_KEY_SECRET);
	autofail struct gl_fail f = {0};
	jv out = jv_invalid();
	enum gl_refusal r;
	if (!strcmp(cmd, "timestamp")) {
		r = gl_publish_timestamp(a->pos[0], ks,
					 parse_expires(a->expires, GL_TIMESTAMP_DAYS_DEFAULT), &out,
					 &f);
	} else {
		struct gl_expiry e = {.targets = parse_expires(a->expires, GL_TARGETS_DAYS_DEFAULT)};
		r = !strcmp(cmd, "add") ? gl_publish_add(a->pos[0], ks, a->pos[1], &e, &out, &f)
					: gl_publish_remove(a->pos[0], ks, a->pos[1], &e, &out, &f);
		if (r == GL_R_OK && a->minisign) {
			autofree char *copy = gl_xstrdup(a->pos[1]);
			r = gl_publish_minisign(a->pos[0], ks, basename(copy), &out, &f);
		}
	}
	free((void *)ks.k);
	return finish(r, &f, out);
}

static int cmd_rotate(struct args *a)
{
	if (!a->key.n || !a->new_key.n)
		usage_error("rotate needs --key and --new-key");
	const char *role = a->role ? a->role : "root";
	if (strcmp(role, "root") && strcmp(role, "targets") && strcmp(role, "snapshot") &&
	    strcmp(role, "timestamp"))
		usage_error("--role %s: root, targets, snapshot or timestamp", role);
	int64_t t = parse_threshold(a->threshold);
	int64_t exp = parse_expires(a->expires, GL_ROOT_DAYS_DEFAULT);
	struct gl_keys old = load_keys(a->key, GL_KEY_SECRET);
	struct gl_keys nw = load_keys(a->new_key, GL_KEY_ANY);
	autofail struct gl_fail f = {0};
	jv out = jv_invalid();
	enum gl_refusal r = gl_publish_rotate(a->pos[0], role, old, nw, t, exp, &out, &f);
	free((void *)old.k);
	free((void *)nw.k);
	return finish(r, &f, out);
}

static int cmd_pack(struct args *a)
{
	autofail struct gl_fail f = {0};
	jv out = jv_invalid();
	enum gl_refusal r = gl_publish_pack(a->pos[0], a->pos[1], &out, &f);
	return finish(r, &f, out);
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-sign");
	gl_std_flags(argc, argv, usage);
	gl_log_take_flag("gl-sign", &argc, argv); /* --log FILE, anywhere (lib/json/log.h) */
	if (argc < 2)
		usage_error("missing command");
	/* Before any secret is touched: no core dumps, not dumpable. */
	autofail struct gl_fail hf = {0}; /* issue 18: sign/ returns its failure */
	if (gl_keys_harden(&hf) < 0)
		return gl_fail_report(&hf);
	atexit(ring_free);
	const char *cmd = argv[1];
	struct args a = {0};
	int rc;
	if (!strcmp(cmd, "keygen")) {
		parse(&a, argc, argv, 1u << F_NO_PASS | 1u << F_FORCE, 1);
		rc = cmd_keygen(&a);
	} else if (!strcmp(cmd, "init")) {
		parse(&a, argc, argv,
		      1u << F_ROOT_KEY | 1u << F_TARGETS_KEY | 1u << F_SNAPSHOT_KEY |
			  1u << F_TIMESTAMP_KEY | 1u << F_THRESHOLD | 1u << F_EXPIRES |
			  1u << F_NO_CONSISTENT,
		      1);
		rc = cmd_init(&a);
	} else if (!strcmp(cmd, "add") || !strcmp(cmd, "remove")) {
		parse(&a, argc, argv,
		      1u << F_KEY | 1u << F_EXPIRES | (!strcmp(cmd, "add") ? 1u << F_MINISIGN : 0),
		      2);
		rc = cmd_change(&a, cmd);
	} else if (!strcmp(cmd, "timestamp")) {
		parse(&a, argc, argv, 1u << F_KEY | 1u << F_EXPIRES, 1);
		rc = cmd_change(&a, cmd);
	} else if (!strcmp(cmd, "rotate")) {
		parse(&a, argc, argv,
		      1u << F_KEY | 1u << F_NEW_KEY | 1u << F_ROLE | 1u << F_THRESHOLD |
			  1u << F_EXPIRES,
		      1);
		rc = cmd_rotate(&a);
	} else if (!strcmp(cmd, "pack")) {
		parse(&a, argc, argv, 0, 2);
		rc = cmd_pack(&a);
	} else {
		usage_error("unknown command %s", cmd);
	}
	free(a.root_key.v);
	free(a.targets_key.v);
	free(a.snapshot_key.v);
	free(a.timestamp_key.v);
	free(a.key.v);
	free(a.new_key.v);
	gl_log_command(cmd, rc, rc ? gl_fail_last() : NULL);
	gl_log_close();
	return rc;
}
