/* broker.c — the germline call, paper Algorithm 1 lines 5–28; see broker.h.
 *
 * The paper's names are kept: g a group of the plan, V(g) its view, κ(g)
 * its horizon, D_f the declared destinations, Rel[e] the requests delivered
 * to e with their replies, n[e] the requests a copy sent to e, L the copy's
 * output label, τ the twin inputs, σ the slot. Line numbers in comments are
 * Algorithm 1's. Everything a copy sends is hostile: msg.c bounds and
 * parses it, and any message the protocol does not define kills the copy. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "core/cancel.h"
#include "runtime/exec.h"
#include "broker/http.h"
#include "json/json.h"
#include "plan/labels.h"
#include "runtime/launch.h"
#include "core/util.h"
#include "evidence/witness.h"

const char *const gl_broker_outcome_name[] = {"ok",     "deadline", "crash", "protocol",
					      "memory", "pids",     "cpu"};

jv gl_broker_refuse(const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *d = NULL;
	if (vasprintf(&d, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	jv r = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string(code),
			 jv_string("detail"), jv_string(d));
	free(d);
	return r;
}

GL_PRINTF(2, 3)
static enum outcome protocol(struct run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(r->why);
	if (vasprintf(&r->why, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	return COPY_PROTOCOL;
}

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

/* L ← L ⊔ add. */
static void join(struct gl_labels *L, const struct gl_labels *add)
{
	struct gl_labels u = {0};
	gl_labels_union(&u, L, add);
	gl_labels_free(L);
	*L = u;
}

/* ---- the call message (line 10) ------------------------------------------ */

/* m, the contents of V(g) (other items: name and label, empty data), the
 * whole slot σ[κ(g)] (kept for a witness: σ as delivered) and τ. */
static void call_message(struct run *r, const struct gl_germline *gm,
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
	 * and skips the twin shim's start-up (docs/exec.md "Twin inputs"). */
	bool alone = gm->exec && r->plan->ngroup == 1 && !r->b->lazy;
	gl_callmsg(out, c->function, args, r->items, c->nitem, r->snap[r->gi],
		   alone ? NULL : &r->twin[r->gi]);
	jv_free(args);
}

/* ---- requests (lines 13–22) ---------------------------------------------- */

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

static void count_denied(struct run *r, const char *host)
{
	/* lazy's full-view copy is counted as group ngroup */
	gl_broker_tally(&r->denied, r->probe ? r->plan->ngroup : r->gi, host);
}

jv gl_broker_placeholder(void)
{
	return JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("placeholder"),
			 jv_true());
}

jv gl_broker_denied(void)
{
	return JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("denied"), jv_true());
}

/* T(g): the running copy's request q and the reply it gets, kept for a
 * witness (Definition 6). Borrows reply; host NULL for an unparsable URL. */
static void note(struct run *r, const struct gl_http_req *q, const char *source, jv reply)
{
	char hex[65] = "";
	if (q->host)
		gl_hex(q->digest, 32, hex);
	r->trans[r->gi] = jv_array_append(r->trans[r->gi],
					  gl_witness_entry(q->host, q->msg ? q->msg->method : "",
							   hex, source, reply));
}

/* Line 14: deliver q, get ρ. A delivery that gets no reply answers the copy
 * with a 502 marked X-Germline: unreachable (docs/gl-run.md). */
jv gl_broker_deliver(struct run *r, struct gl_http_req *req, bool *no_time)
{
	struct gl_http_reply rep;
	char *err = NULL;
	const char *route = gl_policy_route(r->b->pol, req->host);
	enum gl_http_status st = gl_http_deliver(req, route, r->deadline, &rep, &err);
	if (st == GL_HTTP_NO_TIME) {
		free(err);
		*no_time = true;
		return jv_invalid();
	}
	if (st != GL_HTTP_OK) {
		autofree char *q = gl_sanitize(req->host, strlen(req->host));
		gl_warn("request to %s: %s", q, err);
		free(err);
		return JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("status"),
				 jv_number(502), jv_string("headers"),
				 JV_ARRAY(JV_ARRAY(jv_string("X-Germline"), jv_string("unreachable"))),
				 jv_string("body"), jv_string(""));
	}
	autobuf struct gl_buf b64 = {0};
	gl_b64_encode(&b64, (unsigned char *)rep.body.data, rep.body.len);
	jv reply = JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("status"),
			     jv_number((double)rep.status), jv_string("headers"), jv_copy(rep.headers),
			     jv_string("body"), jv_string_sized(b64.data ? b64.data : "", (int)b64.len));
	gl_http_reply_free(&rep);
	return reply;
}

