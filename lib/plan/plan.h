/* plan.h — Plan: paper Algorithm 1 lines 1–4 (§IV-B, Theorem 3).
 *
 * PLAN(f, m, ℓ, D_f, C) groups the declared destinations and consumers by
 * view, splits each view so that a group's destinations share one
 * clearance, attaches consumers, and orders the groups so that a strict
 * sub-view runs first. It never reads contents (it is given none). The
 * groups it returns satisfy the structural facts P1–P3 that the proofs of
 * Appendix A rest on (plan.c says where each is made true); P4 is the
 * broker's. docs/plan.md gives the rules and every tie-break. */
#ifndef GL_PLAN_H
#define GL_PLAN_H

#include <jv.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/call.h"
#include "plan/labels.h"
#include "plan/policy.h"
#include "core/util.h"

enum gl_plan_mode {
	GL_PLAN_GERMLINE, /* declared-destination splitting (Theorem 3) */
	GL_PLAN_NOSPLIT,  /* the ablation: one group, every item, every member */
};

/* One group g: its members, its view V(g), its horizon κ(g). */
struct gl_plan_group {
	size_t *dest; /* indices into call->dest, ascending (names sorted) */
	size_t ndest;
	size_t *consumer; /* indices into call->consumer, ascending */
	size_t nconsumer;
	uint64_t *view; /* bitset over call->item (item i is bit i) */
	struct gl_labels horizon; /* ∩ of the members' clearances */
};

struct gl_plan {
	struct gl_plan_group *group; /* in execution order */
	size_t ngroup;
	size_t words; /* uint64_t words of each view bitset */
};

/* Plan call c, clearances from p. The plan borrows strings of c and p and
 * must not outlive either. */
void gl_plan_make(struct gl_plan *out, const struct gl_call *c, const struct gl_policy *p,
		  enum gl_plan_mode mode);

/* Append the plan as compact JSON with keys in byte order (SPEC §4):
 * {"destinations":[D_f],"groups":[{"consumers","destinations","horizon",
 * "view"}…]}. */
void gl_plan_dump(struct gl_buf *b, const struct gl_plan *plan, const struct gl_call *c);

void gl_plan_free(struct gl_plan *plan);

#endif
