/* broker_impl.h — what the files of lib/broker/ share: the state of a run
 * (struct run), the modes of the one broker loop (struct mode, strategy
 * objects: gl-run's copies, lazy's full-view copy, the baselines, replay),
 * and the parts around Algorithm 1 (lib/broker/broker.c): the run's life
 * (broker_run.c), a copy's check, fork and end (broker_copy.c), items
 * (broker_items.c), the record and tally (broker_record.c), witnesses
 * (broker_witness.c), and host:port destinations' streams (stream.c; the
 * MCP discovery copy's, stream_discovery.c). Not a public interface:
 * broker.h is. */
#ifndef GL_BROKER_IMPL_H
#define GL_BROKER_IMPL_H

#include <string.h>

#include "broker/broker.h"
#include "plan/callmsg.h"
#include "broker/http.h"
#include "json/msg.h"
#include "runtime/receipt.h"
#include "broker/slots.h"
#include "plan/labels.h"

/* A delivered request and its reply: one entry of Rel[e]. */
struct rel_entry {
	unsigned char digest[32];
	jv reply; /* the reply message exactly as the serving copy got it */
};

/* One turn of a stream destination's record (docs/streams.md): on the
 * serving copy's connection conn (its conn-th to e, from 0), after len more
 * bytes whose digest is digest (gl_stream_digest) the copy got reply (the
 * destination's bytes that had come by then), and eof when the destination
 * had closed. Every other copy is answered by the same turns: the k-th
 * turn's reply once its own bytes reach the turn's end and match. */
struct stream_turn {
	size_t conn, len;
	unsigned char digest[32];
	struct gl_buf reply;
	bool eof;
};
struct stream_rec {
	struct stream_turn *t;
	size_t n, cap;
	size_t nconn; /* connections the serving copy opened */
};

/* Per declared destination e ∈ D_f (indexed as c->dest). */
struct dest_state {
	size_t group; /* the plan group that serves e */
	struct rel_entry *rel;
	size_t nrel, cap;
	size_t delivered;
	size_t n;       /* n[e] of the running copy (line 11) */
	bool triggered; /* the running copy already has a trigger for e */
	bool contacted; /* lazy: the full-view copy sent e a request (Lemma 2) */
	struct stream_rec srec; /* a host:port destination's turns (stream.c) */
	size_t sconns;          /* connections the running copy opened to e */
};

/* Requests to one host by one copy (group), counted for the record. The
 * names are chosen by the copy: they are tallied per copy, so that one
 * copy's names never crowd out another's (the cap is per copy), and each
 * entry gets the label of the copy that sent them (SPEC §6; docs/gl-run.md
 * "Field labels"). */
struct denied {
	char *host;
	size_t count;
	size_t group; /* the plan group whose copy sent them (ngroup: lazy's probe) */
};
struct tally {
	struct denied *e;
	size_t n, cap;
};

/* How a copy ended. */
enum outcome { COPY_RESULT, COPY_DEADLINE, COPY_CRASH, COPY_PROTOCOL,
	       COPY_MEMORY, COPY_PIDS, COPY_CPU, /* a bound reached (SPEC §4 limits) */
	       COPY_CANCELLED /* its call was cancelled by the client (lib/core/cancel.h) */ };
extern const char *const gl_broker_outcome_name[];

struct run;

/* A mode of the one broker loop (issue 18): a strategy object, not a flag.
 * Every copy or process the broker serves runs the same loop
 * (gl_broker_serve_copy, broker.c: Algorithm 1 lines 10–24); the mode
 * says what differs:
 *   effect       which hosts a request may reach and what it gets:
 *                delivered, answered from a record and compared (the
 *                tripwire), a placeholder, or denied; and what of it is
 *                recorded (Rel[e], T(g), the tallies). Returns the reply
 *                for the copy, or jv_invalid() with *o set when the copy
 *                must end.
 *   compare_end  what is compared once the copy sent its result, before
 *                it ends (lines 25–26 for the germline), or NULL.
 *   store_state  a state_put is stored in the copy's slot with L (line
 *                23), or acknowledged and dropped (replay, lazy's
 *                full-view copy, the baselines' own memory).
 *   full_view    the copy's view is every item (an exec copy can read
 *                every item file), not V(g).
 *   bounded      how the copy ended is asked of its cgroup bound (SPEC §4
 *                limits: "memory", "pids", "cpu"), as under gl-run.
 *   contacted_only  lazy (Lemma 2): a destination's copy is forked, and
 *                delivers, only if the full-view copy contacted it. */
