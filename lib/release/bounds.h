/* bounds.h — the deployer's per-copy resource bounds (SPEC §4 "limits";
 * issue 15; docs/formats.md "limits").
 *
 *   "limits":{"memory_mb":512,"pids":64,"tmp_mb":64,"cpu_s":30,"workspace_mb":256,
 *             "releases":{"docs":{"memory_mb":1024}}}
 *
 * Every field is optional; an absent one is the SPEC's default. "releases"
 * maps a release name (manifest "name") to the fields that differ for it;
 * the rest come from the global fields. A copy of the release is bounded by
 * the result; the copy that reaches a bound is killed and its consumers get
 * "memory", "pids", "cpu" or "disk" (SPEC §6). The policy is the deployer's,
 * never the release's (paper §III-A), so a release cannot raise its own. */
#ifndef GL_BOUNDS_H
#define GL_BOUNDS_H

#include <jv.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fail.h"

#define GL_LIMITS_RELEASES_MAX 4096

struct gl_limits {
	uint32_t memory_mb;    /* resident memory of the copy and its descendants */
	uint32_t pids;         /* tasks of the copy and its descendants */
	uint32_t tmp_mb;       /* its private scratch /tmp */
	uint32_t cpu_s;        /* CPU time, seconds */
	uint32_t workspace_mb; /* an exec copy's workspace (/run/germline/state) */
};

/* The SPEC §4 defaults. */
#define GL_LIMITS_DEFAULT ((struct gl_limits){512, 64, 64, 30, 256})

struct gl_limits_release {
	const char *name; /* points into the policy document */
	struct gl_limits lim;
};

struct gl_limits_table {
	struct gl_limits global;
	struct gl_limits_release *rel; /* sorted by name (owned) */
	size_t nrel;
};

/* Parse the policy's "limits" value (borrowed; jv_invalid() when absent:
 * the defaults). 0, or -1 with f (usage) naming the field, e.g.
 * "limits.releases.docs.pids: 0 (at least 1)". t borrows strings of v, which
 * must outlive it. */
int gl_limits_parse(jv v, struct gl_limits_table *t, struct gl_fail *f);

void gl_limits_free(struct gl_limits_table *t);

/* l as {"cpu_s","memory_mb","pids","tmp_mb","workspace_mb"} (owned): what
 * a witness records of the bounds its copies ran under. */
jv gl_limits_json(const struct gl_limits *l);
/* Read such an object (borrowed): exactly those five fields, each in its
 * range. 0, or -1 with f (usage) naming the field under where. */
int gl_limits_read(jv o, struct gl_limits *l, const char *where, struct gl_fail *f);
/* Each bound of l at most max's. */
void gl_limits_cap(struct gl_limits *l, const struct gl_limits *max);

/* The bounds of a copy of the release named name (NULL: the global ones). */
const struct gl_limits *gl_limits_for(const struct gl_limits_table *t, const char *name);

#endif
