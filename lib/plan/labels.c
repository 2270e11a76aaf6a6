/* labels.c — tag sets; see labels.h. */
#define _GNU_SOURCE
#include "plan/labels.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static const char *kind_name(jv_kind k)
{
	switch (k) {
	case JV_KIND_NULL: return "null";
	case JV_KIND_TRUE:
	case JV_KIND_FALSE: return "a boolean";
	case JV_KIND_NUMBER: return "a number";
	case JV_KIND_STRING: return "a string";
	case JV_KIND_ARRAY: return "an array";
	case JV_KIND_OBJECT: return "an object";
	default: return "invalid";
	}
}

bool gl_tag_ok(const char *s, size_t len)
{
	if (len == 0 || len > GL_TAG_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int gl_labels_from_jv(struct gl_labels *out, jv a, struct gl_fail *f)
{
	out->tag = NULL;
	out->n = 0;
	if (jv_get_kind(a) != JV_KIND_ARRAY)
		return gl_fail(f, GL_E_BAD_LABEL, "is %s, not an array of tag strings",
			       kind_name(jv_get_kind(a)));
	int n = jv_array_length(jv_copy(a));
	if (n > GL_TAGS_MAX)
		return gl_fail(f, GL_E_BAD_LABEL, "has %d tags (at most %d)", n, GL_TAGS_MAX);
	const char **tag = gl_xcalloc((size_t)n, sizeof *tag);
	for (int i = 0; i < n; i++) {
		jv e = jv_array_get(jv_copy(a), i);
		jv_kind k = jv_get_kind(e);
		if (k != JV_KIND_STRING) {
			jv_free(e);
			free(tag);
			return gl_fail(f, GL_E_BAD_LABEL, "element %d is %s, not a tag string", i,
				       kind_name(k));
		}
		/* a still holds e, so the bytes outlive this reference. */
		tag[i] = jv_string_value(e);
		size_t len = (size_t)jv_string_length_bytes(jv_copy(e));
		jv_free(e);
		if (!gl_tag_ok(tag[i], len)) {
			free(tag);
			return gl_fail(f, GL_E_BAD_LABEL,
				       "tag %d is empty, longer than %d bytes or holds a "
				       "control character",
				       i, GL_TAG_MAX);
		}
	}
	qsort(tag, (size_t)n, sizeof *tag, str_cmp);
	size_t m = 0;
	for (int i = 0; i < n; i++)
		if (m == 0 || strcmp(tag[m - 1], tag[i]) != 0)
			tag[m++] = tag[i];
	out->tag = tag;
	out->n = m;
	return 0;
}

jv gl_labels_to_jv(const struct gl_labels *l)
{
	jv a = jv_array_sized((int)l->n);
	for (size_t i = 0; i < l->n; i++)
		a = jv_array_append(a, jv_string(l->tag[i]));
	return a;
}

void gl_labels_union(struct gl_labels *out, const struct gl_labels *a, const struct gl_labels *b)
{
	out->tag = gl_xcalloc(a->n + b->n, sizeof *out->tag);
	size_t i = 0, j = 0, m = 0;
	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->tag[i], b->tag[j]);
		if (c <= 0)
			out->tag[m++] = a->tag[i++];
		else
			out->tag[m++] = b->tag[j++];
		if (c == 0)
			j++;
	}
	out->n = m;
}

void gl_labels_join(struct gl_labels *L, const struct gl_labels *add)
{
	struct gl_labels u = {0};
	gl_labels_union(&u, L, add);
	gl_labels_free(L);
	*L = u;
}

void gl_labels_intersect(struct gl_labels *out, const struct gl_labels *a,
			 const struct gl_labels *b)
{
	out->tag = gl_xcalloc(a->n < b->n ? a->n : b->n, sizeof *out->tag);
	size_t i = 0, j = 0, m = 0;
	while (i < a->n && j < b->n) {
		int c = strcmp(a->tag[i], b->tag[j]);
		if (c == 0)
			out->tag[m++] = a->tag[i];
		i += c <= 0;
		j += c >= 0;
	}
	out->n = m;
}

void gl_labels_copy(struct gl_labels *out, const struct gl_labels *a)
{
	out->tag = gl_xcalloc(a->n, sizeof *out->tag);
	if (a->n)
		memcpy(out->tag, a->tag, a->n * sizeof *a->tag);
	out->n = a->n;
}

bool gl_labels_subset(const struct gl_labels *a, const struct gl_labels *b)
{
	if (a->n > b->n)
		return false;
	size_t j = 0;
	for (size_t i = 0; i < a->n; i++) {
		int c = 1;
		while (j < b->n && (c = strcmp(b->tag[j], a->tag[i])) < 0)
			j++;
		if (c != 0)
			return false;
		j++;
	}
	return true;
}

bool gl_labels_equal(const struct gl_labels *a, const struct gl_labels *b)
{
	return gl_labels_cmp(a, b) == 0;
}

int gl_labels_cmp(const struct gl_labels *a, const struct gl_labels *b)
{
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		int c = strcmp(a->tag[i], b->tag[i]);
		if (c)
			return c < 0 ? -1 : 1;
	}
	return a->n < b->n ? -1 : a->n > b->n;
}

void gl_labels_free(struct gl_labels *l)
{
	free(l->tag);
	l->tag = NULL;
	l->n = 0;
}
