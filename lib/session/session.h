/* session.h — what gl-run keeps across the calls of one session (SPEC §6;
 * docs/gl-run.md): the policy and the releases, the resident germline of
 * each release (launched on first use, kept while stdin is open; paper
 * Algorithm 1 line 1–4), the baselines' persistent processes, the
 * dampening state re-read when it changes, and the per-line call that
 * turns one envelope into one result record. cmd/gl-run/main.c parses
 * the flags into a struct gl_session and loops; its --serve-mcp front end
 * (cmd/gl-run/serve_mcp.c) uses the same calls. */
#ifndef GL_SESSION_H
#define GL_SESSION_H

#include <jv.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "broker/broker.h"
#include "core/util.h"
#include "plan/plan.h"
#include "plan/policy.h"
#include "plan/readpaths.h"
#include "release/manifest.h"
#include "runtime/launch.h"
#include "sandbox/cgroup.h"

#define GL_SESSION_RELEASES_MAX 256 /* resident releases in one session */

struct gl_resident; /* lib/session/session_impl.h */
struct gl_damp_state;
struct gl_cancel;

/* Filled by the caller (flags), then gl_session_start; the fields below
 * "the session's own" belong to lib/session. */
struct gl_session {
	const struct gl_policy *pol;
	struct gl_releases *rel;
	const char *releases_dir, *host_dir, *mode_name;
	enum gl_plan_mode mode; /* the plan of gl_broker_call (germline, nosplit, lazy) */
	enum gl_run_mode run;
	struct gl_broker broker;
	const char *damp_path;       /* --damp: refuse what this state suppresses */
	struct gl_launcher launcher; /* admission, profile, receipts (lib/runtime/launch.h) */
	const char *state[GL_READPATHS_STATE_MAX + 1]; /* host state paths, GL_HOME first */
	/* --max-resident K: at most K releases' persistent processes (python
	 * germlines; confined, sigifc, sigpin processes) up at once, the least
	 * recently used idle one stopped to make room (resident.c); 0 means
	 * GL_SESSION_RELEASES_MAX */
	unsigned max_resident;
	/* the session's own */
	struct gl_damp_state *damp;
	struct stat damp_st;
	jv ids; /* receipts of the launches serving this call */
	struct gl_resident *res;
	size_t nres;
	uint64_t tick; /* the last use's stamp (struct gl_resident .used) */
	struct gl_cg cg; /* the per-copy cgroup pool (lib/sandbox/cgroup.h) */
	struct gl_uids uids; /* the delegated host uids (lib/sandbox/uids.h) */
	/* no delegated range: one call at a time, each under the user's
	 * serial lock, so that no two processes of release code run at once
	 * host-wide (gl_session_serialize) */
	bool serial;
	struct gl_state_roots roots; /* what no item path may reach */
	char *own[5];                /* gl_session_places' strings */
};

/* Set s's mode from its name (germline, nosplit, lazy, fresh, confined,
 * sigifc, sigpin; SPEC §6 "Modes"). 0, or -1 for another name. */
int gl_session_mode(struct gl_session *s, const char *name);
/* Is s's mode a baseline (fresh, confined, sigifc, sigpin)? */
bool gl_session_baseline(const struct gl_session *s);

/* Read the dampening state once (s->damp_path set): 0, or -1 with f (damp)
 * when it cannot be read (gl-run refuses to start). */
int gl_session_damp_check(struct gl_session *s, struct gl_fail *f);

/* The session's places: GL_HOME (slots, witnesses), the releases (in
 * releases, else GL_HOME/releases), the host's Python side, and the host
 * state that no read path nor item path may reach (lib/plan/readpaths.h,
 * lib/broker/itempath.h): GL_HOME, the releases, the damp state, the
 * receipts directory, the host key as given and its secret file (each
 * NULL when not used). 0, or -1 with f (usage) when releases is not a
 * directory. */
int gl_session_places(struct gl_session *s, const char *releases, const char *receipts,
		      const char *host_key, struct gl_fail *f);

/* The slots (lib/sandbox/cgroup.h) and the resident registry, before any
 * call. */
void gl_session_start(struct gl_session *s);

/* One call envelope line -> its result record (owned): the plan
 * recomputed and compared, damping, the release's runtime, then germline
 * execution or the mode's baseline. A refusal is
 * {"ok":false,"error":CODE,"detail"…} (SPEC §2, §6). */
jv gl_session_line(struct gl_session *s, const struct gl_buf *line);
struct gl_session_call;
/* gl_session_line, with read (ctx) called once the line is read, before
 * its germline is prepared or any copy runs. */
jv gl_session_line_read(struct gl_session *s, const struct gl_buf *line,
			void (*read)(const struct gl_session *s, const struct gl_session_call *k,
				     void *ctx),
			void *ctx);

/* One call in parts (gl-run --jobs; lib/session/jobs.c): read (parse,
 * gl_call_read, the plan and its check), prepare (damping, the release, its
 * runtime: the resident germline launched and an mcp-stdio release
 * discovered, a baseline's process started: everything that changes the
 * session's registry), run (the broker's call: in a worker process under
 * --jobs), finish (the registry told what the call lost: a germline, a
 * baseline's process; the receipts and the id). gl_session_line is the
 * four in a row. A part that refuses leaves state GL_CALL_DONE and the
 * refusal in out; the later parts then pass it through. */
