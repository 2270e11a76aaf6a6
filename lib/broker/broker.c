/* broker.c — the germline call, paper Algorithm 1 lines 5–28, top to
 * bottom in this one file; see broker.h.
 *
 *   lines 5–7    gl_broker_call: τ, Rel[e] ← ⟨⟩, the groups in Plan's order
 *   lines 8–11   run_group → begin_group: G1–G3, fork, σ[κ(g)], L, n[e]
 *   line 10      call_message
 *   lines 12–24  gl_broker_serve_copy → serve → answer: the one loop that
 *                serves every copy in every mode (struct mode, broker_impl.h)
 *   lines 13–22  germline_effect: the effect handler of gl-run's copies
 *   lines 25–26  missing (the germline mode's compare_end)
 *   line 27      gl_broker_serve_copy → gl_broker_end_copy (broker_copy.c)
 *   line 28      end_group: the copy's witnesses, each consumer's value
 *
 * The paper's names are kept: g a group of the plan, V(g) its view, κ(g)
 * its horizon, D_f the declared destinations, Rel[e] the requests delivered
 * to e with their replies, n[e] the requests a copy sent to e, L the copy's
 * output label, τ the twin inputs, σ the slot. Line numbers in comments are
 * Algorithm 1's. Everything a copy sends is hostile: msg.c bounds and
 * parses it, and any message the protocol does not define kills the copy.
 * What is not Algorithm 1 lives beside it: the run's life and delivery
 * (broker_run.c), a copy's check, fork and end (broker_copy.c), the items
 * (broker_items.c), the record (broker_record.c), witnesses
 * (broker_witness.c), and the other modes (broker_lazy.c,
 * broker_session.c, broker_replay.c). */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cancel.h"
#include "broker/http.h"
#include "json/json.h"
#include "plan/labels.h"
#include "release/manifest.h"
#include "core/util.h"
#include "evidence/witness.h"

/* V(a) ⊆ V(b) over the plan's bitsets. */
static bool view_subset(const struct gl_plan *p, const struct gl_plan_group *a,
			const struct gl_plan_group *b)
{
	for (size_t w = 0; w < p->words; w++)
		if (a->view[w] & ~b->view[w])
			return false;
	return true;
}

static bool view_equal(const struct gl_plan *p, const struct gl_plan_group *a,
		       const struct gl_plan_group *b)
{
	return view_subset(p, a, b) && view_subset(p, b, a);
}

static bool group_has_dest(const struct gl_plan_group *g, size_t e)
{
	for (size_t i = 0; i < g->ndest; i++)
		if (g->dest[i] == e)
			return true;
	return false;
}

/* e admissible for g: c(e) ⊆ c(d) for all d ∈ g (Definition 4). */
static bool admissible(const struct run *r, size_t e, const struct gl_plan_group *g)
{
	const struct gl_policy *p = r->b->pol;
	const struct gl_labels *ce = gl_policy_clearance(p, r->c->dest[e]);
	for (size_t i = 0; i < g->ndest; i++)
		if (!gl_labels_subset(ce, gl_policy_clearance(p, r->c->dest[g->dest[i]])))
			return false;
	for (size_t i = 0; i < g->nconsumer; i++)
		if (!gl_labels_subset(ce, gl_policy_clearance(p, r->c->consumer[g->consumer[i]])))
			return false;
	return true;
}

/* e comparable for g: its group ran before g and V(e) ⊆ V(g). */
static bool comparable(const struct run *r, size_t e)
{
	size_t ge = r->dest[e].group;
	return ge < r->gi &&
	       view_subset(r->plan, &r->plan->group[ge], &r->plan->group[r->gi]);
}

static void record_trigger(struct run *r, size_t e, size_t position, const char *kind)
{
	unsigned char raw[16];
	char id[33];
	randombytes_buf(raw, sizeof raw);
	gl_hex(raw, sizeof raw, id);
	r->dest[e].triggered = true; /* at most one per copy and host */
	r->triggers = jv_array_append(
	    r->triggers,
	    JV_OBJECT(jv_string("id"), jv_string(id), jv_string("destination"),
		      jv_string(r->c->dest[e]), jv_string("position"), jv_number((double)position),
		      jv_string("kind"), jv_string(kind)));
	/* its label: the copies of g and of e's group (broker_record.c) */
	r->trig_src = jv_array_append(r->trig_src, JV_ARRAY(jv_number((double)r->gi),
							    jv_number((double)r->dest[e].group)));
}

