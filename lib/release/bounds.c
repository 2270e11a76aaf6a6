/* bounds.c — the policy's per-copy bounds ("limits"); see bounds.h and docs/formats.md. */
#define _GNU_SOURCE
#include "release/bounds.h"

#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "release/manifest.h"
#include "core/util.h"

/* One bound: its name, where it sits in struct gl_limits, its range. The
 * lower ends keep a copy able to start at all (a Python interpreter needs
 * tens of MiB and a few tasks); the upper ends keep the arithmetic of the
 * enforcing mechanisms (bytes in 64 bits, seconds in an rlimit) exact. */
static const struct field {
	const char *key;
	size_t off;
	uint32_t lo, hi;
} fields[] = {
	{"memory_mb", offsetof(struct gl_limits, memory_mb), 32, 1u << 20},
	{"pids", offsetof(struct gl_limits, pids), 1, 1u << 16},
	{"tmp_mb", offsetof(struct gl_limits, tmp_mb), 1, 1u << 20},
	{"cpu_s", offsetof(struct gl_limits, cpu_s), 1, 7u * 86400},
	{"workspace_mb", offsetof(struct gl_limits, workspace_mb), 1, 1u << 20},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static uint32_t *slot(struct gl_limits *l, const struct field *f)
{
	return (uint32_t *)((char *)l + f->off);
}

/* The fields of object o (borrowed) over *l; "releases" allowed when
 * top. where: "limits" or "limits.releases.NAME". */
static int fields_in(jv o, struct gl_limits *l, const char *where, bool top, struct gl_fail *f)
{
	if (jv_get_kind(o) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_USAGE, "%s: not an object", where);
	int r = 0;
	jv_object_foreach(o, k, v)
	{
		const char *key = jv_string_value(k);
		const struct field *fld = NULL;
		for (size_t i = 0; i < NFIELDS; i++)
			if (strcmp(key, fields[i].key) == 0)
				fld = &fields[i];
		int64_t n;
		if (r == 0 && !fld && !(top && strcmp(key, "releases") == 0)) {
			autofree char *s = gl_quote(key, strlen(key));
			r = gl_fail(f, GL_E_USAGE,
				    "%s: unknown field %s (memory_mb, pids, tmp_mb, cpu_s, "
				    "workspace_mb%s)",
				    where, s, top ? ", releases" : "");
		} else if (r == 0 && fld) {
			if (gl_json_get_int(o, key, &n) < 0)
				r = gl_fail(f, GL_E_USAGE, "%s.%s: not an integer", where, key);
			else if (n < fld->lo || n > fld->hi)
				r = gl_fail(f, GL_E_USAGE, "%s.%s: %lld (from %u to %u)", where,
					    key, (long long)n, fld->lo, fld->hi);
			else
				*slot(l, fld) = (uint32_t)n;
		}
		jv_free(k);
		jv_free(v);
	}
	return r;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct gl_limits_release *)a)->name,
		      ((const struct gl_limits_release *)b)->name);
}

static int releases_in(jv o, struct gl_limits_table *t, struct gl_fail *f)
{
	jv rel = gl_json_get(o, "releases");
	if (!jv_is_valid(rel)) {
		jv_free(rel);
		return 0;
	}
	int r = 0;
	if (jv_get_kind(rel) != JV_KIND_OBJECT)
		r = gl_fail(f, GL_E_USAGE, "limits.releases: not an object");
	else if (jv_object_length(jv_copy(rel)) > GL_LIMITS_RELEASES_MAX)
		r = gl_fail(f, GL_E_USAGE, "limits.releases: more than %d names",
			    GL_LIMITS_RELEASES_MAX);
	else
		t->rel = gl_xcalloc((size_t)jv_object_length(jv_copy(rel)) + 1, sizeof *t->rel);
	if (r == 0) {
		jv_object_foreach(rel, k, v)
		{
			if (r == 0) {
				const char *name = jv_string_value(k);
				autofree char *where = NULL;
				autofree char *s = gl_quote(name, strlen(name));
				where = gl_xasprintf("limits.releases.%s", s);
				struct gl_limits_release *e = &t->rel[t->nrel];
				e->lim = t->global;
				r = fields_in(v, &e->lim, where, false, f);
				/* the key's string lives in the policy document (borrowed) */
				e->name = jv_string_value(k);
				t->nrel++;
			}
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(rel);
	if (r == 0 && t->nrel)
		qsort(t->rel, t->nrel, sizeof *t->rel, by_name);
	return r;
}

int gl_limits_parse(jv v, struct gl_limits_table *t, struct gl_fail *f)
{
	memset(t, 0, sizeof *t);
	t->global = GL_LIMITS_DEFAULT;
	if (!jv_is_valid(v))
		return 0;
	if (fields_in(v, &t->global, "limits", true, f) < 0 || releases_in(v, t, f) < 0) {
		gl_limits_free(t);
		return -1;
	}
	return 0;
}

void gl_limits_free(struct gl_limits_table *t)
{
	free(t->rel);
	t->rel = NULL;
	t->nrel = 0;
}

const struct gl_limits *gl_limits_for(const struct gl_limits_table *t, const char *name)
{
	static const struct gl_limits dflt = GL_LIMITS_DEFAULT;
	if (t->global.memory_mb == 0) /* a table never parsed (a zeroed policy) */
		return &dflt;
	if (name && t->nrel) {
		struct gl_limits_release key = {.name = name};
		const struct gl_limits_release *e =
			bsearch(&key, t->rel, t->nrel, sizeof *t->rel, by_name);
		if (e)
			return &e->lim;
	}
	return &t->global;
}

jv gl_limits_json(const struct gl_limits *l)
{
	jv o = jv_object();
	for (size_t i = 0; i < NFIELDS; i++)
		o = jv_object_set(o, jv_string(fields[i].key),
				  jv_number(*slot((struct gl_limits *)l, &fields[i])));
	return o;
}

int gl_limits_read(jv o, struct gl_limits *l, const char *where, struct gl_fail *f)
{
	struct gl_limits got = {0};
	if (fields_in(o, &got, where, false, f) < 0)
		return -1;
	for (size_t i = 0; i < NFIELDS; i++)
		if (*slot(&got, &fields[i]) == 0)
			return gl_fail(f, GL_E_USAGE, "%s.%s: missing", where, fields[i].key);
	*l = got;
	return 0;
}

void gl_limits_cap(struct gl_limits *l, const struct gl_limits *max)
{
	for (size_t i = 0; i < NFIELDS; i++) {
		uint32_t *v = slot(l, &fields[i]);
		uint32_t m = *slot((struct gl_limits *)max, &fields[i]);
		if (*v > m)
			*v = m;
	}
}
