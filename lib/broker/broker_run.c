/* broker_run.c — what every mode of the broker loop shares around
 * Algorithm 1 (lib/broker/broker.c): the run's life (one init, one free),
 * the replies the loop sends of its own (denied, placeholder, a
 * delivery's), refusals, and the call's slot locks (issue 19). See
 * broker_impl.h. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "broker/http.h"
#include "broker/secrets.h"
#include "json/json.h"
#include "plan/labels.h"
#include "core/util.h"

const char *const gl_broker_outcome_name[] = {"ok",     "deadline", "crash", "protocol",
					      "memory", "pids",     "cpu",   "cancelled"};

jv gl_broker_refusal(const struct gl_fail *f)
{
	return JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
			 jv_string(gl_code_name(f->code)), jv_string("detail"),
			 jv_string(gl_fail_detail(f)));
}

enum outcome gl_broker_protocol(struct run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(r->why);
	if (vasprintf(&r->why, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	return COPY_PROTOCOL;
}

enum outcome gl_broker_reply_status(enum gl_msg_status st)
{
	return st == GL_MSG_OK ? COPY_RESULT : st == GL_MSG_DEADLINE ? COPY_DEADLINE : COPY_CRASH;
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

/* Line 14: deliver q, get ρ. A delivery that gets no reply answers the copy
 * with a 502 marked X-Germline: unreachable (docs/gl-run.md); one the
 * operator's secrets refuse (lib/broker/secrets.h: a request they would
 * grow past its bound, or an encoded reply to a request that carried one)
 * with a 502 marked X-Germline: secret-refused. The reply the copy gets,
 * and every record of it, has each secret's value replaced by its
 * placeholder. */
static jv reply_502(struct run *r, const char *host, const char *mark, const struct gl_fail *f)
{
	(void)r;
	autofree char *q = gl_sanitize(host, strlen(host));
	gl_warn("request to %s: %s", q, gl_fail_detail(f));
	return JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("status"),
			 jv_number(502), jv_string("headers"),
			 JV_ARRAY(JV_ARRAY(jv_string("X-Germline"), jv_string(mark))),
			 jv_string("body"), jv_string(""));
}

jv gl_broker_deliver(struct run *r, struct gl_http_req *req, bool *no_time)
{
	struct gl_http_reply rep;
	autofail struct gl_fail f = {0};
	struct gl_subst sub;
	const char *route = gl_policy_route(r->b->pol, req->host);
	if (gl_secrets_apply(r->config, req, &sub, &f) < 0) {
		gl_subst_free(&sub);
		return reply_502(r, req->host, "secret-refused", &f);
	}
	enum gl_http_status st =
	    gl_http_deliver(req, route, &sub, &r->b->pol->ca_pem, r->deadline, &rep, &f);
	bool carried = sub.used > 0;
	gl_subst_free(&sub);
	if (st == GL_HTTP_NO_TIME) {
		*no_time = true;
		return jv_invalid();
	}
	if (st != GL_HTTP_OK)
		return reply_502(r, req->host, "unreachable", &f);
	if (gl_secrets_redact(r->config, &rep, carried, &f) < 0) {
		gl_http_reply_free(&rep);
		return reply_502(r, req->host, "secret-refused", &f);
	}
	autobuf struct gl_buf b64 = {0};
	gl_b64_encode(&b64, (unsigned char *)rep.body.data, rep.body.len);
	jv reply = JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("status"),
			     jv_number((double)rep.status), jv_string("headers"), jv_copy(rep.headers),
			     jv_string("body"), jv_string_sized(b64.data ? b64.data : "", (int)b64.len));
	gl_http_reply_free(&rep);
	return reply;
}

/* ---- the run's life -------------------------------------------------------- */

/* Line 6's per-group state: τ (one for every copy, or a fresh one per copy
 * under --no-twin), σ and T as delivered; D_f's group; the copies' labels
 * (+ lazy's full-view copy). */
static void init_groups(struct run *r, size_t groups)
{
	const struct gl_plan *plan = r->plan;
	r->ncopy = groups ? groups : 1;
	r->twin = gl_xcalloc(r->ncopy, sizeof *r->twin);
	r->snap = gl_xcalloc(r->ncopy, sizeof *r->snap);
	r->trans = gl_xcalloc(r->ncopy, sizeof *r->trans);
	for (size_t gi = 0; gi < r->ncopy; gi++) {
		if (gi == 0 || r->b->no_twin)
			gl_twin_new(&r->twin[gi]);
		else
			r->twin[gi] = r->twin[0];
		r->snap[gi] = jv_object();
		r->trans[gi] = jv_array();
	}
	r->nL = groups + 1;
	r->gL = gl_xcalloc(r->nL, sizeof *r->gL);
	r->dest = gl_xcalloc(r->c->ndest ? r->c->ndest : 1, sizeof *r->dest);
	for (size_t gi = 0; gi < groups; gi++)
		for (size_t i = 0; i < plan->group[gi].ndest; i++)
			r->dest[plan->group[gi].dest[i]].group = gi;
}