/* T(g): the running copy's request q and the reply it gets, kept for a
 * witness (Definition 6). Borrows reply; host NULL for an unparsable URL. */
static void note(struct run *r, const struct gl_http_req *q, const char *source, jv reply)
{
	char hex[65] = "";
	if (q->host)
		gl_hex(q->digest, 32, hex);
	gl_broker_note_entry(r, q->host, q->msg ? q->msg->method : "", hex, source, reply);
}

void gl_broker_note_entry(struct run *r, const char *host, const char *method, const char *hex,
			  const char *source, jv reply)
{
	if (r->trans) /* the germline modes keep T(g) */
		r->trans[r->gi] = jv_array_append(r->trans[r->gi],
						  gl_witness_entry(host, method, hex, source, reply));
}

bool gl_broker_serves(const struct run *r, size_t e)
{
	return group_has_dest(&r->plan->group[r->gi], e);
}

bool gl_broker_admissible(const struct run *r, size_t e)
{
	return admissible(r, e, &r->plan->group[r->gi]);
}

bool gl_broker_comparable(const struct run *r, size_t e) { return comparable(r, e); }

void gl_broker_trigger(struct run *r, size_t e, size_t position, const char *kind)
{
	record_trigger(r, e, position, kind);
}

bool gl_broker_view_of_dest(const struct run *r, size_t e)
{
	return view_equal(r->plan, &r->plan->group[r->dest[e].group], &r->plan->group[r->gi]);
}

/* Algorithm 1 in its own order below: lines 5–7, then 8–28 per group. */
static int run_group(struct run *r, struct gl_germline *gm, jv *results, bool *lost,
		     size_t *copies, struct gl_fail *f);
static int begin_group(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies,
		       struct gl_fail *f);
static void call_message(struct run *r, struct gl_germline *gm,
			 const struct gl_plan_group *g, struct gl_buf *out);
static enum outcome serve(struct run *r, struct gl_msg *result);
static jv answer(struct run *r, struct gl_msg *m, struct gl_msg *result, enum outcome *o);
static jv germline_effect(struct run *r, const struct gl_msg *m, enum outcome *o);
static jv effect_own(struct run *r, struct gl_http_req *req, size_t e, const char **source,
		     enum outcome *o);
static jv effect_other(struct run *r, const struct gl_http_req *req, size_t e,
		       const struct gl_plan_group *g, const char **source);
static void missing(struct run *r);
static void end_group(struct run *r, struct gl_germline *gm, int from, enum outcome o,
		      const struct gl_msg *result, jv *results);

/* ---- the call (lines 5–7) ------------------------------------------------- */

/* Does c's function keep no state across calls (issue 19)? The manifest's
 * signed "state": "none" (lib/release/manifest.h): its copies then read no
 * slot (an empty σ, line 10), take no slot lock and may write none (a
 * state_put ends the copy, "protocol"; line 23 never runs), so a release
 * that declares it and still writes gains nothing but a failed call. Under
 * GL_TESTING, GL_TEST_STATELESS_UNENFORCED=1 ignores the declaration here
 * (the slot as for any call): the write then lands (tests/stateless.bats). */
static bool keeps_no_state(const struct gl_call *c)
{
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_STATELESS_UNENFORCED");
	if (off && !strcmp(off, "1"))
		return false;
#endif
	return gl_manifest_stateless(c->fn);
}

