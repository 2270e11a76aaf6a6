/* broker_record.c — the body of a germline call's result record and the
 * label of each of its fields (SPEC §6, "Nothing a copy chose reaches a
 * consumer outside a labelled value"; docs/gl-run.md "Field labels").
 *
 * What a copy chooses is not only its value: which hosts it names (denied
 * names, up to GL_BROKER_DENIED_NAMES × 253 bytes a copy), how many
 * requests it sends, where its sequence first differs from the recorded
 * one and how (a trigger's position and kind), how it ends (deadline,
 * crash, protocol, a tool error's text) and how long it takes. Each of
 * these is a function of the copy's inputs — its view V(g), its slot σ and
 * the replies it got — so it carries the copy's output label L, the label
 * its value gets by Eq. (2) (paper Algorithm 1 line 28). A field several
 * copies influence gets the join of their labels. A consumer (the agent
 * host reading this record, or gl-run --serve-mcp for its --consumer,
 * lib/broker/mcp.c) passes a field on only where the consumer's clearance covers
 * its label.
 *
 * Why the label may be the copy's final L, itself data-dependent, and not
 * only a plan-fixed bound: L only grows, and each step joins c(e) for a
 * host the copy chose to contact after seeing data at its current L. For
 * a consumer cleared for C, "L ⊑ C at the end" is so decided by data ⊑ C
 * alone (the first step past C is taken by a copy still below C), as for
 * the value of Eq. (2).
 *
 * The record keeps its fields and their shape (gl-replay, gl-damp and the
 * agent host read them) and adds one member, "labels":
 *   {"call": ℓ, "delivered": [ℓ…], "denied": [ℓ…], "triggers": [ℓ…]}
 * where labels.X[i] is the label of X[i] and labels.call the label of the
 * call's whole-call fields (elapsed_ms, a lazy call's copies, a refusal
 * after a copy ran). Denied names are tallied per copy and an entry holds
 * the requests of copies of one label only: merging a public copy's
 * denial with an hr copy's into one hr entry would let the hr copy remove
 * what a public consumer sees. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "plan/labels.h"
#include "core/util.h"

void gl_broker_tally(struct tally *t, size_t group, const char *host)
{
	if (!host || !gl_dest_ok(host, strlen(host)))
		host = "(invalid)";
	/* Names come from the copy: at most GL_BROKER_DENIED_NAMES per copy
	 * are reported, the rest are counted under "(other)". */
	for (int pass = 0; pass < 2; pass++) {
		size_t names = 0;
		for (size_t i = 0; i < t->n; i++) {
			if (t->e[i].group != group)
				continue;
			if (!strcmp(t->e[i].host, host)) {
				t->e[i].count++;
				return;
			}
			names += strcmp(t->e[i].host, "(other)") != 0;
		}
		if (names < GL_BROKER_DENIED_NAMES || !strcmp(host, "(other)"))
			break;
		host = "(other)";
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 8;
		t->e = gl_xrealloc(t->e, t->cap * sizeof *t->e);
	}
	t->e[t->n++] = (struct denied){gl_xstrdup(host), 1, group};
}

void gl_broker_tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].host);
	free(t->e);
	*t = (struct tally){0};
}

/* By name, then by the label of the copy (lab, qsort_r's context). */
static int cmp_entry(const void *a, const void *b, void *ctx)
{
	const struct gl_labels *tally_lab = ctx;
	const struct denied *x = a, *y = b;
	int c = strcmp(x->host, y->host);
	if (c)
		return c;
	c = gl_labels_cmp(&tally_lab[x->group], &tally_lab[y->group]);
	return c ? c : (x->group > y->group) - (x->group < y->group);
}

jv gl_broker_tally_out(struct tally *t, const struct gl_labels *lab, jv *labels)
{
	if (t->n)
		qsort_r(t->e, t->n, sizeof *t->e, cmp_entry, (void *)lab);
	jv out = jv_array();
	*labels = jv_array();
	for (size_t i = 0; i < t->n;) {
		size_t j = i + 1, count = t->e[i].count;
		const struct gl_labels *l = &lab[t->e[i].group];
		for (; j < t->n && !strcmp(t->e[j].host, t->e[i].host) &&
		       gl_labels_equal(&lab[t->e[j].group], l);
		     j++)
			count += t->e[j].count;
		out = jv_array_append(out, JV_OBJECT(jv_string("destination"),
						     jv_string(t->e[i].host), jv_string("requests"),
						     jv_number((double)count)));
		*labels = jv_array_append(*labels, gl_labels_to_jv(l));
		i = j;
	}
	gl_broker_tally_free(t);
	return out;
}

