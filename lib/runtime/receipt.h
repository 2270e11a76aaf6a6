/* receipt.h — signed enforcement receipts (SPEC §9; seed 002 "a failed
 * launch, a failed tool, and a lost report leave different records").
 *
 * One receipt is one event of one launch, signed by the host key in the
 * project's metadata form ({"signed":…,"signatures":[…]}, canonical JSON of
 * SPEC §3, lib/sign/tuf.h's signer and writer):
 *
 *   rejected          admission refused (unknown or suppressed release, a
 *                     release file changed after install): nothing started.
 *   bootstrap_failed  a restriction the profile requires could not be
 *                     installed (or the kernel lacks it): nothing ran.
 *   fully_enforced    every restriction of the profile installed and the exec
 *                     observed through the status pipe.
 *   exited            the process of a fully_enforced launch ended or was
 *                     stopped: exit code or signal ("closes" names that
 *                     launch's receipt).
 *
 * A receipt's id is the SHA-256 of the canonical bytes of its "signed"
 * object; it is written atomically to DIR/<id>.json. docs/receipts.md. */
#ifndef GL_RECEIPT_H
#define GL_RECEIPT_H

#include <jv.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/germline.h"
#include "sign/keys.h"

#define GL_RECEIPT_TYPE "germline.launch"
#define GL_RECEIPT_MAX (64u << 10) /* bytes of one receipt file */
#define GL_RECEIPT_SKEW 300        /* seconds a receipt may lie in the future */

/* Profiles (docs/receipts.md "Profiles"): "full" (the default) requires
 * Landlock ABI >= 6 (filesystem, TCP, scoping), seccomp, and user, net,
 * IPC and PID namespaces; "no-scope" accepts ABI 4 or 5 (no scoping of
 * abstract unix sockets and signals) and says so in every receipt. */
struct gl_profile {
	const char *name;
	int min_landlock_abi;
};
/* NULL if name is not a profile. */
const struct gl_profile *gl_profile_find(const char *name);

struct gl_receipts {
	const char *dir;    /* --receipts DIR (exists) */
	struct gl_key key;  /* the host key, secret loaded */
	const char *profile, *mode;
	/* A receipt that cannot be written stops the launch that needed it
	 * (fail closed: a launch without its evidence must not go on): the
	 * lib/runtime/launch.h call returns -1, after it told lost what
	 * happened (detail borrowed: "cannot write a receipt: …"). gl-run's
	 * lost ends the process with that line and exit 2 (cmd/gl-run/main.c),
	 * also where the caller, the broker, does not look at the -1. NULL:
	 * only the -1. */
	void (*lost)(const char *detail);
};

/* Load the host key (its passphrase from GL_PASSPHRASE, else the terminal,
 * as gl-sign) into r->key, harden the process (lib/sign/keys.h) and mark the
 * secret's pages MADV_WIPEONFORK, so that no launch child ever holds it.
 * The lib/sign/keys.h status; f on failure (bad_passphrase, else io). */
enum gl_key_status gl_receipts_load_key(struct gl_receipts *r, const char *arg, struct gl_fail *f);

/* What one launch binds; filled as the launch proceeds. */
struct gl_launch_ev {
	char launch[33];           /* random id shared by this launch's receipts */
	const char *release;       /* 64 hex */
	char target_sha256[65], interpreter_sha256[65], manifest_sha256[65], tree_sha256[65];
	/* the operator's configuration the launch ran with (lib/release/config.h
	 * gl_config_digest); "" when the policy gave the release none */
	char config_sha256[65];
	const char *target;        /* entry file inside the release (malloc'd), or NULL */
	const struct gl_enforcement *enf; /* NULL before restrictions are known */
	char launched_id[65];      /* id of the fully_enforced receipt */
	int64_t launched_at;
};
void gl_launch_ev_init(struct gl_launch_ev *ev, const char *release);

/* Write one receipt of state for ev. extra (consumed; jv_null() for none)
 * holds the state's own fields ("binding", "missing", "exit", …). id_out
 * (65 bytes) receives its id. 0, or -1 with f (io). */
int gl_receipt_write(const struct gl_receipts *r, struct gl_launch_ev *ev, const char *state,
		     jv extra, char id_out[65], struct gl_fail *f);

/* What a failed launch step is missing, for bootstrap_failed ("landlock",
 * "landlock_network", "landlock_scope", "seccomp", "user_namespace",
 * "namespaces", …). */
const char *gl_receipt_missing(enum gl_launch_step step, int landlock_abi);

/* ---- verifying (gl-verify receipt) ---------------------------------- */

/* Each expectation NULL when not given. mode is gl-run's --mode and
 * tree_sha256 the release tree's hash (docs/receipts.md "tree_sha256"):
 * a receipt without the field cannot meet it (mismatch, and the binding
 * is listed in "unchecked"). */
struct gl_receipt_expect {
	const char *release, *target_sha256, *manifest_sha256, *interpreter_sha256, *state;
	const char *mode, *tree_sha256, *profile;
	/* the operator's configuration (docs/receipts.md "config_sha256"): a
	 * receipt of an unconfigured launch cannot meet it */
	const char *config_sha256;
	/* the receipt's id (the SHA-256 of its signed body), checked by
	 * gl_receipt_set_verify with its file's name (lib/evidence/receipt_set.h) */
	const char *receipt;
};

/* Verify the receipt in buf[0..len) against the host's public key. Returns
 * the record to print (owned): {"ok":bool,"receipt":id,"state","release",
 * "launch","mode","tree_sha256" (when the receipt has one),…,"checks",
 * "unchecked"} and, when not ok, "error", "detail" and "failed" (the check).
 * *body (owned, or jv_invalid()) receives the verified "signed" object. */
jv gl_receipt_verify(const char *buf, size_t len, const unsigned char host_pk[32],
		     const struct gl_receipt_expect *x, int64_t now, jv *body);
/* An exited receipt and the launch receipt it closes (verified bodies,
 * borrowed, with the launch's id): same launch, release and bindings, and
 * not earlier. 0, or -1 with f (mismatch). */
int gl_receipt_check_pair(jv exited, jv launched, const char *launched_id, struct gl_fail *f);

#endif