jv gl_broker_call(const struct gl_broker *b, struct gl_germline *g, const struct gl_call *c,
		  const struct gl_plan *plan, bool *germline_lost)
{
	struct run r;
	*germline_lost = false;
	/* Line 6: τ, chosen without reading contents: the broker's wall clock
	 * at call start and a fresh seed, the same for every copy (under the
	 * --no-twin ablation, a fresh one per copy); Rel[e] ← ⟨⟩ for e ∈ D_f. */
	gl_broker_run_init(&r, b->lazy ? &gl_mode_lazy : &gl_mode_germline, b, c, plan,
			   plan->ngroup);
	r.stateless = keeps_no_state(c);
	r.config = g->config;
	autofail struct gl_fail why = {0}; /* a refusal of the whole call */
	jv label = jv_invalid();           /* the refusal's own label (a slot lock's) */
	int rc = gl_broker_load_items(&r, &why);
	jv results = jv_array();
	size_t copies = 0;
	if (rc == 0 && !r.stateless) /* no slot: nothing to lock */
		rc = gl_broker_lock_slots(&r, &label, &why);
	if (r.mode->contacted_only && rc == 0 && c->ndest)
		rc = gl_broker_lazy_probe(&r, g, germline_lost, &copies, &why);
	/* Line 7: the groups in Plan's order, one copy at a time. */
	for (r.gi = 0; rc == 0 && r.gi < plan->ngroup; r.gi++)
		if (gl_cancel_requested(b->cancel)) /* MCP notifications/cancelled */
			rc = gl_fail(&why, GL_E_CANCELLED, "the call was cancelled by its client");
		else if (!gl_broker_lazy_skip(&r, &plan->group[r.gi]))
			rc = run_group(&r, g, &results, germline_lost, &copies, &why);
	gl_slot_unlock(&r.locks); /* the call's writes are committed (or dropped) */
	/* SPEC §6: every field's label (broker_record.c). A refusal after a
	 * copy ran carries the call's label too: which check failed, and when,
	 * may follow what ran before it. */
	gl_broker_call_label(&r, plan->ngroup + 1);
	jv out;
	if (rc == 0) {
		out = gl_broker_record(&r, copies, results);
	} else {
		jv_free(results);
		out = gl_broker_refusal(&why);
		if (!jv_is_valid(label) && copies) /* before any copy, the broker's own */
			label = gl_labels_to_jv(&r.callL);
		if (jv_is_valid(label))
			out = jv_object_set(out, jv_string("labels"),
					    JV_OBJECT(jv_string("call"), label));
	}
	gl_broker_run_free(&r, g);
	return out;
}

/* ---- one group (lines 8–11, 25–28) --------------------------------------- */

/* Lines 8–28 for group r->gi. Appends the consumers' results to *results.
 * 0, or -1 with *f, a refusal of the whole call. */
static int run_group(struct run *r, struct gl_germline *gm, jv *results, bool *lost,
		     size_t *copies, struct gl_fail *f)
{
	int from = jv_array_length(jv_copy(r->triggers));
	if (begin_group(r, gm, lost, copies, f) < 0) /* lines 8, 9, 11 */
		return -1;
	/* Line 10: m, τ, the whole slot, the contents of V(g). */
	autobuf struct gl_buf msg = {0};
	call_message(r, gm, &r->plan->group[r->gi], &msg);
	struct gl_msg result;
	enum outcome o = gl_broker_serve_copy(r, gm, &msg, &result); /* lines 10–27 */
	end_group(r, gm, from, o, &result, results); /* line 28 */
	gl_msg_free(&result);
	return 0;
}

/* Lines 8, 9 and 11 for group r->gi: G1–G3, σ[κ(g)] read, L ← ℓ(V(g)) ⊔
 * ℓ(σ), n[e] ← 0, the fork. 0, or -1 with *f, a refusal of the call. */