void gl_broker_run_init(struct run *r, const struct mode *mode, const struct gl_broker *b,
			const struct gl_call *c, const struct gl_plan *plan, size_t groups)
{
	*r = (struct run){.mode = mode, .b = b, .c = c, .plan = plan, .sock = -1, .pidfd = -1, .live_pid = -1,
			  .triggers = jv_array(), .trig_src = jv_array(),
			  .replay_seq = jv_invalid()};
	if (!c)
		return; /* replay: the witness brings the call message's parts */
	r->items = gl_xcalloc(c->nitem ? c->nitem : 1, sizeof *r->items);
	for (size_t x = 0; x < c->nitem; x++)
		r->items[x] = (struct gl_callmsg_item){c->item[x].name,
						       gl_labels_to_jv(&c->item[x].label), NULL};
	if (mode == &gl_mode_germline || mode == &gl_mode_lazy)
		init_groups(r, groups);
}

void gl_broker_run_free(struct run *r, struct gl_germline *gm)
{
	if (r->pidfd >= 0) /* a copy still running: line 27 before anything else */
		gl_broker_end_copy(r, gm);
	gl_stream_copy_end(r, false); /* a copy never served to its end: its sockets */
	if (r->c) {
		gl_broker_items_free(r);
		for (size_t i = 0; i < r->c->nitem; i++)
			jv_free(r->items[i].label);
		for (size_t e = 0; r->dest && e < r->c->ndest; e++) {
			for (size_t k = 0; k < r->dest[e].nrel; k++)
				jv_free(r->dest[e].rel[k].reply);
			free(r->dest[e].rel);
			gl_stream_rec_free(&r->dest[e].srec);
		}
	}
	for (size_t i = 0; r->rdest && r->replay && i < r->replay->nhost; i++)
		gl_stream_rec_free(&r->rdest[i].srec);
	free(r->rdest);
	free(r->items);
	free(r->dest);
	for (size_t gi = 0; gi < r->ncopy; gi++) {
		jv_free(r->snap[gi]);
		jv_free(r->trans[gi]);
	}
	free(r->twin);
	free(r->snap);
	free(r->trans);
	gl_broker_tally_free(&r->denied);
	gl_broker_tally_free(&r->sent);
	for (size_t gi = 0; gi < r->nL; gi++)
		gl_labels_free(&r->gL[gi]);
	free(r->gL);
	gl_labels_free(&r->callL);
	gl_labels_free(&r->L);
	jv_free(r->triggers);
	jv_free(r->trig_src);
	jv_free(r->replay_seq);
	free(r->why);
	*r = (struct run){.sock = -1, .pidfd = -1, .live_pid = -1};
}

/* ---- the call's slots (issue 19) ------------------------------------------ */

/* One GL_HOME, many processes (issue 19): lock every slot this call's
 * copies read, σ[κ(g)] for each group g, before the first copy and until
 * the call ends, so that each copy's read (line 10), call and write-back
 * (line 23, committed when the copy ends) are one unit against other
 * gl-run processes: a counter two processes increment never loses an
 * update. gl_slot_lock takes them in ascending horizon id (no deadlock)
 * and waits at most this call's own budget, T per group; past it the call
 * is refused "slot_busy" rather than hanging. The refusal depends on how
 * long calls in those horizons ran, so it carries their join as its label
 * (SPEC §6). 0, or -1 with *f (slot_busy, bad_slot) and *label (owned). */
int gl_broker_lock_slots(struct run *r, jv *label, struct gl_fail *f)
{
	const struct gl_plan *plan = r->plan;
	if (plan->ngroup == 0)
		return 0;
	const struct gl_labels **hz = gl_xcalloc(plan->ngroup, sizeof *hz);
	for (size_t gi = 0; gi < plan->ngroup; gi++)
		hz[gi] = &plan->group[gi].horizon;
	double t = r->b->deadline_s > 0 ? r->b->deadline_s : GL_BROKER_DEADLINE_DEFAULT;
	int64_t wait = (int64_t)(t * 1e9) * (int64_t)plan->ngroup;
	int rc = gl_slot_lock(&r->locks, r->b->home, r->c->release, hz, plan->ngroup,
			      gl_mono_ns() + wait, f);
	int e = errno;
	if (rc < 0) {
		autofree char *q = gl_sanitize(gl_fail_detail(f), strlen(gl_fail_detail(f)));
		gl_warn("%s", q);
		struct gl_labels all = {0};
		for (size_t gi = 0; gi < plan->ngroup; gi++)
			gl_labels_join(&all, hz[gi]);
		if (e == ETIMEDOUT)
			gl_fail(f, GL_E_SLOT_BUSY,
				"another gl-run held this call's state slot for longer than the "
				"call's budget (%.0f s)",
				t * (double)plan->ngroup);
		else
			gl_fail(f, GL_E_BAD_SLOT, "the state slot of this call's horizon cannot be "
						  "locked (gl-run's stderr says why)");
		*label = gl_labels_to_jv(&all);
		gl_labels_free(&all);
	}
	free(hz);
	return rc < 0 ? -1 : 0;
}