struct mode {
	const char *name;
	jv (*effect)(struct run *r, const struct gl_msg *m, enum outcome *o);
	void (*compare_end)(struct run *r);
	bool store_state;
	bool full_view;
	bool bounded;
	bool contacted_only;
};

/* The modes: gl-run's copies (germline, nosplit; lazy's destination
 * copies; broker.c), lazy's full-view copy (broker_lazy.c), the baselines
 * (broker_session.c: fresh and confined reach D_f only, sigifc and sigpin
 * any host) and gl-replay's copy (broker_replay.c). */
extern const struct mode gl_mode_germline, gl_mode_lazy, gl_mode_probe, gl_mode_allowlist,
    gl_mode_any_host, gl_mode_replay;

/* The state of one call across its groups (live), of one baseline call, or
 * of one replayed copy. Created by gl_broker_run_init, freed (with any copy
 * still running ended) by gl_broker_run_free, whatever the mode. */
struct run {
	const struct mode *mode;
	const struct gl_broker *b;
	const struct gl_call *c;  /* NULL in replay mode */
	const struct gl_plan *plan;
	/* the operator's configuration of the release (lib/release/config.h):
	 * its secrets go into deliveries and out of replies; NULL: none */
	const struct gl_config *config;
	char **b64;               /* base64 contents per c->item index */
	int *item_fd;             /* per c->item index: the path item opened once, or -1 */
	struct gl_callmsg_item *items; /* per c->item: name, label (owned jv), b64 */
	struct dest_state *dest;  /* per c->dest index */
	struct tally denied;
	struct tally sent; /* the baselines: delivered, per host */
	jv triggers;
	jv trig_src; /* per trigger: [g, group(e)], the copies whose requests it compares */
	/* SPEC §6: the output label L of each group's copy once it ended
	 * (index ngroup: lazy's full-view copy), and the call's label: every
	 * item's label joined with every copy's L. */
	struct gl_labels *gL; /* nL of them: one per group, + lazy's full-view copy */
	size_t nL;
	struct gl_labels callL;
	/* what a witness needs, per plan group (Definition 6), ncopy of each */
	size_t ncopy;
	struct gl_twin *twin; /* τ of each group's copy (all equal unless no_twin) */
	jv *snap;             /* σ[κ(g)] as delivered to the group's copy */
	jv *trans;            /* the copy's requests in order, with their replies */
	/* the running copy */
	size_t gi;
	int sock;
	int pidfd;     /* the copy the broker ends at line 27, or -1 (a session's process) */
	pid_t live_pid; /* gl-run --jobs: its pid in the live table (read while it ran), or -1 */
	char *scratch; /* an exec copy's scratch directory (lib/runtime/exec.h), or NULL */
	struct gl_launch_ev ev; /* an exec copy's launch: its receipts (lib/runtime/launch.h) */
	int64_t deadline;
	struct gl_labels L;
	struct gl_slot slot;
	struct gl_slot_locks locks; /* the call's slots, held to its end (issue 19) */
	bool stateless; /* "state": "none" (broker.c keeps_no_state): no slot at all */
	size_t requests;
	size_t recorded; /* bytes of recorded reply bodies (base64), per call */
	char *why; /* detail of a protocol error */
	/* replay mode (broker_replay.c): nothing is delivered */
	struct gl_replay_in *replay;
	jv replay_seq; /* digests (hex) of the copy's requests to d */
	/* the running copy's stream connections (stream.c), and the messages
	 * it sent on them */
	struct stream_conn *sconn;
	size_t nsconn, stream_msgs;
	struct dest_state *rdest; /* replay: per in->host, its turns from T(d) */
};

