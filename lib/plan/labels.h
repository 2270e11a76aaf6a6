/* labels.h — tag sets: labels of items, clearances of destinations and
 * consumers, horizons of copies (paper Definition 1; SPEC §2).
 *
 * A tag set is a sorted array of distinct tag strings (byte order, strcmp).
 * On the wire it is a JSON array of strings; duplicates there mean nothing
 * (a set) and are dropped; output is always sorted and unique. [] is public.
 *
 * The struct owns only its pointer array: each tag points into a string kept
 * alive by someone else — the jv it was read from, or the policy — so set
 * operations never copy bytes. A set must not outlive the strings it names. */
#ifndef GL_LABELS_H
#define GL_LABELS_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"

/* Bounds on what a label or clearance may hold (docs/formats.md). */
#define GL_TAGS_MAX 64     /* tags in one label or clearance */
#define GL_TAG_MAX 128     /* bytes in one tag */

struct gl_labels {
	const char **tag; /* sorted, unique; borrowed strings */
	size_t n;
};

/* Is s (len bytes) a well-formed tag: 1..GL_TAG_MAX bytes, no control
 * characters? (The JSON reader already guarantees valid UTF-8.) */
bool gl_tag_ok(const char *s, size_t len);

/* Read a tag set from a JSON array of tag strings. Borrows a; the tags
 * point into a's strings, so a must outlive *out. 0, or -1 with f
 * (bad_label) naming the offending element. *out is empty on failure. */
int gl_labels_from_jv(struct gl_labels *out, jv a, struct gl_fail *f);

/* The set as a JSON array of strings (owned). */
jv gl_labels_to_jv(const struct gl_labels *l);

/* out = a ∪ b (the join ⊔ of Definition 1), out = a ∩ b. out must be
 * empty or freed beforehand; it may not alias a or b. */
void gl_labels_union(struct gl_labels *out, const struct gl_labels *a, const struct gl_labels *b);
void gl_labels_intersect(struct gl_labels *out, const struct gl_labels *a,
			 const struct gl_labels *b);
void gl_labels_copy(struct gl_labels *out, const struct gl_labels *a);
/* L = L ∪ add, in place. */
void gl_labels_join(struct gl_labels *L, const struct gl_labels *add);

/* a ⊆ b: "x may flow to d iff ℓ(x) ⊆ c(d)" (Definition 1). */
bool gl_labels_subset(const struct gl_labels *a, const struct gl_labels *b);
bool gl_labels_equal(const struct gl_labels *a, const struct gl_labels *b);
/* A total order: lexicographic over the sorted tags (a prefix first). */
int gl_labels_cmp(const struct gl_labels *a, const struct gl_labels *b);

void gl_labels_free(struct gl_labels *l);

#endif