/* One effect message: lines 13–22. Returns the reply for the copy, or
 * jv_invalid() with *o set when the copy must end: its budget ran out
 * during the delivery, or the replies recorded for the call exceed
 * GL_BROKER_RECORD_MAX. */
static jv on_effect(struct run *r, const struct gl_msg *m, enum outcome *o)
{
	const struct gl_plan_group *g = &r->plan->group[r->gi];
	struct gl_http_req req;
	char *err = NULL;
	if (gl_http_req_init(&req, m, &err) < 0) {
		free(err);
		count_denied(r, NULL);
		gl_http_req_free(&req);
		struct gl_http_req none = {.msg = m};
		note(r, &none, "denied", jv_null());
		return gl_broker_denied();
	}
	int ei = dest_index(r->c, req.host);
	jv reply;
	const char *source = "denied";
	if (r->probe) {
		/* gl-run --mode lazy, the full-view copy (Lemma 2): nothing is
		 * delivered or recorded; a declared host it contacts is marked,
		 * and only a marked host's copy is forked and delivers. */
		if (ei < 0 || !req.http || req.host_header_conflict) {
			count_denied(r, req.host);
			reply = gl_broker_denied();
		} else {
			r->dest[ei].contacted = true;
			reply = gl_broker_placeholder();
		}
		gl_http_req_free(&req);
		return reply;
	}
	if (ei < 0 || !req.http || req.host_header_conflict) {
		/* Line 22: a host not in D_f (or not reachable as that host
		 * over http/https) is denied and counted. */
		count_denied(r, req.host);
		reply = gl_broker_denied();
	} else if (r->b->lazy && group_has_dest(g, (size_t)ei) && !r->dest[ei].contacted) {
		/* lazy (Lemma 2): the full-view copy never contacted e, so e
		 * gets no request in this call. */
		reply = gl_broker_placeholder();
		source = "placeholder";
	} else if (group_has_dest(g, (size_t)ei)) {
		/* Lines 13–15: e ∈ g. Deliver, append (q, ρ) to Rel[e],
		 * L ← L ⊔ c(e). */
		struct dest_state *d = &r->dest[ei];
		bool no_time = false;
		reply = gl_broker_deliver(r, &req, &no_time);
		if (no_time) {
			*o = COPY_DEADLINE;
		} else if ((r->recorded += jv_string_length_bytes(gl_json_get(reply, "body"))) >
			   GL_BROKER_RECORD_MAX) {
			jv_free(reply);
			reply = jv_invalid();
			*o = protocol(r, "replies recorded for the call exceed %u bytes",
				      GL_BROKER_RECORD_MAX);
		} else {
			if (d->nrel == d->cap) {
				d->cap = d->cap ? 2 * d->cap : 8;
				d->rel = gl_xrealloc(d->rel, d->cap * sizeof *d->rel);
			}
			memcpy(d->rel[d->nrel].digest, req.digest, 32);
			d->rel[d->nrel++].reply = jv_copy(reply);
			d->delivered++;
			source = "delivered";
			join(&r->L, gl_policy_clearance(r->b->pol, req.host));
		}
	} else {
		/* Lines 16–21: e ∈ D_f \ g, the tripwire and the positional
		 * rule (Definition 4). */
		struct dest_state *d = &r->dest[ei];
		size_t j = ++d->n; /* line 17 */
		struct rel_entry *rec = j <= d->nrel ? &d->rel[j - 1] : NULL;
		bool adm = admissible(r, (size_t)ei, g);
		/* Line 18, the match bit (Corollary 2's remark): whether q
		 * matches the recorded request is itself information from e's
		 * record, so an admissible host with a record joins c(e) into
		 * L even when q does not match. */
		if (adm && d->nrel > 0)
			join(&r->L, gl_policy_clearance(r->b->pol, req.host));
		bool match = rec && !memcmp(rec->digest, req.digest, 32);
		if (match && adm) {
			reply = jv_copy(rec->reply); /* line 19 */
			source = "recorded";
		} else {
			/* Line 20: a trigger only against a comparable host;
			 * past the record's end the request is an extra. */
			if (!match && comparable(r, (size_t)ei) && !d->triggered)
				record_trigger(r, (size_t)ei, j, rec ? "mismatch" : "extra");
			reply = gl_broker_placeholder(); /* line 21 */
			source = "placeholder";
		}
	}
	if (jv_is_valid(reply))
		note(r, &req, source, reply);
	gl_http_req_free(&req);
	return reply;
}

