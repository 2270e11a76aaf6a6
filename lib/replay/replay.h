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

#include "evidence/witness_key.h"
#include "runtime/germline.h"
#include "plan/policy.h"

#define GL_REPLAY_TRIES_DEFAULT 5
#define GL_REPLAY_TRIES_MAX 100
#define GL_REPLAY_WEIGHT_S 2000 /* Table XIV at the operating point */
#define GL_REPLAY_WEIGHT_W 250
/* The auditor's maxima of time (docs/witness.md "Bounds of a replay"): a
 * run's deadline is the witness's, at most this (gl-replay --max-deadline),
 * and a witness's runs together take at most GL_REPLAY_TIME_DEFAULT
 * (--max-time), however long the witness says its copies ran. */
#define GL_REPLAY_MAX_DEADLINE_DEFAULT 120.0 /* seconds per run */
#define GL_REPLAY_TIME_DEFAULT 600.0         /* seconds of runs per witness */
#define GL_REPLAY_TIME_MAX 86400.0           /* either flag's largest value */

struct gl_replay {
	/* set by the caller */
	const char *home;     /* GL_HOME: installed releases */
	const char *host_dir; /* the Python host (germline_host.py, _germline.so) */
	const char *items_dir; /* --items, or NULL */
	const char *archive;  /* --release FILE, or NULL: the installed release */
	const char *archive_dir; /* --release DIR: the archive whose hash matches */
	const struct gl_policy *pol; /* --policy: grants read_paths (NULL: none) */
	/* The auditor's bounds (issue 15; docs/witness.md "Bounds of a
	 * replay"): the germline and every copy are bounded as gl-run bounds
	 * them, by --policy's limits for the release's name, else the SPEC §4
	 * defaults; cg is gl-replay's own pool (gl_cg_open). NULL: unbounded. */
	struct gl_cg *cg;
	const struct gl_uids *uids; /* host uids (lib/sandbox/uids.h); NULL: the auditor's own */
	/* the producers trusted (lib/evidence/witness_key.h): --trust, and
	 * GL_HOME/keys/trusted/ (looked up by keyid). A witness signed by none
	 * of them is not replayed: unverified, weight 0, "trusted":false. */
	struct gl_witness_trust *trust;
	/* the witness being replayed was signed by this host's own key
	 * (gl_witness_key_local): its item paths are this host's files, which
	 * an exec run may be given (lib/replay/replay_exec.c); otherwise they
	 * name another machine's, and every item is a private copy */
	bool local;
	struct gl_limits lim; /* the auditor's for the release, set at its launch */
	double max_deadline_s; /* --max-deadline (0: GL_REPLAY_MAX_DEADLINE_DEFAULT) */
	double max_time_s;     /* --max-time (0: GL_REPLAY_TIME_DEFAULT) */
	char *found;          /* the archive picked from archive_dir (owned) */
	int tries;
	bool no_probe;        /* the Table V reference: probe without d's slot and R(d) */
	/* kept across witnesses */
	char *tmp;            /* private temporary directory */
	char archive_sha[65]; /* of the private copy of --release, once read */
	char release[65];     /* the release whose germline is up */
	char *release_dir;
	jv manifest;
	/* the witness's configuration (lib/release/config.h; borrowed while
	 * its germline is launched, NULL: none) and its public form, which
	 * the germline that is up was launched with (jv_null(): none) */
	const struct gl_config *config;
	jv config_pub;
	const char **read_paths;
	struct gl_germline g;
	bool up;
};

/* Exit-status class of one output record. */
enum gl_replay_status { GL_REPLAY_VERDICT = 0, GL_REPLAY_REFUSED = 1, GL_REPLAY_IO = 2 };

/* Verify the witness file at path and return a verdict, or an error record
 * {"ok":false,"error","detail","witness"} (owned). Every record of a witness
 * that was read names its producer ("producer": keyid, or null when
 * unsigned) and says whether x->trust trusts it ("trusted"); only a trusted
 * witness's verdict weighs (weight 0 otherwise: SPEC §7). expect_sha256 (or NULL)
 * is the trigger's witness_sha256; expect_id (or NULL) its id. */
jv gl_replay_file(struct gl_replay *x, const char *path, const char *expect_sha256,
		  const char *expect_id, enum gl_replay_status *status);

/* Stop the germline and remove the temporary directory. */
void gl_replay_end(struct gl_replay *x);

/* ---- every runtime (lib/replay/replay_exec.c; docs/witness.md "Every runtime") ----
 *
 * python (protocol germline or mcp-stdio): copies forked from the
 * release's germline. exec (protocol germline or mcp-stdio): every run a
 * fresh verified launch (lib/runtime/exec.h) with the witness's call message (m,
 * the view's contents, the slot — an exec release's workspace is its
 * gl.files key — and τ), D_f resolving to its relay, and the view's file
 * and directory items at their paths. An mcp-stdio release first passes
 * gl-run's discovery check (lib/broker/mcp.h). */

