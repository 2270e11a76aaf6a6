/* broker.h — the germline call: paper Algorithm 1 lines 5–28 (§IV-C,
 * §IV-D, §VI "Broker"), for one call, in lib/broker/broker.c.
 *
 * For each group of the plan, in order: check the germline (G1–G3), fork a
 * copy, send it the call message (metadata, its view's contents, the whole
 * slot of its horizon, the twin inputs), then serve its messages until its
 * result, its death or its deadline — delivering requests to its own
 * destinations (http.h), answering requests to the other declared
 * destinations by the positional rule and comparing them (the tripwire),
 * denying undeclared hosts, storing state writes with their label
 * (slots.h) — and finally kill it with its descendants before the next
 * group starts. Each consumer gets the value with the label of Eq. (2).
 * docs/gl-run.md documents what a user sees. */
#ifndef GL_BROKER_H
#define GL_BROKER_H

#include <jv.h>
#include <stdbool.h>

#include "plan/call.h"
#include "plan/callmsg.h"
#include "runtime/germline.h"
#include "plan/plan.h"
#include "plan/policy.h"
#include "plan/readpaths.h"
#include "evidence/witness_store.h"

#define GL_BROKER_DEADLINE_DEFAULT 30.0 /* seconds per copy (paper §VI) */
#define GL_ITEM_MAX (32u << 20)           /* bytes of one item's contents */
#define GL_BROKER_REQUESTS_MAX 1024       /* requests one copy may send */
#define GL_BROKER_DENIED_NAMES 16         /* distinct denied hosts reported */
#define GL_BROKER_RECORD_MAX (256u << 20) /* bytes of replies recorded per call */

/* The runtimes of SPEC §6 (paper §VII-A "Runtimes"), all served by this
 * broker. GERMLINE and NOSPLIT run gl_broker_call on the plan of their
 * gl_plan_mode; LAZY runs gl_broker_call on the germline plan with the
 * data-dependent fork rule of Lemma 2 (paper §V, §VII-E); the baselines
 * FRESH, CONFINED, SIGIFC and SIGPIN run gl_broker_session_call
 * (lib/broker/broker_session.c) on one process holding every item. */
enum gl_run_mode {
	GL_RUN_GERMLINE,
	GL_RUN_NOSPLIT,
	GL_RUN_LAZY,     /* d's copy forked only when the full-view copy contacts d */
	GL_RUN_FRESH,    /* Fresh+IFC: a fresh confined process per call, all items */
	GL_RUN_CONFINED, /* Confined+IFC: one persistent confined process per release */
	GL_RUN_SIGIFC,   /* Sig+IFC: one persistent unconfined process, per-call labels */
	GL_RUN_SIGPIN,   /* Sig+Pin: one persistent unconfined process, no labels */
};

struct gl_launcher;
struct gl_key;
struct gl_exec_item;
struct gl_cancel;
struct gl_broker {
	const struct gl_policy *pol;
	const char *home;   /* GL_HOME: slots and witnesses live under it */
	/* the host's state paths no item path may reach (lib/broker/itempath.h;
	 * NULL: only /proc, /sys, /dev, /run, /var/run and "/") */
	const struct gl_state_roots *roots;
	double deadline_s;  /* T, per copy, from its fork */
	bool no_twin;       /* ablation (gl-run --no-twin): a fresh τ per copy */
	bool witness_items; /* gl-run --witness-items: contents in witnesses */
	/* gl-run --witness-cap-mb, --witness-release-cap-mb (0: the defaults,
	 * lib/evidence/witness_store.h) */
	struct gl_witness_caps witness_caps;
	/* the key that signs every witness (lib/evidence/witness_key.h:
	 * --host-key, else GL_HOME's own witness key); NULL: unsigned */
	const struct gl_key *witness_key;
	bool lazy;          /* gl-run --mode lazy: the Lemma 2 ablation (gl_broker_call) */
	bool pool;          /* gl-run --pool: take pooled copies, retire ended ones (germline.h) */
	/* gl-run --jobs: the lane of the call (lib/session/jobs.c; its copies'
	 * number GL_COPY_PID + lane in the germline's PID namespace) */
	unsigned lane;
	/* Receipts of exec copies (each its own verified launch, lib/runtime/launch.h):
	 * the launcher (NULL: none written) and the call's receipt ids. */
	const struct gl_launcher *launcher;
	jv *ids;
	/* gl-run --serve-mcp: the running call's cancellation (lib/core/cancel.h;
	 * NULL: none). Each copy is armed while it runs; a cancelled call
	 * forks no further copy and ends with error "cancelled". */
	struct gl_cancel *cancel;
};

/* Run call c (validated by gl_call_read) by plan (gl_plan_make of the same
 * call; the broker never takes a plan from the envelope) on the germline
 * g. Returns the body of the result record (owned): on success
 *   {"ok":true,"copies","results","delivered","denied","triggers","labels"}
 * (labels: the label of every field a copy chose, SPEC §6, lib/broker/broker_record.c)
 * and on a refusal {"ok":false,"error","detail"[,"labels":{"call"}]} (the
 * call's label once a copy ran; errors: "bad_item",
 * "germline_check", "germline", "bad_slot"). *germline_lost is set when the
 * germline no longer answers fork requests (the caller relaunches it).
 * Every trigger gets a witness record (witness.h) under home/witnesses/:
 * its trigger object names it ("witness", "witness_sha256"). */