/* ---- one copy (lines 9–27) ---------------------------------------------- */

enum outcome gl_broker_reply_status(enum gl_msg_status st)
{
	return st == GL_MSG_OK ? COPY_RESULT : st == GL_MSG_DEADLINE ? COPY_DEADLINE : COPY_CRASH;
}

/* Lines 12–23: serve the copy's messages until its result, its death or
 * its deadline. *result gets the result message (owned) on COPY_RESULT. */
enum outcome gl_broker_serve(struct run *r, struct gl_msg *result)
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
			return protocol(r, "length prefix above the %u-byte cap", GL_MSG_MAX);
		if (st != GL_MSG_OK)
			return COPY_CRASH; /* it died, or closed its socket, without a result */
		struct gl_msg m;
		char *err = NULL;
		if (gl_msg_parse(&m, buf.data, buf.len, &err) < 0) {
			enum outcome o = protocol(r, "%s", err);
			free(err);
			gl_msg_free(&m);
			return o;
		}
		jv reply = jv_invalid();
		enum outcome o = COPY_RESULT;
		/* One depth limit along the pipeline (lib/json/json.h; SPEC §2): a
		 * value every later reader would not take never enters. The
		 * check comes before replay, probe and session part ways, so
		 * the copy sees the same answer in each. */
		int dmax = gl_json_value_depth_max();
		bool deep = m.type != GL_MSG_EFFECT && gl_json_depth(m.value, dmax) > dmax;
		if (deep && m.type == GL_MSG_RESULT) {
			/* the consumers' result: "protocol" with this fixed detail,
			 * labelled L as every way a copy ends (docs/pipeline.md) */
			gl_msg_free(&m);
			return protocol(r, "result: the value is nested deeper than %d levels (SPEC §2)",
					dmax);
		} else if (deep) {
			/* never stored: the slot stays what every reader takes */
			reply = JV_OBJECT(jv_string("type"), jv_string("refused"), jv_string("error"),
					  jv_string("too_deep"), jv_string("detail"),
					  jv_string_fmt("state_put: the value is nested deeper than "
							"%d levels (SPEC §2)",
							dmax));
		} else if (m.type == GL_MSG_RESULT) {
			*result = m;
			return COPY_RESULT;
		} else if (m.type == GL_MSG_STATE_PUT && (r->replay || r->probe || r->session)) {
			/* replay mode, lazy's full-view copy and the baselines
			 * (whose state is the process's own memory):
			 * acknowledged, never stored */
			reply = JV_OBJECT(jv_string("type"), jv_string("ok"));
		} else if (m.type == GL_MSG_STATE_PUT) {
			/* Line 23: σ[key] ← (v, L), always in the copy's own slot. */
			if (gl_slot_put(&r->slot, m.key, jv_copy(m.value), &r->L, &err) < 0) {
				o = protocol(r, "state_put: %s", err);
				free(err);
				gl_msg_free(&m);
				return o;
			}
			reply = JV_OBJECT(jv_string("type"), jv_string("ok"));
		} else if (++r->requests > GL_BROKER_REQUESTS_MAX) {
			gl_msg_free(&m);
			return protocol(r, "more than %d requests", GL_BROKER_REQUESTS_MAX);
		} else {
			reply = r->replay    ? gl_broker_replay_effect(r, &m)
				: r->session ? gl_broker_session_effect(r, &m, &o)
					     : on_effect(r, &m, &o);
		}
		gl_msg_free(&m);
		if (!jv_is_valid(reply))
			return o;
		o = gl_broker_reply_status(gl_msg_send(r->sock, r->deadline, reply));
		jv_free(reply);
		if (o != COPY_RESULT)
			return o;
	}
}

