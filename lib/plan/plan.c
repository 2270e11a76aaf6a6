/* plan.c — Plan, paper Algorithm 1 lines 1–4; see plan.h and docs/plan.md.
 *
 *   1: procedure PLAN(f, m, ℓ, D_f, C)           ▷ never reads contents
 *   2:   G ← group D_f ∪ C by view V(d)
 *   3:   split each S ∈ G until c(e) ⊆ c(d) for hosts e, members d ∈ S
 *   4:   return G, ordered so that V(g) ⊊ V(g′) puts g first
 *
 * Where the structural facts of Appendix A are made true:
 *   P1 (members of a group share one view): plan_view_class() only ever
 *      builds groups from one run of members with equal views (line 2).
 *   P2 (a group's destinations share one clearance, equal to its horizon):
 *      the split puts exactly the destinations of one clearance in a group,
 *      and a consumer joins only a group whose clearance lies inside its
 *      own, so the intersection of the members' clearances is that
 *      clearance (line 3).
 *   P3 (a strict sub-view runs first; the order depends only on Plan's
 *      inputs): members are sorted by view size first, and V(g) ⊊ V(g′)
 *      implies |V(g)| < |V(g′)| (line 4).
 *   P4 (one reply semantics) belongs to the broker (gl-run).
 * Theorem 3: within a view Plan makes one group per distinct destination
 * clearance plus one for the consumers no such clearance fits inside, and
 * one view class per distinct view — exactly the lower bound of part (a),
 * which tests/plan_prop.py recomputes from the theorem's statement. */
#define _GNU_SOURCE
#include "plan/plan.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "json/json.h"

struct member {
	bool dest;   /* a destination host (else a consumer) */
	size_t idx;  /* into call->dest or call->consumer */
	const char *name;
	const struct gl_labels *clr; /* c(d) */
	uint64_t *view;              /* V(d) */
	size_t vsize;                /* |V(d)| */
};

/* Views in execution order: smaller first (this is what makes P3 hold),
 * then by the sorted item names, compared as lists. Items are sorted by
 * name, so for two views of equal size the one holding the lowest item in
 * which they differ has the smaller list. */
static int view_cmp(const uint64_t *a, size_t asize, const uint64_t *b, size_t bsize,
		    size_t words)
{
	if (asize != bsize)
		return asize < bsize ? -1 : 1;
	for (size_t w = 0; w < words; w++) {
		uint64_t x = a[w] ^ b[w];
		if (x)
			return (a[w] >> __builtin_ctzll(x)) & 1 ? -1 : 1;
	}
	return 0;
}

/* Horizon order: fewer tags first, then the tags as lists. Within a view
 * a destination group whose clearance lies strictly inside another's thus
 * runs first, so its delivered replies are recorded before the group that
 * may receive them (Algorithm 1 line 19) runs. */
static int clr_cmp(const struct gl_labels *a, const struct gl_labels *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	return gl_labels_cmp(a, b);
}

static int member_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct member *a = pa, *b = pb;
	int c = view_cmp(a->view, a->vsize, b->view, b->vsize, *(const size_t *)ctx);
	if (c)
		return c;
	if (a->dest != b->dest)
		return a->dest ? -1 : 1;
	if (a->dest && (c = clr_cmp(a->clr, b->clr)))
		return c;
	return strcmp(a->name, b->name);
}

static void intersect_into(struct gl_labels *h, const struct gl_labels *c)
{
	struct gl_labels t;
	gl_labels_intersect(&t, h, c);
	gl_labels_free(h);
	*h = t;
}

static struct gl_plan_group *new_group(struct gl_plan *plan, const uint64_t *view, size_t nd,
				       size_t nc)
{
	struct gl_plan_group *g = &plan->group[plan->ngroup++];
	g->dest = gl_xcalloc(nd, sizeof *g->dest);
	g->consumer = gl_xcalloc(nc, sizeof *g->consumer);
	g->view = gl_xcalloc(plan->words, sizeof *g->view);
	memcpy(g->view, view, plan->words * sizeof *view);
	return g;
}

static void add_member(struct gl_plan_group *g, const struct member *m)
{
	if (m->dest)
		g->dest[g->ndest++] = m->idx;
	else
		g->consumer[g->nconsumer++] = m->idx;
	if (g->ndest + g->nconsumer == 1)
		gl_labels_copy(&g->horizon, m->clr);
	else
		intersect_into(&g->horizon, m->clr); /* κ(g) = ∩ c(d), Definition 3 */
}

/* The groups of one view class m[0..n): destinations first, sorted by
 * clearance then name; consumers after, sorted by name (member_cmp). */
