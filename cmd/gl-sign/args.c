/* args.c — gl-sign's command line (args.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

const char gl_sign_usage[] =
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

static const char *const flag_names[] = {
	"--root-key",	  "--targets-key",   "--key",	 "--new-key",
	"--threshold",	  "--expires",	     "--no-passphrase", "--force",
	"--snapshot-key", "--timestamp-key", "--role",	 "--no-consistent-snapshot",
	"--minisign",
};

void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", gl_prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", gl_sign_usage);
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
void parse(struct args *a, int argc, char **argv, unsigned allowed, size_t npos)
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

int64_t parse_expires(const char *s, int days_default)
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

int64_t parse_threshold(const char *s)
{
	if (!s)
		return 0;
	if (strspn(s, "0123456789") != strlen(s) || strlen(s) > 4 || atoi(s) < 1)
		usage_error("--threshold %s: give an integer from 1 to 9999", s);
	return atoi(s);
}