/* A run of mode for call c (NULL: replay) by plan: the call's items as
 * call-message entries (names and labels, no contents yet), and for the
 * germline modes (plan set and groups > 0) τ, σ and T per group, D_f's
 * state and the per-copy labels (Algorithm 1 line 6). */
void gl_broker_run_init(struct run *r, const struct mode *mode, const struct gl_broker *b,
			const struct gl_call *c, const struct gl_plan *plan, size_t groups);

/* Free everything r holds; a copy still running is ended first (line 27). */
void gl_broker_run_free(struct run *r, struct gl_germline *gm);

/* x ∈ V(g) over the plan's bitset. */
static inline bool in_view(const struct gl_plan_group *g, size_t x)
{
	return (g->view[x / 64] >> (x % 64)) & 1;
}

/* The index of host in D_f, or -1. */
static inline int dest_index(const struct gl_call *c, const char *host)
{
	for (size_t i = 0; i < c->ndest; i++)
		if (!strcmp(c->dest[i], host))
			return (int)i;
	return -1;
}

/* Write the witness of each trigger raised by the copy of group r->gi
 * (r->triggers from index `from` on), once that copy is gone
 * (broker_witness.c). */
void gl_broker_witnesses(struct run *r, const struct gl_germline *gm, int from);

/* ---- the loop (broker.c) ---- */

/* Lines 10–27 for the running copy, in every mode: write the call message
 * msg, serve the copy's messages until its result, its death or its
 * deadline (lines 12–24, effects by r->mode), ask its bound when the mode
 * is bounded, and end it with its descendants (line 27: r->pidfd, if the
 * run holds one; a baseline's persistent process is its session's). On
 * COPY_RESULT *result gets the result message (owned; free it with
 * gl_msg_free in every case). */
enum outcome gl_broker_serve_copy(struct run *r, struct gl_germline *gm, const struct gl_buf *msg,
				  struct gl_msg *result);
enum outcome gl_broker_reply_status(enum gl_msg_status st);
jv gl_broker_placeholder(void);
jv gl_broker_denied(void);

/* r->why ← the detail; COPY_PROTOCOL. */
GL_PRINTF(2, 3)
enum outcome gl_broker_protocol(struct run *r, const char *fmt, ...);

/* Count one request to host by the copy of group in t (at most
 * GL_BROKER_DENIED_NAMES names per copy, then "(other)"; "(invalid)" for
 * NULL or a bad name). */
void gl_broker_tally(struct tally *t, size_t group, const char *host);

/* The tally as the record's entries [{"destination","requests"}…] sorted
 * by name, entries of one host whose copies' labels (lab, indexed by
 * group) are equal merged, and *labels (owned) the label of each entry in
 * the same order (SPEC §6). Frees t. The one sort of a tally. */
jv gl_broker_tally_out(struct tally *t, const struct gl_labels *lab, jv *labels);
void gl_broker_tally_free(struct tally *t);

/* ---- the record (broker_record.c) ---- */

/* r->callL ← the join of every item's label and of r->gL[0..groups). */
void gl_broker_call_label(struct run *r, size_t groups);

/* The body {"ok":true,"copies","results","delivered","denied","triggers",
 * "labels"} of a call that ran (broker_record.c; consumes results, frees
 * r->denied). r->gL and r->callL must be final. */
jv gl_broker_record(struct run *r, size_t copies, jv results);

/* Line 28: consumer u's result from a copy that ended with o (result its
 * message on COPY_RESULT, why the detail of COPY_PROTOCOL), with label L
 * (NULL: none, Sig+Pin). limits: a tool error the copy marked with a bound
 * ("disk") is reported as that bound (the germline modes). */
jv gl_broker_consumer_record(const char *u, enum outcome o, const struct gl_msg *result,
			     const char *why, const struct gl_labels *L, bool limits);