/* Lines 8–28 for group gi. Appends the consumers' results to *results.
 * Returns jv_invalid(), or a refusal of the whole call. */
static jv run_group(struct run *r, struct gl_germline *gm, jv *results, bool *lost, size_t *copies)
{
	const struct gl_plan_group *g = &r->plan->group[r->gi];
	const struct gl_call *c = r->c;
	char *err = NULL;
	jv out = gl_broker_check_germline(r, gm); /* line 8 */
	if (jv_is_valid(out))
		return out;
	if (gl_slot_open(&r->slot, r->b->home, c->release, &g->horizon, &err) < 0) {
		/* The reason may quote what a copy of an earlier call stored (a
		 * key): the operator's stderr gets it, the record a fixed text
		 * (SPEC §6; docs/gl-run.md "Field labels"). */
		autofree char *q = gl_sanitize(err, strlen(err));
		gl_warn("%s", q);
		out = gl_broker_refuse("bad_slot", "the state slot of this call's horizon cannot "
						   "be read (gl-run's stderr says why)");
		free(err);
		gl_slot_free(&r->slot);
		return out;
	}
	r->slot.held = gl_slot_locks_held(&r->locks, &r->slot);
	/* Line 11: L ← ℓ(V(g)) ⊔ ℓ(σ); n[e] ← 0. */
	gl_labels_free(&r->L);
	gl_labels_copy(&r->L, &r->slot.label);
	for (size_t x = 0; x < c->nitem; x++)
		if (in_view(g, x))
			join(&r->L, &c->item[x].label);
	for (size_t e = 0; e < c->ndest; e++)
		r->dest[e].n = 0, r->dest[e].triggered = false;
	r->requests = 0;

	int from = jv_array_length(jv_copy(r->triggers));
	int pidfd;
	out = gl_broker_fork_copy(r, gm, lost, copies, &pidfd); /* line 9 */
	if (jv_is_valid(out))
		return out;

	/* Line 10: m, τ, the whole slot, the contents of V(g). */
	autobuf struct gl_buf msg = {0};
	call_message(r, gm, g, &msg);
	enum outcome o = gl_broker_reply_status(gl_msg_write(r->sock, r->deadline, msg.data, msg.len));
	struct gl_msg result = {.doc = jv_invalid(), .value = jv_invalid()};
	if (o == COPY_RESULT)
		o = gl_broker_serve(r, &result);
	if (o == COPY_RESULT) {
		/* Lines 25–26: a comparable host with a view other than V(g)
		 * that got fewer requests than were delivered. */
		for (size_t e = 0; e < c->ndest; e++) {
			struct dest_state *d = &r->dest[e];
			const struct gl_plan_group *ge = &r->plan->group[d->group];
			if (!group_has_dest(g, e) && comparable(r, e) && !view_equal(r->plan, ge, g) &&
			    d->n < d->nrel && !d->triggered)
				record_trigger(r, e, d->n + 1, "missing");
		}
	}
	o = gl_broker_limit_outcome(r, gm, pidfd, o);
	/* Line 27: the copy and all its descendants are gone before anything
	 * else happens (A1). */
	gl_broker_end_copy(r, gm, pidfd);
	close(r->sock);
	r->sock = -1;
	gl_broker_witnesses(r, gm, from);
	if (o == COPY_RESULT && gl_slot_commit(&r->slot, &err) < 0) {
		gl_warn("%s", err); /* the value stands; the state write is lost */
		free(err);
	}
	if (o != COPY_RESULT)
		gl_warn("copy %zu of %zu: %s", r->gi + 1, r->plan->ngroup, gl_broker_outcome_name[o]);
	/* SPEC §6: what this copy chose (its requests, denied names, how it
	 * ended) carries its L; under lazy, whether it ran at all was the
	 * full-view copy's choice (Lemma 2), so that copy's label joins. */
	gl_labels_copy(&r->gL[r->gi], &r->L);
	if (r->b->lazy && !g->nconsumer && g->ndest) /* a group lazy_skip may skip */
		join(&r->gL[r->gi], &r->gL[r->plan->ngroup]);

	/* Line 28: each consumer of g gets the value with label L (Eq. 2). */
	for (size_t i = 0; i < g->nconsumer; i++) {
		jv u = jv_string(c->consumer[g->consumer[i]]);
		jv rec;
		if (o == COPY_RESULT && !result.error) {
			rec = JV_OBJECT(jv_string("consumer"), u, jv_string("ok"), jv_true(),
					jv_string("value"), jv_copy(result.value), jv_string("label"),
					gl_labels_to_jv(&r->L));
		} else if (o == COPY_RESULT) {
			autofree char *d = gl_sanitize(result.error, strnlen(result.error,
									 GL_MSG_ERROR_MAX));
			/* "disk": the copy reached its workspace bound (SPEC §6) */
			rec = JV_OBJECT(jv_string("consumer"), u, jv_string("ok"), jv_false(),
					jv_string("error"),
					jv_string(result.limit ? result.limit : "tool_error"),
					jv_string("detail"),
					jv_string(d), jv_string("label"), gl_labels_to_jv(&r->L));
		} else {
			/* how the copy ended is its choice: labelled like a value */
			rec = JV_OBJECT(jv_string("consumer"), u, jv_string("ok"), jv_false(),
					jv_string("error"), jv_string(gl_broker_outcome_name[o]));
			if (o == COPY_PROTOCOL)
				rec = jv_object_set(rec, jv_string("detail"), jv_string(r->why));
			rec = jv_object_set(rec, jv_string("label"), gl_labels_to_jv(&r->L));
		}
		*results = jv_array_append(*results, rec);
	}
	gl_msg_free(&result);
	gl_slot_free(&r->slot);
	return jv_invalid();
}

