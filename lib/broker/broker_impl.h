/* broker_impl.h — what lib/broker/broker.c (Algorithm 1, the live call), its
 * parts lib/broker/broker_items.c and lib/broker/broker_copy.c, and
 * lib/broker/broker_replay.c (replay mode, for gl-replay) share: the state of a
 * running copy and the loop that serves its messages. Not a public
 * interface: broker.h is. */
#ifndef GL_BROKER_IMPL_H
#define GL_BROKER_IMPL_H

#include <string.h>

#include "broker/broker.h"
#include "plan/callmsg.h"
#include "broker/http.h"
#include "json/msg.h"
#include "runtime/receipt.h"
#include "broker/slots.h"

/* A delivered request and its reply: one entry of Rel[e]. */
struct rel_entry {
	unsigned char digest[32];
	jv reply; /* the reply message exactly as the serving copy got it */
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
	       COPY_MEMORY, COPY_PIDS, COPY_CPU /* a bound reached (SPEC §4 limits) */ };
extern const char *const gl_broker_outcome_name[];

/* The state of one call across its groups (live), or of one replayed copy. */
struct run {
	const struct gl_broker *b;
	const struct gl_call *c;
	const struct gl_plan *plan;
	char **b64;               /* base64 contents per c->item index */
	int *item_fd;             /* per c->item index: the path item opened once, or -1 */
	struct gl_callmsg_item *items; /* per c->item: name, label (owned jv), b64 */
	struct dest_state *dest;  /* per c->dest index */
	struct tally denied;
	jv triggers;
	jv trig_src; /* per trigger: [g, group(e)], the copies whose requests it compares */
	/* SPEC §6: the output label L of each group's copy once it ended
	 * (index ngroup: lazy's full-view copy), and the call's label: every
	 * item's label joined with every copy's L. */
	struct gl_labels *gL;
	struct gl_labels callL;
	/* what a witness needs, per plan group (Definition 6) */
	struct gl_twin *twin; /* τ of each group's copy (all equal unless no_twin) */
	jv *snap;             /* σ[κ(g)] as delivered to the group's copy */
	jv *trans;            /* the copy's requests in order, with their replies */
	/* the running copy */
	size_t gi;
	int sock;
	char *scratch; /* an exec copy's scratch directory (lib/runtime/exec.h), or NULL */
	struct gl_launch_ev ev; /* an exec copy's launch: its receipts (lib/runtime/launch.h) */
	int64_t deadline;
	struct gl_labels L;
	struct gl_slot slot;
	struct gl_slot_locks locks; /* the call's slots, held to its end (issue 19) */
	size_t requests;
	size_t recorded; /* bytes of recorded reply bodies (base64), per call */
	char *why; /* detail of a protocol error */
	/* gl-run --mode lazy: the full-view copy runs first (probe); e's
	 * copy is forked only if it contacted e (Lemma 2) */
	bool probe;
	/* the baselines (broker_session.c): one process, every item */
	bool session;  /* effects by gl_broker_session_effect; state_put dropped */
	bool any_host; /* sigpin, sigifc: deliver to any host, declared or not */
	struct tally sent; /* delivered, per host */
	/* replay mode (broker_replay.c): nothing is delivered */
	struct gl_replay_in *replay;
	jv replay_seq; /* digests (hex) of the copy's requests to d */
};

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

/* Serve the copy's messages until its result, its death or its deadline
 * (Algorithm 1 lines 12–24). *result gets the result message (owned) on
 * COPY_RESULT. In replay mode effects are answered by replay_effect. */
enum outcome gl_broker_serve(struct run *r, struct gl_msg *result);
enum outcome gl_broker_reply_status(enum gl_msg_status st);
jv gl_broker_placeholder(void);

/* How the copy ended, given o from serving it, once its bound is asked
 * (lib/sandbox/cgroup.h): a copy that reached its memory, pids or CPU bound ended
 * by it, whatever it sent (SPEC §6). Call before gl_broker_end_copy. */
enum outcome gl_broker_limit_outcome(struct run *r, struct gl_germline *gm, int pidfd,
				     enum outcome o);
jv gl_broker_denied(void);

/* Count one request to host by the copy of group in t (at most
 * GL_BROKER_DENIED_NAMES names per copy, then "(other)"; "(invalid)" for
 * NULL or a bad name). */
void gl_broker_tally(struct tally *t, size_t group, const char *host);

/* The tally as the record's entries [{"destination","requests"}…] sorted
 * by name, entries of one host whose copies' labels (lab, indexed by
 * group) are equal merged, and *labels (owned) the label of each entry in
 * the same order (SPEC §6). Frees t. */
jv gl_broker_tally_out(struct tally *t, const struct gl_labels *lab, jv *labels);
void gl_broker_tally_free(struct tally *t);

/* r->callL ← the join of every item's label and of r->gL[0..groups). */
void gl_broker_call_label(struct run *r, size_t groups);

/* The body {"ok":true,"copies","results","delivered","denied","triggers",
 * "labels"} of a call that ran (broker_record.c; consumes results, frees
 * r->denied). r->gL and r->callL must be final. */
jv gl_broker_record(struct run *r, size_t copies, jv results);

/* {"ok":false,"error":code,"detail":…}: a refusal of the whole call. */
GL_PRINTF(2, 3)
jv gl_broker_refuse(const char *code, const char *fmt, ...);

/* ---- items (broker_items.c) ---- */

/* The index of item name in c->item (sorted by name), or -1. */
int gl_broker_item_index(const struct gl_call *c, const char *name);

/* Contents of every item as base64 into r->b64 (read here, never by Plan),
 * and each path item's descriptor into r->item_fd, so that an exec copy's
 * Landlock rule is for the file the broker read. jv_invalid(), or a
 * refusal ("bad_item"). */
jv gl_broker_load_items(struct run *r);

/* Free r->b64 and close r->item_fd (both may be NULL). */
void gl_broker_items_free(struct run *r);

/* ---- one copy's life (broker_copy.c) ---- */

/* Line 8: G1–G3 before a fork (or nothing to check: runtime exec, or the
 * pooled copy, checked before it was forked). jv_invalid() or a refusal. */
jv gl_broker_check_germline(struct run *r, struct gl_germline *gm);

/* Line 9: a copy on a fresh channel (r->sock, nonblocking, with its
 * deadline), or a refusal (*lost: the germline is to be relaunched). */
jv gl_broker_fork_copy(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies,
		       int *pidfd);

/* Line 27: the copy and its descendants end (A1); closes or keeps pidfd. */
void gl_broker_end_copy(struct run *r, struct gl_germline *gm, int pidfd);

/* Deliver q (its route from the policy) within r->deadline: the reply for
 * the copy, or jv_invalid() with *no_time when the budget ran out. */
jv gl_broker_deliver(struct run *r, struct gl_http_req *req, bool *no_time);

/* A baseline's answer to one effect (broker_session.c). */
jv gl_broker_session_effect(struct run *r, const struct gl_msg *m, enum outcome *o);

/* Replay mode's answer to one effect (broker_replay.c). */
jv gl_broker_replay_effect(struct run *r, const struct gl_msg *m);

#endif