static int begin_group(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies,
		       struct gl_fail *f)
{
	const struct gl_plan_group *g = &r->plan->group[r->gi];
	const struct gl_call *c = r->c;
	if (gl_broker_check_germline(r, gm, f) < 0) /* line 8 */
		return -1;
	if (r->stateless) {
		gl_slot_none(&r->slot); /* line 10's σ is empty: no slot is read */
	} else if (gl_slot_open(&r->slot, r->b->home, c->release, &g->horizon, f) < 0) {
		/* The reason may quote what a copy of an earlier call stored (a
		 * key): the operator's stderr gets it, the record a fixed text
		 * (SPEC §6; docs/gl-run.md "Field labels"). */
		autofree char *q = gl_sanitize(gl_fail_detail(f), strlen(gl_fail_detail(f)));
		gl_warn("%s", q);
		gl_slot_free(&r->slot);
		return gl_fail(f, GL_E_BAD_SLOT, "the state slot of this call's horizon cannot "
						 "be read (gl-run's stderr says why)");
	}
	r->slot.held = gl_slot_locks_held(&r->locks, &r->slot);
	/* Line 11: L ← ℓ(V(g)) ⊔ ℓ(σ); n[e] ← 0. */
	gl_labels_free(&r->L);
	gl_labels_copy(&r->L, &r->slot.label);
	for (size_t x = 0; x < c->nitem; x++)
		if (in_view(g, x))
			gl_labels_join(&r->L, &c->item[x].label);
	for (size_t e = 0; e < c->ndest; e++)
		r->dest[e].n = 0, r->dest[e].triggered = false;
	r->requests = 0;
	if (gl_broker_fork_copy(r, gm, lost, copies, f) < 0) { /* line 9 */
		gl_slot_free(&r->slot);
		return -1;
	}
	return 0;
}

/* ---- the call message (line 10) ------------------------------------------ */

/* m, the contents of V(g) (other items: name and label, empty data), the
 * whole slot σ[κ(g)] (kept for a witness: σ as delivered) and τ. */
static void call_message(struct run *r, struct gl_germline *gm,
			 const struct gl_plan_group *g, struct gl_buf *out)
{
	const struct gl_call *c = r->c;
	for (size_t x = 0; x < c->nitem; x++)
		r->items[x].b64 = in_view(g, x) ? r->b64[x] : NULL;
	jv args = jv_is_valid(c->args) ? jv_copy(c->args) : jv_object();
	jv_free(r->snap[r->gi]);
	r->snap[r->gi] = gl_slot_view(&r->slot);
	/* An exec copy that is its call's only copy has no twin to agree with
	 * (no comparison, so no trigger): its target runs with the real clocks
	 * and skips the twin shim's start-up (docs/exec.md "Twin inputs"). A
	 * forked copy always gets τ: the germline's host shims the clocks. */
	bool alone = !gl_runtime_forks(gl_germline_runtime(gm)) && r->plan->ngroup == 1 &&
		     !r->mode->contacted_only;
	gl_callmsg(out, c->function, args, r->items, c->nitem, r->snap[r->gi],
		   alone ? NULL : &r->twin[r->gi]);
	jv_free(args);
}

/* ---- the loop (lines 12–24), every mode's -------------------------------- */

/* Lines 10–27 for the running copy, whatever the mode (broker_impl.h). */
enum outcome gl_broker_serve_copy(struct run *r, struct gl_germline *gm, const struct gl_buf *msg,
				  struct gl_msg *result)
{
	*result = (struct gl_msg){.doc = jv_invalid(), .value = jv_invalid()};
	/* Line 10: the call message. */
	enum outcome o = gl_broker_reply_status(gl_msg_write(r->sock, r->deadline, msg->data,
							     msg->len));
	if (o == COPY_RESULT)
		o = serve(r, result); /* lines 12–24 */
	if (o == COPY_RESULT && r->mode->compare_end)
		r->mode->compare_end(r); /* lines 25–26 */
	gl_stream_copy_end(r, o == COPY_RESULT); /* and for its streams */
	/* A cancelled call's copy was killed by the broker (SIGKILL, like
	 * RLIMIT_CPU's): it ended because of the cancellation, not a bound. */
	if (o != COPY_RESULT && gl_cancel_requested(r->b->cancel))
		o = COPY_CANCELLED;
	else if (r->mode->bounded)
		o = gl_broker_limit_outcome(gm, r->pidfd, o);
	/* Line 27: the copy and all its descendants are gone before anything
	 * else happens (A1). */
	if (r->pidfd >= 0)
		gl_broker_end_copy(r, gm);
	return o;
}

/* Lines 12–24: serve the copy's messages until its result, its death or
 * its deadline. *result gets the result message (owned) on COPY_RESULT. */
