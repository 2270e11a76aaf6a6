/* broker_lazy.c — gl-run --mode lazy: the data-dependent fork rule of
 * Lemma 2 (paper §V, "The class matters"; §VII-E "Existence bit"), the
 * ablation that shows why Plan splits on declared rather than contacted
 * hosts. A full-view copy (every item, every member) runs first in the
 * probe mode, with nothing delivered; afterwards a destination's copy is
 * forked only if that copy contacted it (Algorithm 1 otherwise as in
 * broker.c). Whether d receives anything is then a function of items
 * outside V(d): one bit per call and host that the tripwire cannot see,
 * since the request that is delivered comes from d's own copy. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include "broker/http.h"
#include "core/util.h"

/* The full-view copy's effects: nothing is delivered or recorded; a
 * declared host it contacts is marked, and only a marked host's copy is
 * forked and delivers. Its denied names are tallied as copy ngroup. */
static jv probe_effect(struct run *r, const struct gl_msg *m, enum outcome *o)
{
	if (m->type == GL_MSG_STREAM)
		return gl_stream_effect(r, m, o, STREAM_PROBE);
	struct gl_http_req req;
	autofail struct gl_fail f = {0};
	size_t who = r->plan->ngroup;
	if (gl_http_req_init(&req, m, &f) < 0) {
		gl_broker_tally(&r->denied, who, NULL);
		gl_http_req_free(&req);
		return gl_broker_denied();
	}
	int ei = dest_index(r->c, req.host);
	jv reply;
	if (ei < 0 || !req.http || req.host_header_conflict) {
		gl_broker_tally(&r->denied, who, req.host);
		reply = gl_broker_denied();
	} else {
		r->dest[ei].contacted = true;
		reply = gl_broker_placeholder();
	}
	gl_http_req_free(&req);
	return reply;
}

const struct mode gl_mode_probe = {.name = "lazy probe",
				   .effect = probe_effect,
				   .store_state = false,
				   .full_view = true, /* an exec copy: every item file readable */
				   .bounded = true};

int gl_broker_lazy_probe(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies,
			 struct gl_fail *f)
{
	const struct gl_call *c = r->c;
	if (gl_broker_check_germline(r, gm, f) < 0)
		return -1;
	/* its label: every item (its view), an empty slot, no reply */
	for (size_t x = 0; x < c->nitem; x++)
		gl_labels_join(&r->gL[r->plan->ngroup], &c->item[x].label);
	const struct mode *keep = r->mode;
	r->mode = &gl_mode_probe;
	if (gl_broker_fork_copy(r, gm, lost, copies, f) < 0) {
		r->mode = keep;
		return -1;
	}
	for (size_t x = 0; x < c->nitem; x++)
		r->items[x].b64 = r->b64[x];
	jv args = jv_is_valid(c->args) ? jv_copy(c->args) : jv_object();
	jv state = jv_object();
	autobuf struct gl_buf msg = {0};
	gl_callmsg(&msg, c->function, args, r->items, c->nitem, state, &r->twin[0]);
	jv_free(args);
	jv_free(state);
	r->requests = 0;
	struct gl_msg result;
	enum outcome o = gl_broker_serve_copy(r, gm, &msg, &result);
	r->mode = keep;
	if (o != COPY_RESULT)
		gl_warn("lazy: the full-view copy: %s", gl_broker_outcome_name[o]);
	gl_msg_free(&result); /* its value goes to no one */
	return 0;
}

bool gl_broker_lazy_skip(const struct run *r, const struct gl_plan_group *g)
{
	if (!r->mode->contacted_only || g->nconsumer || !g->ndest)
		return false;
	for (size_t i = 0; i < g->ndest; i++)
		if (r->dest[g->dest[i]].contacted)
			return false;
	return true;
}