enum gl_call_state { GL_CALL_DONE, GL_CALL_READ, GL_CALL_READY, GL_CALL_RAN };
struct gl_session_call {
	enum gl_call_state state;
	struct gl_call c;
	bool have_call, have_plan;
	struct gl_plan plan;
	jv given, out, ids; /* owned: the envelope's plan, the record so far, receipts */
	jv manifest;        /* borrowed from the releases */
	struct gl_resident *r;
	bool bare;      /* out is final as it is: bad_json, an upstream refusal */
	bool lost;      /* run: the germline was lost (relaunched at the next call) */
	bool sp_down;   /* run: the baseline's process was stopped */
	bool pool_empty; /* run: the germline's pooled copy was used or dropped */
};
void gl_session_call_read(struct gl_session *s, const struct gl_buf *line,
			  struct gl_session_call *k);
void gl_session_call_prepare(struct gl_session *s, struct gl_session_call *k);
/* gl-run --jobs, in a reused worker (lib/session/jobs_worker.c): line read
 * again as the main process read and prepared it (no second call_start
 * event), ids (consumed) the receipts' ids prepare gave it, and its
 * release's python germline taken from this process's registry, which the
 * main process's was when the worker was forked (gl_session_fingerprint):
 * READY, or DONE with a refusal. */
void gl_session_call_adopt(struct gl_session *s, const struct gl_buf *line, jv ids,
			   struct gl_session_call *k);
void gl_session_call_run(struct gl_session *s, struct gl_session_call *k);
/* The record (owned; k->out moved out). */
jv gl_session_call_finish(struct gl_session *s, struct gl_session_call *k);
void gl_session_call_free(struct gl_session_call *k);

/* What a reused worker's registry must still match (gl-run --jobs): every
 * resident record's germline and process, by what a launch, a loss, an
 * eviction, a discovery or a pool changes. Equal values: a worker forked
 * when it was taken serves the next call on the same germlines. */
uint64_t gl_session_fingerprint(const struct gl_session *s);

/* Between records (gl-run --pool): fill each resident germline's pool,
 * after the record is written, so that forking is off the call's path. */
void gl_session_idle(struct gl_session *s);

/* The MCP tools/list result of a release ({"tools":[…]}, owned, from the
 * signed manifest; for an mcp-stdio release after its discovery check),
 * or jv_invalid() with *f. */
jv gl_session_tools(struct gl_session *s, const char *release, struct gl_fail *f);

/* What the release's MCP server said of itself when it was discovered
 * (owned: {"serverInfo","instructions"}, each field only when present and
 * within its bounds; lib/broker/mcp.h gl_mcp_discover; and the resources
 * and prompts lists of lib/broker/mcp_lists.h), or jv_null() before
 * a discovery passed, or for a release that is no MCP server. */
jv gl_session_server(struct gl_session *s, const char *release);

/* Without delegated host uids (lib/sandbox/uids.h), every process of
 * release code runs alone host-wide: s->serial, and true when the caller
 * must run one call at a time (no --jobs, no --pool). The baselines keep
 * their own processes and are not serialised. */
bool gl_session_serialize(struct gl_session *s);
/* The serial lock around one call or discovery when s->serial, or, with
 * exec, for an exec release (its copies take no lane's uid yet); else -1
 * and nothing taken. gl-run stops when it cannot be taken. */
int gl_session_serial_take(const struct gl_session *s, bool exec);

/* c(name) under the session's policy, as a JSON array (owned). */
jv gl_session_clearance(const struct gl_session *s, const char *name);
/* The label every copy of call k can reach, known before any copy runs
 * (SPEC §6, Eq. 2): its items' labels, its groups' horizons (their slots)
 * and its destinations' clearances (their replies); owned, a sorted array.
 * What a refusal carries as labels.call when it depends on a run the main
 * process did not see (a worker that died mid-call). */
jv gl_session_call_bound(const struct gl_session *s, const struct gl_session_call *k);
/* Is every consumer of call k cleared for all that bound (above): every
 * copy of k sees only what each consumer may see, so nothing about how
 * long k's copies ran or what they chose is hidden from any of them? A
 * call refused when read (no copy runs) is. gl-run --serve-mcp answers
 * such calls as they finish and gives them progress; any other call's
 * answer keeps request order and it gets no progress (docs/mcp.md
 * "Concurrency"). */
bool gl_session_call_cleared(const struct gl_session *s, const struct gl_session_call *k);

/* The broker's cancellation control (lib/core/cancel.h; NULL: none). */
void gl_session_set_cancel(struct gl_session *s, struct gl_cancel *c);

/* End the session: stop every resident process (their "exited" receipts
 * belong to no call), free the registry, the damp state, the slots and
 * the places (not the policy nor the launcher's receipts: the caller's). */
void gl_session_end(struct gl_session *s);

#endif