static enum outcome serve(struct run *r, struct gl_msg *result)
{
	autobuf struct gl_buf buf = {0};
	for (;;) {
		/* Line 24, checked before each message: a copy that keeps
		 * sending never extends its budget. */
		if (gl_mono_ns() >= r->deadline)
			return COPY_DEADLINE;
		enum gl_msg_status st = gl_msg_read(r->sock, r->deadline, &buf);
		if (st == GL_MSG_DEADLINE)
			return COPY_DEADLINE;
		if (st == GL_MSG_TOO_BIG)
			return gl_broker_protocol(r, "length prefix above the %u-byte cap", GL_MSG_MAX);
		if (st != GL_MSG_OK)
			return COPY_CRASH; /* it died, or closed its socket, without a result */
		struct gl_msg m;
		autofail struct gl_fail f = {0};
		if (gl_msg_parse(&m, buf.data, buf.len, &f) < 0) {
			enum outcome o = gl_broker_protocol(r, "%s", gl_fail_detail(&f));
			gl_msg_free(&m);
			return o;
		}
		enum outcome o = COPY_RESULT;
		jv reply = answer(r, &m, result, &o);
		gl_msg_free(&m);
		if (!jv_is_valid(reply))
			return o;
		o = gl_broker_reply_status(gl_msg_send(r->sock, r->deadline, reply));
		jv_free(reply);
		if (o != COPY_RESULT)
			return o;
	}
}

/* One message m of the copy, other than an effect over the budget: the
 * reply for it, or jv_invalid() with *o (COPY_RESULT: m was the result,
 * moved into *result). */
static jv answer(struct run *r, struct gl_msg *m, struct gl_msg *result, enum outcome *o)
{
	/* One depth limit along the pipeline (lib/json/json.h; SPEC §2): a
	 * value every later reader would not take never enters. The check
	 * comes before the modes part ways, so the copy sees the same answer
	 * in each. */
	int dmax = gl_json_value_depth_max();
	bool deep = m->type != GL_MSG_EFFECT && m->type != GL_MSG_STREAM &&
		    gl_json_depth(m->value, dmax) > dmax;
	if (deep && m->type == GL_MSG_RESULT) {
		/* the consumers' result: "protocol" with this fixed detail,
		 * labelled L as every way a copy ends (docs/pipeline.md) */
		*o = gl_broker_protocol(r, "result: the value is nested deeper than %d levels "
					   "(SPEC §2)", dmax);
		return jv_invalid();
	}
	if (deep) /* never stored: the slot stays what every reader takes */
		return JV_OBJECT(jv_string("type"), jv_string("refused"), jv_string("error"),
				 jv_string("too_deep"), jv_string("detail"),
				 jv_string_fmt("state_put: the value is nested deeper than "
					       "%d levels (SPEC §2)", dmax));
	if (m->type == GL_MSG_RESULT) { /* line 24: the result ends the loop */
		*result = *m;
		*m = (struct gl_msg){.doc = jv_invalid(), .value = jv_invalid()};
		*o = COPY_RESULT;
		return jv_invalid();
	}
	if (m->type == GL_MSG_STATE_PUT && r->stateless) {
		/* "state": "none": refused in every mode, lazy's full-view copy
		 * included; nothing is stored, the copy ends */
		*o = gl_broker_protocol(r, "state_put: the function declares \"state\": \"none\" "
					   "(its manifest): it keeps no state");
		return jv_invalid();
	}
	if (m->type == GL_MSG_STATE_PUT && !r->mode->store_state)
		return JV_OBJECT(jv_string("type"), jv_string("ok")); /* acknowledged, dropped */
	if (m->type == GL_MSG_STATE_PUT) {
		/* Line 23: σ[key] ← (v, L), always in the copy's own slot. */
		autofail struct gl_fail f = {0};
		if (gl_slot_put(&r->slot, m->key, jv_copy(m->value), &r->L, &f) < 0) {
			*o = gl_broker_protocol(r, "state_put: %s", gl_fail_detail(&f));
			return jv_invalid();
		}
		return JV_OBJECT(jv_string("type"), jv_string("ok"));
	}
	if (m->type == GL_MSG_STREAM) /* bounded by its own count (stream.c) */
		return r->mode->effect(r, m, o);
	if (++r->requests > GL_BROKER_REQUESTS_MAX) {
		*o = gl_broker_protocol(r, "more than %d requests", GL_BROKER_REQUESTS_MAX);
		return jv_invalid();
	}
	return r->mode->effect(r, m, o); /* lines 13–22, as the mode says */
}