jv gl_broker_call(const struct gl_broker *b, struct gl_germline *g, const struct gl_call *c,
		  const struct gl_plan *plan, bool *germline_lost);

/* Start the Sig+Pin/Sig+IFC process of a release: the interpreter run from
 * a retained descriptor, WITHOUT namespaces, Landlock, seccomp or
 * no_new_privs (the baseline must not inherit the germline's confinement),
 * stdin/stdout on /dev/null, stderr the broker's, the channel on fd 3,
 * every other descriptor closed, killed when the broker dies. It imports
 * the entry module and serves calls (hosts/python/germline_host.py
 * --session). 0, or -1 with f (launch). */
int gl_session_launch_unconfined(const struct gl_launch_spec *spec, struct gl_session_proc *p,
				 struct gl_fail *f);

/* Fork a confined session process from germline g (after G1–G3): a copy,
 * kept for later calls. It is bounded (SPEC §4 limits; lib/sandbox/cgroup.h) when
 * g->cg is set: one_call (MCP discovery, the fresh baseline's one copy) by
 * the copies' limits like any copy; otherwise (the confined baseline's
 * process, which serves every call of the session and keeps what they
 * leave) by gl_cg_session_limits: the germline's memory, the copies'
 * pids, and no CPU-time limit, which would add up over the session (each
 * call has its deadline). 0, or -1 with f: germline (*germline_lost set:
 * the germline failed) or germline_check (G1–G3 refused it, or the launch
 * of an exec copy failed). hosts: the destinations an exec process's relay
 * answers for (its hosts file and stream listeners), or NULL. */
int gl_session_fork(struct gl_germline *g, bool one_call, const char *const *hosts, size_t nhost,
		    struct gl_session_proc *p, bool *germline_lost, struct gl_fail *f);

/* Kill p (with its descendants where it is a copy) and close it. */
void gl_session_stop(struct gl_session_proc *p);

/* Run call c on p under mode (FRESH, CONFINED, SIGIFC or SIGPIN); plan
 * gives D_f. Returns the body of the result record (owned), as
 * gl_broker_call; cfg's secrets go into its deliveries as for a copy
 * (lib/broker/secrets.h). A process that does not finish the call (deadline,
 * crash, protocol) is stopped (p->up false): the next call starts a new
 * one. */
jv gl_broker_session_call(const struct gl_broker *b, enum gl_run_mode mode,
			  struct gl_session_proc *p, const struct gl_call *c,
			  const struct gl_plan *plan,
			  const struct gl_config *cfg);

/* ---- replay mode (gl-replay; paper §IV-F, Definition 6) -----------------
 *
 * One copy of the release runs on inputs taken from a witness; nothing is
 * ever delivered. A request to a declared host e is answered from the
 * reply environment R(d) by the positional rule (Definition 4): the k-th
 * request to e gets the reply d's copy got for its k-th request to e when
 * the digests are equal, else the placeholder. Any other host is denied.
 * State writes are acknowledged and dropped. Implemented in
 * lib/broker/broker_replay.c with the same serving loop as a live copy. */

/* T(d) restricted to one declared host e. */
struct gl_replay_host {
	const char *host;
	unsigned char (*digest)[32]; /* d's copy's k-th request to e */
	jv *reply;                   /* its reply (borrowed), or jv_null(): the placeholder */
	size_t n;
	size_t k; /* requests of the running copy to e (reset per run) */
};

struct gl_replay_in {
	const char *function;
	jv args;  /* borrowed object */
	const struct gl_callmsg_item *item;
	size_t nitem;
	jv state; /* borrowed: the slot as delivered */
	const struct gl_twin *twin;
	struct gl_replay_host *host; /* D_f, each with its part of T(d) */
	size_t nhost;
	const char *dest; /* d: whose requests are collected */
	double deadline_s;
	/* runtime exec (the gl_spawn's .items): the run is a fresh verified launch
	 * (lib/runtime/exec.h) that can read exactly these files and directories of
	 * its view, each at its item's path (lib/replay/replay_exec.c) */
	const struct gl_exec_item *files;
	size_t nfiles;
};

/* Run one copy of g's runtime on in, through the seam (lib/runtime/runtime.h:
 * a fork, or for runtime exec one verified launch with in->files;
 * docs/witness.md). Returns 0 with *outcome ("ok",
 * "deadline", "crash" or "protocol") and *seq (owned) the digests (hex) of
 * the copy's requests to d in order; -1 with f when the germline fails its
 * check (G1–G3: germline_check) or a fork (germline, *germline_lost set),
 * or the verified launch of an exec run fails (launch). */
int gl_broker_replay(struct gl_germline *g, struct gl_replay_in *in, jv *seq, const char **outcome,
		     bool *germline_lost, struct gl_fail *f);

#endif
