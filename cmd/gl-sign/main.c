/* gl-sign — the publisher's side of SPEC §3: keys, repository metadata,
 * reproducible release archives. Parses flags, loads keys, calls
 * lib/sign/publish.h, prints one JSON object. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <string.h>

#include "json/json.h"
#include "sign/keyring.h"
#include "sign/keys.h"
#include "json/log.h"
#include "sign/publish.h"
#include "json/refusal.h"
#include "core/util.h"

#include "args.h"

/* ---- keys: loaded once per argument, wiped at exit -------------------- */

static struct gl_keyring ring;

static void ring_free(void)
{
	gl_keyring_free(&ring);
}

/* Load each of list with need (lib/sign/keyring.h); returns a shallow
 * array (free it, not the keys). A wrong passphrase is a refusal. */
static struct gl_keys load_keys(struct strv list, enum gl_key_need need)
{
	struct gl_keys out;
	autofail struct gl_fail f = {0};
	enum gl_code st = gl_keyring_load(&ring, list.v, list.n, need, &out, &f);
	if (st == GL_E_BAD_PASSPHRASE)
		exit(gl_fail_report(&f));
	if (st != GL_E_OK)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
	return out;
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
	autofail struct gl_fail f = {0};
	enum gl_code st = gl_key_generate(a->pos[0], a->no_passphrase, a->force, &k, &f);
	gl_key_free(&k);
	if (st != GL_E_OK)
		gl_die(GL_EXIT_USAGE, "%s", gl_fail_detail(&f));
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
	gl_std_flags(argc, argv, gl_sign_usage);
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