/* ---- requests (lines 13–22): the germline mode's effect handler ---------- */

/* One effect message of a gl-run copy: lines 13–22. Returns the reply for
 * the copy, or jv_invalid() with *o set when the copy must end: its budget
 * ran out during the delivery, or the replies recorded for the call exceed
 * GL_BROKER_RECORD_MAX. */
static jv germline_effect(struct run *r, const struct gl_msg *m, enum outcome *o)
{
	if (m->type == GL_MSG_STREAM)
		return gl_stream_effect(r, m, o, STREAM_GERMLINE);
	const struct gl_plan_group *g = &r->plan->group[r->gi];
	struct gl_http_req req;
	autofail struct gl_fail f = {0};
	if (gl_http_req_init(&req, m, &f) < 0) {
		gl_broker_tally(&r->denied, r->gi, NULL);
		gl_http_req_free(&req);
		struct gl_http_req none = {.msg = m};
		note(r, &none, "denied", jv_null());
		return gl_broker_denied();
	}
	int ei = dest_index(r->c, req.host);
	jv reply;
	const char *source = "denied";
	if (ei < 0 || !req.http || req.host_header_conflict) {
		/* Line 22: a host not in D_f (or not reachable as that host
		 * over http/https) is denied and counted. */
		gl_broker_tally(&r->denied, r->gi, req.host);
		reply = gl_broker_denied();
	} else if (r->mode->contacted_only && group_has_dest(g, (size_t)ei) &&
		   !r->dest[ei].contacted) {
		/* lazy (Lemma 2): the full-view copy never contacted e, so e
		 * gets no request in this call. */
		reply = gl_broker_placeholder();
		source = "placeholder";
	} else if (group_has_dest(g, (size_t)ei)) {
		reply = effect_own(r, &req, (size_t)ei, &source, o);
	} else {
		reply = effect_other(r, &req, (size_t)ei, g, &source);
	}
	if (jv_is_valid(reply))
		note(r, &req, source, reply);
	gl_http_req_free(&req);
	return reply;
}

/* Lines 13–15: e ∈ g. Deliver, append (q, ρ) to Rel[e], L ← L ⊔ c(e).
 * *source "delivered" once it is recorded. */
static jv effect_own(struct run *r, struct gl_http_req *req, size_t e, const char **source,
		     enum outcome *o)
{
	struct dest_state *d = &r->dest[e];
	bool no_time = false;
	jv reply = gl_broker_deliver(r, req, &no_time); /* line 14 */
	if (no_time) {
		*o = COPY_DEADLINE;
		return reply;
	}
	r->recorded += jv_string_length_bytes(gl_json_get(reply, "body"));
	if (r->recorded > GL_BROKER_RECORD_MAX) {
		jv_free(reply);
		*o = gl_broker_protocol(r, "replies recorded for the call exceed %u bytes",
					GL_BROKER_RECORD_MAX);
		return jv_invalid();
	}
	if (d->nrel == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 8;
		d->rel = gl_xrealloc(d->rel, d->cap * sizeof *d->rel);
	}
	memcpy(d->rel[d->nrel].digest, req->digest, 32);
	d->rel[d->nrel++].reply = jv_copy(reply); /* line 15 */
	d->delivered++;
	*source = "delivered";
	gl_labels_join(&r->L, gl_policy_clearance(r->b->pol, req->host));
	return reply;
}

/* Lines 16–21: e ∈ D_f \ g, the tripwire and the positional rule
 * (Definition 4). */
