/* call.h — a call envelope (SPEC §4), read into Plan's inputs.
 *
 * A call k = (r, f, m_k, X_k, D_f, C_k) (paper Definition 2): the release
 * hash r, the function f, public metadata m_k (function, args, item names
 * and labels), the labelled items X_k, the destinations D_f declared for f
 * in the signed manifest, and the consumers C_k of the return value.
 *
 * Reading a call never opens an item's path nor decodes its data: Plan's
 * inputs are f, m, labels, clearances, D_f and C only (Definition 7), and
 * this module is where that is kept. docs/formats.md lists every rule. */
#ifndef GL_CALL_H
#define GL_CALL_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "plan/labels.h"
#include "release/manifest.h"
#include "plan/policy.h"

#define GL_CALL_ITEMS_MAX 1024
#define GL_CALL_CONSUMERS_MAX 64
#define GL_CALL_ID_MAX 256 /* bytes of a string id */

/* The error codes of a refused envelope (docs/plan.md), in the order they
 * are checked: the first that applies is reported. */
#define GL_ERR_BAD_ENVELOPE "bad_envelope"
#define GL_ERR_BAD_LABEL "bad_label"
#define GL_ERR_UNKNOWN_RELEASE "unknown_release"
#define GL_ERR_BAD_MANIFEST "bad_manifest"
#define GL_ERR_UNKNOWN_FUNCTION "unknown_function"
#define GL_ERR_DESTS_NOT_ALLOWED "destinations_not_allowed"
#define GL_ERR_BAD_DESTINATION "bad_destination"
#define GL_ERR_BAD_ARGS "bad_args"
#define GL_ERR_UNLABELLED_PATH "unlabelled_path"
#define GL_ERR_DUPLICATE_ITEM "duplicate_item"

struct gl_call_item {
	const char *name;
	struct gl_labels label; /* ℓ(x) */
};

struct gl_call {
	jv env;   /* owned: the envelope, with items_from_args items appended */
	bool env_changed; /* items were appended to env */
	jv id;    /* owned: the envelope's id, or jv_invalid() */
	jv fn;    /* owned: the manifest's function object */
	jv items; /* owned: the items array; item names and labels point into it */
	jv args;  /* owned: the envelope's args, or jv_invalid() */
	jv given; /* owned: the envelope's destinations, or jv_invalid() */
	const char *release, *function;
	bool workspace; /* the release keeps a workspace ("state_dir": true) */
	struct gl_call_item *item; /* X_k, sorted by name, names unique */
	size_t nitem, cap;
	const char **dest; /* D_f, sorted, unique */
	size_t ndest;
	const char **consumer; /* C_k, sorted, unique */
	size_t nconsumer;
};

struct gl_call_error {
	const char *code; /* one of GL_ERR_* */
	char *detail;     /* malloc'd */
};

/* Read and validate envelope env (consumed) against the policy (for the
 * labels of items_from_args) and the installed releases. 0, or -1 with
 * *e set. Either way *c must be released with gl_call_free; c->id holds
 * the envelope's id whenever it had a well-formed one, for the error
 * record. */
int gl_call_read(struct gl_call *c, jv env, const struct gl_policy *p, struct gl_releases *rel,
		 struct gl_call_error *e);

void gl_call_free(struct gl_call *c);

#endif