/* {"ok":false,"error":CODE,"detail":…}: f as a refusal of the whole call
 * (the detail as the step wrote it: an item's name comes quoted). */
jv gl_broker_refusal(const struct gl_fail *f);

/* ---- items (broker_items.c) ---- */

/* The index of item name in c->item (sorted by name), or -1. */
int gl_broker_item_index(const struct gl_call *c, const char *name);

/* Contents of every item as base64 into r->b64 (read here, never by Plan),
 * and each path item's descriptor into r->item_fd, so that an exec copy's
 * Landlock rule is for the file the broker read. 0, or -1 with *f, a
 * refusal of the call (bad_item, item_path). */
int gl_broker_load_items(struct run *r, struct gl_fail *f);

/* Free r->b64 and close r->item_fd (both may be NULL). */
void gl_broker_items_free(struct run *r);

/* ---- one copy's life (broker_copy.c) ---- */

/* Line 8: gl_runtime_check before a copy (G1–G3 before a fork; nothing
 * for runtime exec; nothing for the pooled copy, checked before it was
 * forked). 0, or -1 with *f (germline_check). */
int gl_broker_check_germline(struct run *r, struct gl_germline *gm, struct gl_fail *f);

/* Line 9: a copy on a fresh channel (r->sock, nonblocking, with its
 * deadline; r->pidfd): 0, or -1 with *f, a refusal of the call (germline,
 * launch; *lost: the germline is to be relaunched). */
int gl_broker_fork_copy(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies,
			struct gl_fail *f);

/* How the copy ended, given o from serving it, once its bound is asked
 * (lib/sandbox/cgroup.h): a copy that reached its memory, pids or CPU bound
 * ended by it, whatever it sent (SPEC §6). Before gl_broker_end_copy. */
enum outcome gl_broker_limit_outcome(struct gl_germline *gm, int pidfd, enum outcome o);

/* Line 27: the copy r->pidfd and its descendants end (A1); r->sock and
 * r->pidfd are closed (or the pidfd kept by the pool) and set to -1. */
void gl_broker_end_copy(struct run *r, struct gl_germline *gm);

/* The one place a process the broker ran is killed and awaited (line 27,
 * A1). A copy of runtime rt is ended through the seam (gl_runtime_end: it
 * and its descendants are gone, a copy being PID 1 of its namespace; an
 * exec copy is also reaped and its scratch removed); with rt NULL, an
 * unconfined baseline's process: SIGKILL through pidfd (gl_copy_kill) and
 * the child pid (pid > 0) reaped. Closes pidfd. Returns the wait status
 * gl_runtime_end returned (an exec copy's), else -1. */
int gl_broker_kill_wait(int pidfd, pid_t child, struct gl_runtime *rt, char *scratch);

/* Deliver q (its route from the policy) within r->deadline: the reply for
 * the copy, or jv_invalid() with *no_time when the budget ran out. */
jv gl_broker_deliver(struct run *r, struct gl_http_req *req, bool *no_time);

/* Lock every slot the call's copies read until it ends (issue 19):
 * 0, or -1 with *f (slot_busy, bad_slot) and *label, the refusal's call
 * label (owned). */
int gl_broker_lock_slots(struct run *r, jv *label, struct gl_fail *f);

/* ---- stream destinations (stream.c; docs/streams.md) ---- */

/* The operator's secrets on one stream connection (stream_auth.c;
 * docs/streams.md "Passwords"): the broker's own authentication of it
 * with the secret bound to its destination, and e's bytes held back while
 * they may begin a secret's value. */
struct stream_auth {
	const struct gl_secret *s; /* the secret that authenticates it, or NULL */
	bool done;                 /* nothing (more) to authenticate */
	struct gl_buf pre;         /* postgres: the copy's bytes up to its StartupMessage */
	struct gl_buf held;        /* e's bytes not yet given: maybe a value's first part */
};
/* a for a fresh connection fd to dest (host:port; -1: none), Redis's AUTH
 * sent and answered: false when refused (the connection is to be closed). */
bool gl_stream_auth_open(struct stream_auth *a, const struct gl_config *cfg, const char *dest,
			 int fd, int64_t deadline);