/* gl-run --mode lazy: the data-dependent fork rule of Lemma 2 (paper §V,
 * "The class matters"; §VII-E "Existence bit"), the ablation that shows why
 * Plan splits on declared rather than contacted hosts. A full-view copy
 * (every item, every member) runs first with nothing delivered; afterwards
 * a destination's copy is forked only if that copy contacted it. Whether d
 * receives anything is then a function of items outside V(d): one bit per
 * call and host that the tripwire cannot see, since the request that is
 * delivered comes from d's own copy. */
static jv lazy_probe(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies)
{
	const struct gl_call *c = r->c;
	jv out = gl_broker_check_germline(r, gm);
	if (jv_is_valid(out))
		return out;
	int pidfd;
	/* its label: every item (its view), an empty slot, no reply */
	for (size_t x = 0; x < c->nitem; x++)
		join(&r->gL[r->plan->ngroup], &c->item[x].label);
	r->probe = true; /* an exec copy: every item file readable */
	out = gl_broker_fork_copy(r, gm, lost, copies, &pidfd);
	r->probe = false;
	if (jv_is_valid(out))
		return out;
	for (size_t x = 0; x < c->nitem; x++)
		r->items[x].b64 = r->b64[x];
	jv args = jv_is_valid(c->args) ? jv_copy(c->args) : jv_object();
	jv state = jv_object();
	autobuf struct gl_buf msg = {0};
	gl_callmsg(&msg, c->function, args, r->items, c->nitem, state, &r->twin[0]);
	jv_free(args);
	jv_free(state);
	r->probe = true;
	r->requests = 0;
	enum outcome o = gl_broker_reply_status(gl_msg_write(r->sock, r->deadline, msg.data, msg.len));
	struct gl_msg result = {.doc = jv_invalid(), .value = jv_invalid()};
	if (o == COPY_RESULT)
		o = gl_broker_serve(r, &result);
	r->probe = false;
	o = gl_broker_limit_outcome(r, gm, pidfd, o);
	gl_broker_end_copy(r, gm, pidfd);
	close(r->sock);
	r->sock = -1;
	if (o != COPY_RESULT)
		gl_warn("lazy: the full-view copy: %s", gl_broker_outcome_name[o]);
	gl_msg_free(&result); /* its value goes to no one */
	return jv_invalid();
}