static void plan_view_class(struct gl_plan *plan, const struct member *m, size_t n)
{
	size_t nd = 0;
	while (nd < n && m[nd].dest)
		nd++;
	/* Line 3: one part per distinct destination clearance. part[p] is the
	 * first destination of part p; parts come in horizon order. */
	size_t *part = gl_xcalloc(nd + 1, sizeof *part), np = 0;
	for (size_t i = 0; i < nd; i++)
		if (i == 0 || !gl_labels_equal(m[i - 1].clr, m[i].clr))
			part[np++] = i;
	part[np] = nd;

	/* A consumer joins a part whose clearance lies inside its own; of
	 * several, the one with the most tags (the widest horizon it is
	 * cleared for), then the smallest as a tag list. choice[j] == np:
	 * none fits. joined[p]: consumers that chose part p. */
	size_t nc = n - nd, left = 0;
	size_t *choice = gl_xcalloc(nc, sizeof *choice);
	size_t *joined = gl_xcalloc(np + 1, sizeof *joined);
	for (size_t j = 0; j < nc; j++) {
		const struct gl_labels *uc = m[nd + j].clr, *best = NULL;
		choice[j] = np;
		for (size_t p = 0; p < np; p++) {
			const struct gl_labels *pc = m[part[p]].clr;
			if (!gl_labels_subset(pc, uc))
				continue;
			if (!best || pc->n > best->n ||
			    (pc->n == best->n && gl_labels_cmp(pc, best) < 0)) {
				best = pc;
				choice[j] = p;
			}
		}
		joined[choice[j]]++;
		left += choice[j] == np;
	}

	const uint64_t *view = m[0].view;
	for (size_t p = 0; p < np; p++) {
		struct gl_plan_group *g = new_group(plan, view, part[p + 1] - part[p], joined[p]);
		for (size_t i = part[p]; i < part[p + 1]; i++)
			add_member(g, &m[i]);
		for (size_t j = 0; j < nc; j++)
			if (choice[j] == p)
				add_member(g, &m[nd + j]);
	}
	/* The consumers no destination clearance of their view fits inside
	 * share one group (Theorem 3(b): they return no replies, and every
	 * host reply of this view is inadmissible for all of them). */
	if (left) {
		struct gl_plan_group *g = new_group(plan, view, 0, left);
		for (size_t j = 0; j < nc; j++)
			if (choice[j] == np)
				add_member(g, &m[nd + j]);
	}
	free(part);
	free(choice);
	free(joined);
}

void gl_plan_make(struct gl_plan *out, const struct gl_call *c, const struct gl_policy *p,
		  enum gl_plan_mode mode)
{
	size_t nm = c->ndest + c->nconsumer;
	out->words = c->nitem / 64 + 1;
	out->ngroup = 0;
	/* At most one group per member (and one for nosplit). */
	out->group = gl_xcalloc(nm, sizeof *out->group);
	if (nm == 0)
		return; /* nothing to serve: no copy runs */

	struct member *m = gl_xcalloc(nm, sizeof *m);
	uint64_t *bits = gl_xcalloc(nm * out->words, sizeof *bits);
	for (size_t i = 0; i < nm; i++) {
		struct member *d = &m[i];
		d->dest = i < c->ndest;
		d->idx = d->dest ? i : i - c->ndest;
		d->name = d->dest ? c->dest[d->idx] : c->consumer[d->idx];
		d->clr = gl_policy_clearance(p, d->name); /* public [] if none */
		d->view = bits + i * out->words;
		/* V(d) = {x ∈ X : ℓ(x) ⊆ c(d)} (Definition 2); nosplit: all of X. */
		for (size_t x = 0; x < c->nitem; x++)
			if (mode == GL_PLAN_NOSPLIT || gl_labels_subset(&c->item[x].label, d->clr)) {
				d->view[x / 64] |= UINT64_C(1) << (x % 64);
				d->vsize++;
			}
	}

	if (mode == GL_PLAN_NOSPLIT) {
		struct gl_plan_group *g = new_group(out, m[0].view, c->ndest, c->nconsumer);
		for (size_t i = 0; i < nm; i++)
			add_member(g, &m[i]);
	} else {
		/* Line 2 and line 4: sort by view, then cut into runs of equal
		 * views; the runs come out smallest view first. */
		qsort_r(m, nm, sizeof *m, member_cmp, &out->words);
		for (size_t s = 0, e; s < nm; s = e) {
			for (e = s + 1; e < nm && !view_cmp(m[s].view, m[s].vsize, m[e].view,
							     m[e].vsize, out->words);
			     e++)
				;
			plan_view_class(out, m + s, e - s);
		}
	}
	free(bits);
	free(m);
}

static void put_names(struct gl_buf *b, const char *key, const char *const *names,
		      const size_t *idx, size_t n)
{
	gl_buf_adds(b, key);
	gl_buf_addc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			gl_buf_addc(b, ',');
		gl_json_dump_string(b, names[idx ? idx[i] : i], strlen(names[idx ? idx[i] : i]));
	}
	gl_buf_addc(b, ']');
}

void gl_plan_dump(struct gl_buf *b, const struct gl_plan *plan, const struct gl_call *c)
{
	/* Keys in byte order, as every germline writer puts them. */
	put_names(b, "{\"destinations\":", c->dest, NULL, c->ndest);
	gl_buf_adds(b, ",\"groups\":[");
	for (size_t i = 0; i < plan->ngroup; i++) {
		const struct gl_plan_group *g = &plan->group[i];
		if (i)
			gl_buf_addc(b, ',');
		put_names(b, "{\"consumers\":", c->consumer, g->consumer, g->nconsumer);
		put_names(b, ",\"destinations\":", c->dest, g->dest, g->ndest);
		put_names(b, ",\"horizon\":", g->horizon.tag, NULL, g->horizon.n);
		gl_buf_adds(b, ",\"view\":[");
		bool first = true;
		for (size_t x = 0; x < c->nitem; x++)
			if ((g->view[x / 64] >> (x % 64)) & 1) {
				if (!first)
					gl_buf_addc(b, ',');
				gl_json_dump_string(b, c->item[x].name, strlen(c->item[x].name));
				first = false;
			}
		gl_buf_adds(b, "]}");
	}
	gl_buf_adds(b, "]}");
}

void gl_plan_free(struct gl_plan *plan)
{
	for (size_t i = 0; i < plan->ngroup; i++) {
		free(plan->group[i].dest);
		free(plan->group[i].consumer);
		free(plan->group[i].view);
		gl_labels_free(&plan->group[i].horizon);
	}
	free(plan->group);
	plan->group = NULL;
	plan->ngroup = 0;
}