/* The copy's bytes p[0..n) for fd: sent, or (PostgreSQL, before it is
 * authenticated) held until the StartupMessage is whole, then sent and the
 * authentication answered; what the copy is to be shown now is appended
 * to reply. false: the connection is over (reply may say why). */
bool gl_stream_auth_send(struct stream_auth *a, int fd, const unsigned char *p, size_t n,
			 struct gl_buf *reply, int64_t deadline);
/* e's bytes in got with every secret of cfg masked, after any held back
 * before them; hold: more of e may come, so a tail that may begin a value
 * is held back (else all is given). */
void gl_stream_mask(struct stream_auth *a, const struct gl_config *cfg, struct gl_buf *got,
		    bool hold);
void gl_stream_auth_free(struct stream_auth *a);

/* What a mode does with a stream message. */
enum stream_role {
	STREAM_GERMLINE, /* Algorithm 1: the serving copy delivers and records, others compare */
	STREAM_DELIVER,  /* a baseline: delivered, nothing recorded or compared */
	STREAM_PROBE,    /* lazy's full-view copy: e marked contacted, nothing delivered */
	STREAM_REPLAY,   /* gl-replay: answered from T(d) only */
};
/* The reply to stream message m of the running copy, or jv_invalid() with
 * *o when the copy must end. */
jv gl_stream_effect(struct run *r, const struct gl_msg *m, enum outcome *o, enum stream_role role);
/* The running copy ended (any outcome): its connections' last turns
 * recorded or compared (lines 25–26 for streams), upstream sockets closed. */
void gl_stream_copy_end(struct run *r, bool compare);
void gl_stream_rec_free(struct stream_rec *s);

/* The MCP discovery copy's streams (mcp.c): the discovery copy holds no
 * data, so its connections to the release's public stream destinations
 * (clearance []: what they send may go to anyone the tool lists reach) are
 * delivered, nothing recorded or compared; a connection to any other, or
 * every connection when b is NULL (gl-replay: nothing is ever delivered),
 * is refused. Open before the copy's first message, close after it. */
struct gl_stream_discovery;
struct gl_stream_discovery *gl_stream_discovery_open(const struct gl_broker *b,
						     const struct gl_config *cfg, jv manifest,
						     int64_t deadline);
/* The discovery copy's next message other than a stream message into in
 * (gl_msg_read's status); its stream messages answered meanwhile. */
enum gl_msg_status gl_stream_discovery_read(struct gl_stream_discovery *d, int sock,
					    int64_t deadline, struct gl_buf *in);
void gl_stream_discovery_close(struct gl_stream_discovery *d);
/* Its destinations (the exec launch's hosts: listeners for their ports). */
const char *const *gl_stream_discovery_hosts(const struct gl_stream_discovery *d, size_t *n);

/* broker.c's parts of Algorithm 1 that stream.c shares, for the running
 * copy's group: e ∈ g; e admissible (Definition 4) and comparable; a
 * trigger; an entry of T(g); V(g) equal to the view of e's group. */
bool gl_broker_serves(const struct run *r, size_t e);
bool gl_broker_admissible(const struct run *r, size_t e);
bool gl_broker_comparable(const struct run *r, size_t e);
void gl_broker_trigger(struct run *r, size_t e, size_t position, const char *kind);
void gl_broker_note_entry(struct run *r, const char *host, const char *method,
			  const char *hex, const char *source, jv reply);
bool gl_broker_view_of_dest(const struct run *r, size_t e);

/* ---- gl-run --mode lazy (broker_lazy.c) ---- */

/* The full-view copy, run before the groups: marks the declared hosts it
 * contacts (dest[e].contacted). 0, or -1 with *f, a refusal of the call. */
int gl_broker_lazy_probe(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies,
			 struct gl_fail *f);

/* A group that serves only destinations the full-view copy never
 * contacted is not forked at all. */
bool gl_broker_lazy_skip(const struct run *r, const struct gl_plan_group *g);

#endif
