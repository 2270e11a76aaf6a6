/* damp.h — the dampening rule of the paper's Appendix B-E and its state file.
 *
 * Per release (keyed by its SHA-256) a penalty P, starting at 0, so an
 * update (a new release hash) starts at zero. On every call to the release,
 * refused calls included, P <- lambda*P with lambda = 2^(-1/h); each event
 * of the call then adds its weight (Table XIV). The release is suppressed
 * once P >= S and usable again once P < R; between R and S it keeps its
 * previous state (hysteresis, after BGP route-flap damping).
 *
 * gl-damp applies the rule to a stream of records; gl-run only asks
 * gl_damp_load() + gl_damp_is_suppressed() before a call. */
#ifndef GL_DAMP_H
#define GL_DAMP_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"

/* The state file is read with this cap (SPEC §2: bounded reads) and holds at
 * most this many releases with a nonzero penalty. */
#define GL_DAMP_STATE_MAX (16u << 20)
#define GL_DAMP_MAX_RELEASES 100000u
#define GL_DAMP_FORMAT "germline.damp"
#define GL_DAMP_VERSION 1

/* The operating point of Appendix B-E. */
#define GL_DAMP_DEFAULT_HALF_LIFE 50.0
#define GL_DAMP_DEFAULT_WEIGHT 250.0
#define GL_DAMP_DEFAULT_SUPPRESS 2000.0
#define GL_DAMP_DEFAULT_REUSE 750.0
/* Upper bounds that keep every derived count below 2^53 (docs/damp.md). */
#define GL_DAMP_MAX_HALF_LIFE 1e9
#define GL_DAMP_MAX_MAGNITUDE 1e12

struct gl_damp_params {
	double half_life; /* h, in calls to the release */
	double weight;    /* w, the weight of an unverified event */
	double suppress;  /* S */
	double reuse;     /* R */
};

void gl_damp_params_default(struct gl_damp_params *p);
/* NULL if the parameters are usable (finite, h > 0, w >= 0, 0 < R < S,
 * within the bounds above), else a static message naming the bad one. */
const char *gl_damp_params_check(const struct gl_damp_params *p);
/* lambda = 2^(-1/h) */
double gl_damp_lambda(const struct gl_damp_params *p);

/* Events of Table XIV, as gl-replay names them (SPEC §7). */
enum gl_damp_event {
	GL_DAMP_VERIFIED,            /* item witness, determinism declared */
	GL_DAMP_VERIFIED_UNDECLARED, /* item witness, no declaration */
	GL_DAMP_UNVERIFIED,          /* state divergence, nondeterminism */
	GL_DAMP_DECLARED_BROKEN,     /* signed determinism declaration not kept */
};
/* 0 and *out, or -1 for a name outside Table XIV. */
int gl_damp_event_parse(const char *name, enum gl_damp_event *out);
/* The weight gl-damp adds for an event, from its own parameters (never from
 * the record): w for verified_undeclared and unverified; for verified and
 * declared_broken the "big" weight, which is S (2000 at the operating point),
 * so that such an event suppresses at once for every S (Section IV-F). */
double gl_damp_event_weight(const struct gl_damp_params *p, enum gl_damp_event e);

/* ---- the state ------------------------------------------------------- */

struct gl_damp_entry {
	char release[65]; /* 64 lowercase hex + NUL */
	double penalty;
	bool suppressed;
};

/* Entries sorted by release; releases at penalty 0 and usable are not kept
 * (absent means P = 0, not suppressed). */
struct gl_damp_state {
	struct gl_damp_entry *v;
	size_t n, cap;
};

/* Read the state file. A missing file is the empty state (first use).
 * Anything else that is not a valid state — unreadable, larger than
 * GL_DAMP_STATE_MAX, not JSON, a wrong shape, a bad hash, a negative or
 * non-finite penalty — returns NULL with *err (malloc'd) naming the file
 * and the problem in f (code damp: gl-run refuses the call): a corrupt
 * state is refused, never silently reset. */
struct gl_damp_state *gl_damp_load(const char *path, struct gl_fail *f);
void gl_damp_free(struct gl_damp_state *st);
/* For gl-run: is this release suppressed? Unknown releases are usable. */
bool gl_damp_is_suppressed(const struct gl_damp_state *st, const char *release);
/* Current penalty (0 for an unknown release). */
double gl_damp_penalty(const struct gl_damp_state *st, const char *release);
/* Serialise (deterministic, sorted) and write atomically (gl_atomic_write).
 * 0, or -1 with errno set. */
int gl_damp_save(const struct gl_damp_state *st, const char *path);

/* Is s exactly 64 lowercase hex digits? */
bool gl_damp_hash_ok(const char *s);

/* ---- records --------------------------------------------------------- */

enum gl_damp_kind {
	GL_DAMP_CALL,    /* a result record of gl-run (SPEC §6): decay */
	GL_DAMP_VERDICT, /* a verdict of gl-replay (SPEC §7): add the weight */
};

struct gl_damp_record {
	enum gl_damp_kind kind;
	char release[65];
	enum gl_damp_event event; /* verdicts only */
	/* verdicts: the key that counts its evidence once (damp_once.h); "" none */
	char key[65];
	/* verdicts: "trusted":false — gl-replay found no trusted key on the
	 * witness (lib/evidence/witness_key.h); reported, never counted. A
	 * verdict without the field is one gl-replay derived from its own
	 * input stream (a line it could not read, a witness too large to be
	 * written), not from a witness file, and counts. */
	bool untrusted;
};

/* Classify one input record (borrowed). 0 on success; else -1 with *f: a
 * stream error (bad_record, bad_release, unknown_event) naming the
 * problem. */
int gl_damp_classify(jv rec, struct gl_damp_record *out, struct gl_fail *f);

/* Apply one record to the state: a call decays, a verdict adds its event's
 * weight, then the thresholds are checked (Appendix B-E). Reports the
 * release's new penalty and flag. 0, or -1 (errno ENOSPC) if the record
 * would add a release beyond GL_DAMP_MAX_RELEASES. */
int gl_damp_apply(struct gl_damp_state *st, const struct gl_damp_params *p,
		  const struct gl_damp_record *r, double *penalty, bool *suppressed);

/* ---- the locked store (what gl-damp uses) ------------------------------ */

/* Writers serialise on an exclusive flock(2) of "FILE.lock" (never removed;
 * FILE itself is replaced by rename, so it cannot carry the lock). Each
 * record is one transaction: lock, re-read FILE, apply, write, unlock, so
 * several gl-damp processes may share one state file. */
struct gl_damp_store {
	char *path;
	int lock_fd;
	struct gl_damp_state *st; /* valid between begin and abort */
};

/* 0, or -1 with f (io). Creates the lock file (0600). */
int gl_damp_store_open(struct gl_damp_store *s, const char *path, struct gl_fail *f);
/* Lock and (re)load the state. 0, or -1 with f (io); unlocked on failure. */
int gl_damp_store_begin(struct gl_damp_store *s, struct gl_fail *f);
/* Write the state atomically, the lock kept (the counted witnesses are
 * written next, damp_once.h). 0, or -1 with f (io). */
int gl_damp_store_save(struct gl_damp_store *s, struct gl_fail *f);
/* Unlock: after gl_damp_store_save, or without writing. */
void gl_damp_store_abort(struct gl_damp_store *s);
void gl_damp_store_close(struct gl_damp_store *s);

#endif
