/* broker.h — the germline call: paper Algorithm 1 lines 5–28 (§IV-C,
 * §IV-D, §VI "Broker"), for one call, in lib/broker.c.
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

#include "call.h"
#include "callmsg.h"
#include "germline.h"
#include "plan.h"
#include "policy.h"

#define GL_BROKER_DEADLINE_DEFAULT 30.0 /* seconds per copy (paper §VI) */
#define GL_ITEM_MAX (32u << 20)           /* bytes of one item's contents */
#define GL_BROKER_REQUESTS_MAX 1024       /* requests one copy may send */
#define GL_BROKER_DENIED_NAMES 16         /* distinct denied hosts reported */
#define GL_BROKER_RECORD_MAX (256u << 20) /* bytes of replies recorded per call */

struct gl_broker {
	const struct gl_policy *pol;
	const char *home;   /* GL_HOME: slots and witnesses live under it */
	double deadline_s;  /* T, per copy, from its fork */
	bool no_twin;       /* ablation (gl-run --no-twin): a fresh τ per copy */
	bool witness_items; /* gl-run --witness-items: contents in witnesses */
};

/* Run call c (validated by gl_call_read) by plan (gl_plan_make of the same
 * call; the broker never takes a plan from the envelope) on the germline
 * g. Returns the body of the result record (owned): on success
 *   {"ok":true,"copies","results","delivered","denied","triggers"}
 * and on a refusal {"ok":false,"error","detail"} (errors: "bad_item",
 * "germline_check", "germline", "bad_slot"). *germline_lost is set when the
 * germline no longer answers fork requests (the caller relaunches it).
 * Every trigger gets a witness record (witness.h) under home/witnesses/:
 * its trigger object names it ("witness", "witness_sha256"). */
jv gl_broker_call(const struct gl_broker *b, struct gl_germline *g, const struct gl_call *c,
		  const struct gl_plan *plan, bool *germline_lost);

/* ---- replay mode (gl-replay; paper §IV-F, Definition 6) -----------------
 *
 * One copy of the release runs on inputs taken from a witness; nothing is
 * ever delivered. A request to a declared host e is answered from the
 * reply environment R(d) by the positional rule (Definition 4): the k-th
 * request to e gets the reply d's copy got for its k-th request to e when
 * the digests are equal, else the placeholder. Any other host is denied.
 * State writes are acknowledged and dropped. Implemented in
 * lib/broker_replay.c with the same serving loop as a live copy. */

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
};

/* Run one copy of germline g on in. Returns 0 with *outcome ("ok",
 * "deadline", "crash" or "protocol") and *seq (owned) the digests (hex) of
 * the copy's requests to d in order; -1 with *err (malloc'd) when the
 * germline fails its check (G1–G3) or a fork (*germline_lost set). */
int gl_broker_replay(struct gl_germline *g, struct gl_replay_in *in, jv *seq,
		     const char **outcome, bool *germline_lost, char **err);

#endif