/* delivered[]: e's requests were sent by the copy of e's group, so the
 * entry (its presence and its count) has that copy's label. */
static jv delivered(const struct run *r, jv *labels)
{
	jv out = jv_array();
	*labels = jv_array();
	for (size_t e = 0; e < r->c->ndest; e++) {
		if (!r->dest[e].delivered)
			continue;
		out = jv_array_append(out, JV_OBJECT(jv_string("destination"),
						     jv_string(r->c->dest[e]), jv_string("requests"),
						     jv_number((double)r->dest[e].delivered)));
		*labels = jv_array_append(*labels, gl_labels_to_jv(&r->gL[r->dest[e].group]));
	}
	return out;
}

/* triggers[i]: its position and kind compare the requests of the copy of
 * g with those e's copy made (Rel[e]): the join of both copies' labels. */
static jv trigger_labels(const struct run *r)
{
	jv out = jv_array();
	jv_array_foreach(r->trig_src, i, src)
	{
		(void)i;
		size_t g = (size_t)jv_number_value(jv_array_get(jv_copy(src), 0));
		size_t ge = (size_t)jv_number_value(jv_array_get(jv_copy(src), 1));
		struct gl_labels u = {0};
		gl_labels_union(&u, &r->gL[g], &r->gL[ge]);
		out = jv_array_append(out, gl_labels_to_jv(&u));
		gl_labels_free(&u);
		jv_free(src);
	}
	return out;
}

void gl_broker_call_label(struct run *r, size_t groups)
{
	struct gl_labels L = {0};
	for (size_t x = 0; x < r->c->nitem; x++)
		gl_labels_join(&L, &r->c->item[x].label);
	for (size_t g = 0; r->gL && g < groups; g++)
		gl_labels_join(&L, &r->gL[g]);
	gl_labels_free(&r->callL);
	r->callL = L;
}

jv gl_broker_consumer_record(const char *u, enum outcome o, const struct gl_msg *result,
			     const char *why, const struct gl_labels *L, bool limits)
{
	jv rec = JV_OBJECT(jv_string("consumer"), jv_string(u), jv_string("ok"),
			   jv_bool(o == COPY_RESULT && !result->error));
	if (o == COPY_RESULT && !result->error) {
		rec = jv_object_set(rec, jv_string("value"), jv_copy(result->value));
	} else if (o == COPY_RESULT) {
		autofree char *d = gl_sanitize(result->error,
					       strnlen(result->error, GL_MSG_ERROR_MAX));
		/* "disk": the copy reached its workspace bound (SPEC §6) */
		const char *code = limits && result->limit ? result->limit : "tool_error";
		rec = jv_object_set(rec, jv_string("error"), jv_string(code));
		rec = jv_object_set(rec, jv_string("detail"), jv_string(d));
	} else {
		/* how the copy ended is its choice: labelled like a value */
		rec = jv_object_set(rec, jv_string("error"), jv_string(gl_broker_outcome_name[o]));
		if (o == COPY_PROTOCOL)
			rec = jv_object_set(rec, jv_string("detail"), jv_string(why));
	}
	/* the MCP server's log messages of the call (docs/mcp.md "Log
	 * messages"): the copy's words, labelled like its value */
	if (o == COPY_RESULT && jv_get_kind(result->log) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(result->log)) > 0)
		rec = jv_object_set(rec, jv_string("log"), jv_copy(result->log));
	/* and its progress notifications (docs/mcp.md "Cancellation and
	 * progress"): the copy's words too */
	if (o == COPY_RESULT && jv_get_kind(result->progress) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(result->progress)) > 0)
		rec = jv_object_set(rec, jv_string("progress"), jv_copy(result->progress));
	if (L)
		rec = jv_object_set(rec, jv_string("label"), gl_labels_to_jv(L));
	return rec;
}

jv gl_broker_record(struct run *r, size_t copies, jv results)
{
	jv ld, lx;
	jv dl = delivered(r, &ld);
	jv dn = gl_broker_tally_out(&r->denied, r->gL, &lx);
	jv labels = JV_OBJECT(jv_string("call"), gl_labels_to_jv(&r->callL), jv_string("delivered"),
			      ld, jv_string("denied"), lx, jv_string("triggers"),
			      trigger_labels(r));
	return JV_OBJECT(jv_string("ok"), jv_true(), jv_string("copies"), jv_number((double)copies),
			 jv_string("results"), results, jv_string("delivered"), dl,
			 jv_string("denied"), dn, jv_string("triggers"), jv_copy(r->triggers),
			 jv_string("labels"), labels);
}
