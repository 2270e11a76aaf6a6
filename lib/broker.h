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
	const char *home;   /* GL_HOME: slots live under it */
	double deadline_s;  /* T, per copy, from its fork */
};

/* Run call c (validated by gl_call_read) by plan (gl_plan_make of the same
 * call; the broker never takes a plan from the envelope) on the germline
 * g. Returns the body of the result record (owned): on success
 *   {"ok":true,"copies","results","delivered","denied","triggers"}
 * and on a refusal {"ok":false,"error","detail"} (errors: "bad_item",
 * "germline_check", "germline", "bad_slot"). *germline_lost is set when the
 * germline no longer answers fork requests (the caller relaunches it). */
jv gl_broker_call(const struct gl_broker *b, struct gl_germline *g, const struct gl_call *c,
		  const struct gl_plan *plan, bool *germline_lost);

#endif