static jv effect_other(struct run *r, const struct gl_http_req *req, size_t e,
		       const struct gl_plan_group *g, const char **source)
{
	struct dest_state *d = &r->dest[e];
	size_t j = ++d->n; /* line 17 */
	struct rel_entry *rec = j <= d->nrel ? &d->rel[j - 1] : NULL;
	bool adm = admissible(r, e, g);
	/* Line 18, the match bit (Corollary 2's remark): whether q matches the
	 * recorded request is itself information from e's record, so an
	 * admissible host with a record joins c(e) into L even when q does not
	 * match. */
	if (adm && d->nrel > 0)
		gl_labels_join(&r->L, gl_policy_clearance(r->b->pol, req->host));
	bool match = rec && !memcmp(rec->digest, req->digest, 32);
	if (match && adm) {
		*source = "recorded";
		return jv_copy(rec->reply); /* line 19 */
	}
	/* Line 20: a trigger only against a comparable host; past the record's
	 * end the request is an extra. */
	if (!match && comparable(r, e) && !d->triggered)
		record_trigger(r, e, j, rec ? "mismatch" : "extra");
	*source = "placeholder";
	return gl_broker_placeholder(); /* line 21 */
}

/* ---- the end of a copy (lines 25–28) ------------------------------------- */

/* Lines 25–26: a comparable host with a view other than V(g) that got
 * fewer requests than were delivered. */
static void missing(struct run *r)
{
	const struct gl_plan_group *g = &r->plan->group[r->gi];
	for (size_t e = 0; e < r->c->ndest; e++) {
		struct dest_state *d = &r->dest[e];
		const struct gl_plan_group *ge = &r->plan->group[d->group];
		if (!group_has_dest(g, e) && comparable(r, e) && !view_equal(r->plan, ge, g) &&
		    d->n < d->nrel && !d->triggered)
			record_trigger(r, e, d->n + 1, "missing");
	}
}

/* After line 27 (the copy is gone): the witnesses of its triggers, its
 * slot's write-back, its label, and line 28. */
static void end_group(struct run *r, struct gl_germline *gm, int from, enum outcome o,
		      const struct gl_msg *result, jv *results)
{
	const struct gl_plan_group *g = &r->plan->group[r->gi];
	autofail struct gl_fail f = {0};
	gl_broker_witnesses(r, gm, from);
	if (o == COPY_RESULT && gl_slot_commit(&r->slot, &f) < 0)
		gl_warn("%s", gl_fail_detail(&f)); /* the value stands; the state write is lost */
	if (o != COPY_RESULT)
		gl_warn("copy %zu of %zu: %s", r->gi + 1, r->plan->ngroup, gl_broker_outcome_name[o]);
	/* SPEC §6: what this copy chose (its requests, denied names, how it
	 * ended) carries its L; under lazy, whether it ran at all was the
	 * full-view copy's choice (Lemma 2), so that copy's label joins. */
	gl_labels_copy(&r->gL[r->gi], &r->L);
	if (r->mode->contacted_only && !g->nconsumer && g->ndest) /* one lazy_skip may skip */
		gl_labels_join(&r->gL[r->gi], &r->gL[r->plan->ngroup]);
	/* Line 28: each consumer of g gets the value with label L (Eq. 2),
	 * and the names of the items its copy did not hold (the plan's: a
	 * tool that fails on a file it was not given then says why). */
	jv withheld = jv_array();
	for (size_t x = 0; g->nconsumer && x < r->c->nitem; x++)
		if (!in_view(g, x))
			withheld = jv_array_append(withheld, jv_string(r->c->item[x].name));
	for (size_t i = 0; i < g->nconsumer; i++) {
		jv rec = gl_broker_consumer_record(r->c->consumer[g->consumer[i]], o, result,
						   r->why, &r->L, true);
		if (jv_array_length(jv_copy(withheld)) > 0)
			rec = jv_object_set(rec, jv_string("withheld"), jv_copy(withheld));
		*results = jv_array_append(*results, rec);
	}
	jv_free(withheld);
	gl_slot_free(&r->slot);
}

/* gl-run's copies (germline, nosplit). */
const struct mode gl_mode_germline = {.name = "germline",
				      .effect = germline_effect,
				      .compare_end = missing,
				      .store_state = true,
				      .bounded = true};

/* gl-run --mode lazy's destination copies: the same, but a destination
 * the full-view copy (broker_lazy.c) never contacted gets nothing. */
const struct mode gl_mode_lazy = {.name = "lazy",
				  .effect = germline_effect,
				  .compare_end = missing,
				  .store_state = true,
				  .bounded = true,
				  .contacted_only = true};