/* Is (runtime, protocol) replayed? python/germline always; python and
 * exec with germline or mcp-stdio unless the test build's
 * GL_TEST_REPLAY_RUNTIMES_OFF restores the old refusal. */
bool gl_replay_runtime_ok(jv manifest); /* borrowed */
bool gl_replay_runtimes_off(void);
bool gl_replay_is_exec(const struct gl_replay *x);

/* x->g for the verified exec release in x->release_dir (x->manifest).
 * 0, or -1 with f (hash: the tree is not the install record's; launch). */
int gl_replay_exec_open(struct gl_replay *x, struct gl_fail *f);

/* The discovery check of an mcp-stdio release on x->g (0 for any other
 * protocol). -1 with f (discovery_changed or launch). */
int gl_replay_discover(struct gl_replay *x, double deadline_s, struct gl_fail *f);

/* The contents (base64, owned) of item name from --items DIR: DIR/name for
 * a name without '/', DIR/<path> for a name with one (an absolute name's
 * leading '/' dropped), resolved beneath DIR. NULL with f (missing_item,
 * bad_item). */
char *gl_replay_item_file(const struct gl_replay *x, const char *name, struct gl_fail *f);

/* The files an exec run of view (item names, borrowed) reads: each path
 * item's contents (b64, per witness item) in a private file bound at its
 * path, each directory item from --items DIR. 0, or -1 with f
 * (unreplayable, missing_item, bad_item, io). */
struct gl_exec_item;
struct gl_witness;
struct gl_replay_files {
	struct gl_exec_item *item;
	int *fd;
	char **tmp;
	size_t n;
};
int gl_replay_exec_files(struct gl_replay *x, const struct gl_witness *w, const char *const *b64,
			 jv view, struct gl_replay_files *out, struct gl_fail *f);
void gl_replay_files_free(struct gl_replay_files *f);

/* ---- the release's bytes (lib/replay/replay_release.c) ---- */

/* The release sha verified (archive or installed tree); x->release_dir set.
 * 0, or -1 with f (hash, unknown_release, unsafe_archive, io). */
int gl_replay_release_verify(struct gl_replay *x, const char *sha, struct gl_fail *f);
/* x->tmp, the private temporary directory, created once. 0, or -1 with f
 * (io). */
int gl_replay_make_tmp(struct gl_replay *x, struct gl_fail *f);

/* Does a refusal (error code) of a trusted witness count as an unverified
 * event of weight W (gl_replay_as_unverified)? Every one does (SPEC §7: no
 * free trigger), but for the test build's runtimes switch. */
bool gl_replay_unverifiable(const char *code);
jv gl_replay_as_unverified(jv out, const struct gl_witness *w);

/* Does the auditor trust keyid (NULL: unsigned, never) — one of this
 * host's own keys, or one given with --trust? The test build's
 * GL_TEST_WITNESS_TRUST_OFF trusts every key. */
bool gl_replay_key_trusted(const struct gl_replay *x, const char *keyid);

/* {"ok":false,"error":code,"detail","witness":who} (owned) — never
 * "release" alone, so gl-damp does not take it for a call. */
GL_PRINTF(3, 4)
jv gl_replay_failure(const char *who, const char *code, const char *fmt, ...);
/* Stop the germline kept for the current release and forget the release. */
void gl_replay_stop(struct gl_replay *x);

/* ---- the runs and their verdict (lib/replay/replay_runs.c) ---- */

/* The test build's GL_TEST_REPLAY_BOUNDS_OFF=1 (replay_runs.c). */
bool gl_replay_bounds_off(void);
/* A run's deadline for w: the witness's, at most --max-deadline. */
double gl_replay_deadline(const struct gl_replay *x, const struct gl_witness *w);

/* How many runs of each kind differed from the witness (mirror: -1 when
 * the mirror did not run). */
struct gl_replay_counts {
	int probe, control, mirror;
};

/* w's runs on g under the call's bounds capped by the auditor's: x->tries
 * probe (in[0]) and control (in[1]) runs and, after a state divergence of
 * a declared-deterministic release, the mirror's (in[2]; docs/witness.md
 * "The mirror run"), counted into *n. jv_invalid() when every run was
 * done, else the error record: replay_time (the next run could pass
 * --max-time), or a launch, germline or germline_check failure (the
 * germline then stopped). */
struct gl_replay_in;
jv gl_replay_runs(struct gl_replay *x, struct gl_germline *g, const struct gl_witness *w,
		  struct gl_replay_in *in[3], struct gl_replay_counts *n);
/* Table XIV, and the mirror run's rule, for the counts n (owned record). */
jv gl_replay_verdict(const struct gl_witness *w, const struct gl_replay *x,
		     const struct gl_replay_counts *n);


#endif
