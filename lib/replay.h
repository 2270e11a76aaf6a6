/* replay.h — probe replay (paper §IV-F, Definition 6, Theorem 2,
 * Propositions 1–2, Table XIV; SPEC §7; docs/witness.md).
 *
 * For one witness: verify the release by its hash (a signed archive given
 * by the verifier, or the installed tree re-hashed file by file), launch
 * its germline exactly as gl-run does, and run N times each
 *   the probe:   m, the contents of W, d's slot σ[κ(d)], τ, R(d)
 *   the control: the same with the contents of V(d) (g's exact inputs)
 * in replay mode (broker.h: nothing is delivered), comparing each run's
 * request sequence to d with the delivered one. The outcome and event are
 * Table XIV's; the release's own signed manifest says whether determinism
 * was declared. */
#ifndef GL_REPLAY_H
#define GL_REPLAY_H

#include <jv.h>
#include <stdbool.h>

#include "germline.h"
#include "policy.h"

#define GL_REPLAY_TRIES_DEFAULT 5
#define GL_REPLAY_TRIES_MAX 100
#define GL_REPLAY_WEIGHT_S 2000 /* Table XIV at the operating point */
#define GL_REPLAY_WEIGHT_W 250

struct gl_replay {
	/* set by the caller */
	const char *home;     /* GL_HOME: installed releases */
	const char *host_dir; /* the Python host (germline_host.py, _germline.so) */
	const char *items_dir; /* --items, or NULL */
	const char *archive;  /* --release FILE, or NULL: the installed release */
	const char *archive_dir; /* --release DIR: the archive whose hash matches */
	const struct gl_policy *pol; /* --policy: grants read_paths (NULL: none) */
	char *found;          /* the archive picked from archive_dir (owned) */
	int tries;
	bool no_probe;        /* the Table V reference: probe without d's slot and R(d) */
	/* kept across witnesses */
	char *tmp;            /* private temporary directory */
	char archive_sha[65]; /* of the private copy of --release, once read */
	char release[65];     /* the release whose germline is up */
	char *release_dir;
	jv manifest;
	const char **read_paths;
	struct gl_germline g;
	bool up;
};

/* Exit-status class of one output record. */
enum gl_replay_status { GL_REPLAY_VERDICT = 0, GL_REPLAY_REFUSED = 1, GL_REPLAY_IO = 2 };

/* Verify the witness file at path and return a verdict, or an error record
 * {"ok":false,"error","detail","witness"} (owned). expect_sha256 (or NULL)
 * is the trigger's witness_sha256; expect_id (or NULL) its id. */
jv gl_replay_file(struct gl_replay *x, const char *path, const char *expect_sha256,
		  const char *expect_id, enum gl_replay_status *status);

/* Stop the germline and remove the temporary directory. */
void gl_replay_end(struct gl_replay *x);


#endif