/* lazy: a group that serves only destinations the full-view copy never
 * contacted is not forked at all. */
static bool lazy_skip(const struct run *r, const struct gl_plan_group *g)
{
	if (!r->b->lazy || g->nconsumer || !g->ndest)
		return false;
	for (size_t i = 0; i < g->ndest; i++)
		if (r->dest[g->dest[i]].contacted)
			return false;
	return true;
}

/* ---- the call (lines 5–7) ------------------------------------------------- */

/* One GL_HOME, many processes (issue 19): lock every slot this call's
 * copies read, σ[κ(g)] for each group g, before the first copy and until
 * the call ends, so that each copy's read (line 10), call and write-back
 * (line 23, committed when the copy ends) are one unit against other
 * gl-run processes: a counter two processes increment never loses an
 * update. gl_slot_lock takes them in ascending horizon id (no deadlock)
 * and waits at most this call's own budget, T per group; past it the call
 * is refused "slot_busy" rather than hanging. The refusal depends on how
 * long calls in those horizons ran, so it carries their join as its label
 * (SPEC §6). Returns jv_invalid() or the refusal. */
static jv lock_slots(struct run *r)
{
	const struct gl_plan *plan = r->plan;
	if (plan->ngroup == 0)
		return jv_invalid();
	const struct gl_labels **hz = gl_xcalloc(plan->ngroup, sizeof *hz);
	for (size_t gi = 0; gi < plan->ngroup; gi++)
		hz[gi] = &plan->group[gi].horizon;
	double t = r->b->deadline_s > 0 ? r->b->deadline_s : GL_BROKER_DEADLINE_DEFAULT;
	int64_t wait = (int64_t)(t * 1e9) * (int64_t)plan->ngroup;
	char *err = NULL;
	int rc = gl_slot_lock(&r->locks, r->b->home, r->c->release, hz, plan->ngroup,
			      gl_mono_ns() + wait, &err);
	int e = errno;
	jv out = jv_invalid();
	if (rc < 0) {
		autofree char *q = gl_sanitize(err, strlen(err));
		gl_warn("%s", q);
		free(err);
		struct gl_labels all = {0};
		for (size_t gi = 0; gi < plan->ngroup; gi++)
			join(&all, hz[gi]);
		out = e == ETIMEDOUT
			  ? gl_broker_refuse("slot_busy",
					     "another gl-run held this call's state slot for longer "
					     "than the call's budget (%.0f s)",
					     t * (double)plan->ngroup)
			  : gl_broker_refuse("bad_slot", "the state slot of this call's horizon "
							 "cannot be locked (gl-run's stderr says why)");
		out = jv_object_set(out, jv_string("labels"),
				    JV_OBJECT(jv_string("call"), gl_labels_to_jv(&all)));
		gl_labels_free(&all);
	}
	free(hz);
	return out;
}

jv gl_broker_call(const struct gl_broker *b, struct gl_germline *g, const struct gl_call *c,
		  const struct gl_plan *plan, bool *germline_lost)
{
	struct run r = {.b = b, .c = c, .plan = plan, .sock = -1, .triggers = jv_array(),
			.trig_src = jv_array()};
	*germline_lost = false;
	/* Line 6: τ, chosen without reading contents: the broker's wall clock
	 * at call start and a fresh seed, the same for every copy (under the
	 * --no-twin ablation, a fresh one per copy); Rel[e] ← ⟨⟩ for e ∈ D_f. */
	size_t ng = plan->ngroup ? plan->ngroup : 1;
	r.twin = gl_xcalloc(ng, sizeof *r.twin);
	r.snap = gl_xcalloc(ng, sizeof *r.snap);
	r.trans = gl_xcalloc(ng, sizeof *r.trans);
	for (size_t gi = 0; gi < ng; gi++) {
		if (gi == 0 || b->no_twin)
			gl_twin_new(&r.twin[gi]);
		else
			r.twin[gi] = r.twin[0];
		r.snap[gi] = jv_object();
		r.trans[gi] = jv_array();
	}
	r.items = gl_xcalloc(c->nitem ? c->nitem : 1, sizeof *r.items);
	for (size_t x = 0; x < c->nitem; x++)
		r.items[x] = (struct gl_callmsg_item){c->item[x].name,
						      gl_labels_to_jv(&c->item[x].label), NULL};
	r.gL = gl_xcalloc(plan->ngroup + 1, sizeof *r.gL); /* + lazy's full-view copy */
	r.dest = gl_xcalloc(c->ndest ? c->ndest : 1, sizeof *r.dest);
	for (size_t gi = 0; gi < plan->ngroup; gi++)
		for (size_t i = 0; i < plan->group[gi].ndest; i++)
			r.dest[plan->group[gi].dest[i]].group = gi;

	jv out = gl_broker_load_items(&r);
	jv results = jv_array();
	size_t copies = 0;
	if (!jv_is_valid(out))
		out = lock_slots(&r);
	if (b->lazy && !jv_is_valid(out) && c->ndest)
		out = lazy_probe(&r, g, germline_lost, &copies);
	/* Line 7: the groups in Plan's order, one copy at a time. */
	for (r.gi = 0; !jv_is_valid(out) && r.gi < plan->ngroup; r.gi++)
		if (gl_cancel_requested(b->cancel)) /* MCP notifications/cancelled */
			out = gl_broker_refuse("cancelled", "the call was cancelled by its client");
		else if (!lazy_skip(&r, &plan->group[r.gi]))
			out = run_group(&r, g, &results, germline_lost, &copies);

	gl_slot_unlock(&r.locks); /* the call's writes are committed (or dropped) */

	/* SPEC §6: every field's label (broker_record.c). A refusal after a
	 * copy ran carries the call's label too: which check failed, and when,
	 * may follow what ran before it. */
	gl_broker_call_label(&r, plan->ngroup + 1);
	if (!jv_is_valid(out)) {
		out = gl_broker_record(&r, copies, results);
	} else {
		jv_free(results);
		if (copies) /* before any copy, a refusal is the broker's own */
			out = jv_object_set(out, jv_string("labels"),
					    JV_OBJECT(jv_string("call"), gl_labels_to_jv(&r.callL)));
	}
	gl_broker_items_free(&r);
	for (size_t i = 0; i < c->nitem; i++)
		jv_free(r.items[i].label);
	free(r.items);
	for (size_t gi = 0; gi < ng; gi++) {
		jv_free(r.snap[gi]);
		jv_free(r.trans[gi]);
	}
	free(r.twin);
	free(r.snap);
	free(r.trans);
	for (size_t e = 0; e < c->ndest; e++) {
		for (size_t k = 0; k < r.dest[e].nrel; k++)
			jv_free(r.dest[e].rel[k].reply);
		free(r.dest[e].rel);
	}
	free(r.dest);
	gl_broker_tally_free(&r.denied);
	for (size_t gi = 0; gi <= plan->ngroup; gi++)
		gl_labels_free(&r.gL[gi]);
	free(r.gL);
	gl_labels_free(&r.callL);
	gl_labels_free(&r.L);
	jv_free(r.triggers);
	jv_free(r.trig_src);
	free(r.why);
	return out;
}
