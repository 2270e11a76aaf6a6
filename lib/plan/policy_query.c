/* policy_query.c — the questions the deployer's policy answers once loaded
 * (policy.c reads it): a name's clearance c(d) (Definition 1), a copy's
 * bounds, a host's route, the label of a file or directory item (SPEC §4,
 * docs/exec.md "Directory items"). */
#define _GNU_SOURCE
#include "plan/policy.h"
#include "plan/policy_impl.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "release/manifest.h"

static const struct gl_labels public_set = {NULL, 0};

static const struct gl_policy_clearance *clearance_of(const struct gl_policy *p,
						      const char *name)
{
	struct gl_policy_clearance key = {.name = name};
	return p->nclear ? bsearch(&key, p->clear, p->nclear, sizeof key, gl_policy_by_name)
			 : NULL;
}

/* A stream destination "host:port" without a clearance of its own has its
 * host's (docs/streams.md): the deployer clears a host, whatever port. */
const struct gl_labels *gl_policy_clearance(const struct gl_policy *p, const char *name)
{
	const struct gl_policy_clearance *c = clearance_of(p, name);
	if (!c && gl_dest_port(name)) {
		autofree char *host = gl_xstrdup(name);
		*strrchr(host, ':') = '\0';
		c = clearance_of(p, host);
	}
	return c ? &c->tags : &public_set;
}

const struct gl_limits *gl_policy_limits(const struct gl_policy *p, const char *name)
{
	return gl_limits_for(&p->limits, name);
}

static int config_by_release(const void *a, const void *b)
{
	return strcmp(((const struct gl_config *)a)->release, ((const struct gl_config *)b)->release);
}

const struct gl_config *gl_policy_config(const struct gl_policy *p, const char *name)
{
	struct gl_config key = {.release = (char *)name};
	return p->nconfig && name ? bsearch(&key, p->config, p->nconfig, sizeof key,
					    config_by_release)
				  : NULL;
}

const char *gl_policy_route(const struct gl_policy *p, const char *host)
{
	struct gl_policy_route key = {.host = host};
	const struct gl_policy_route *r =
	    p->nroute ? bsearch(&key, p->route, p->nroute, sizeof key, gl_policy_by_host) : NULL;
	return r ? r->addr : NULL;
}

/* Component-wise matching by dynamic programming over (glob component i,
 * path component j), one row at a time: no backtracking blow-up whatever
 * the number of "**" components. */
bool gl_glob_match(const struct gl_policy_glob *g, const char *path)
{
	size_t plen = strlen(path);
	if (plen < 2 || path[0] != '/')
		return false;
	autofree char *buf = gl_xstrdup(path + 1);
	size_t n = 1;
	for (char *c = buf; *c; c++)
		n += *c == '/';
	autofree char **comp = gl_xcalloc(n, sizeof *comp);
	size_t j = 0;
	for (char *c = buf, *s; c; c = s) {
		s = strchr(c, '/');
		if (s)
			*s++ = 0;
		comp[j++] = c;
	}
	/* next[j]: glob components i+1.. match path components j.. */
	autofree bool *next = gl_xcalloc(n + 1, sizeof *next);
	autofree bool *cur = gl_xcalloc(n + 1, sizeof *cur);
	next[n] = true;
	for (size_t i = g->ncomp; i-- > 0;) {
		const char *pc = g->comp[i];
		bool star2 = strcmp(pc, "**") == 0;
		cur[n] = star2 && next[n];
		for (size_t k = n; k-- > 0;)
			cur[k] = star2 ? next[k] || cur[k + 1]
				       : next[k + 1] && fnmatch(pc, comp[k], 0) == 0;
		bool *t = next;
		next = cur;
		cur = t;
	}
	return next[0];
}

const struct gl_labels *gl_policy_label_for(const struct gl_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nglob; i++)
		if (gl_glob_match(&p->glob[i], path))
			return &p->glob[i].tags;
	return NULL;
}

/* ---- directory items (docs/exec.md "Directory items") -------------------
 *
 * A directory D stands for the set S(D) = {D} ∪ {D/x1/…/xm : m ≥ 1}, each
 * xi any name a file system can hold (non-empty, no '/' or NUL, not "." or
 * ".."). The matcher of gl_glob_match is run forward over D's own
 * components (exactly, with fnmatch); what follows D is reasoned about per
 * glob component, abstracting every name to "some name":
 *   "**"                   any number of names           (STAR2)
 *   '*'s and at most one '?'   every name: "*", "*?*", "***" (ALL)
 *   anything else          some names, or none           (SOME)
 * may: some string of S(D) could match — over-approximated (a SOME
 *   component is assumed to match some name), so a glob that might label
 *   something beneath D is never missed.
 * all: every string of S(D) matches — under-approximated (a SOME component
 *   is assumed to match no name), so it is never claimed wrongly. */

enum comp_kind { COMP_STAR2, COMP_ALL, COMP_SOME };

static enum comp_kind comp_kind(const char *c)
{
	if (!strcmp(c, "**"))
		return COMP_STAR2;
	int q = 0, star = 0;
	for (const char *s = c; *s; s++) {
		if (*s == '?')
			q++;
		else if (*s == '*')
			star++;
		else
			return COMP_SOME;
	}
	/* "*", "*?": every name (names are non-empty); "?" or "??": only
	 * names of one or two bytes */
	return star && q <= 1 ? COMP_ALL : COMP_SOME;
}

static void under(const struct gl_policy_glob *g, const char *dir, bool *may, bool *all)
{
	*may = *all = false;
	size_t n = g->ncomp;
	if (strlen(dir) < 2 || dir[0] != '/')
		return;
	/* st[i]: glob components 0..i-1 match the components of dir read so far */
	autofree bool *st = gl_xcalloc(n + 1, sizeof *st);
	autofree bool *nx = gl_xcalloc(n + 1, sizeof *nx);
	st[0] = true;
	for (size_t i = 0; i < n; i++) /* "**" may match zero components */
		if (st[i] && !strcmp(g->comp[i], "**"))
			st[i + 1] = true;
	autofree char *buf = gl_xstrdup(dir + 1);
	for (char *c = buf, *s; c; c = s) {
		s = strchr(c, '/');
		if (s)
			*s++ = 0;
		memset(nx, 0, (n + 1) * sizeof *nx);
		bool any = false;
		for (size_t i = 0; i < n; i++) {
			if (!st[i])
				continue;
			if (!strcmp(g->comp[i], "**"))
				nx[i] = true; /* "**" takes this component and stays */
			else if (fnmatch(g->comp[i], c, 0) == 0)
				nx[i + 1] = true;
		}
		for (size_t i = 0; i < n; i++)
			if (nx[i] && !strcmp(g->comp[i], "**"))
				nx[i + 1] = true;
		for (size_t i = 0; i <= n; i++)
			any = any || nx[i];
		memcpy(st, nx, (n + 1) * sizeof *st);
		if (!any)
			return; /* no state left: nothing under dir can match */
	}
	*may = true; /* st[n]: dir itself; st[i<n]: a path beneath it could */
	/* all: for every m >= 0, some state i whose remaining components are
	 * STAR2/ALL only accepts every sequence of m names: exactly `ones`
	 * names without a "**", at least `ones` with one. */
	size_t minstar = SIZE_MAX;
	autofree bool *exact = gl_xcalloc(n + 1, sizeof *exact);
	for (size_t i = 0; i <= n; i++) {
		if (!st[i])
			continue;
		size_t ones = 0;
		bool star = false, usable = true;
		for (size_t j = i; j < n && usable; j++) {
			enum comp_kind k = comp_kind(g->comp[j]);
			star = star || k == COMP_STAR2;
			ones += k == COMP_ALL;
			usable = k != COMP_SOME;
		}
		if (!usable)
			continue;
		if (star && ones < minstar)
			minstar = ones;
		else if (!star)
			exact[ones] = true;
	}
	if (minstar == SIZE_MAX)
		return; /* finitely many lengths: some deeper path is unmatched */
	for (size_t m = 0; m < minstar; m++)
		if (!exact[m])
			return;
	*all = true;
}

bool gl_glob_may_match_under(const struct gl_policy_glob *g, const char *dir)
{
	bool may, all;
	under(g, dir, &may, &all);
	return may;
}

bool gl_glob_matches_all_under(const struct gl_policy_glob *g, const char *dir)
{
	bool may, all;
	under(g, dir, &may, &all);
	return all;
}

int gl_policy_label_for_dir(const struct gl_policy *p, const char *dir, struct gl_labels *out)
{
	struct gl_labels acc = {0};
	for (size_t i = 0; i < p->nglob; i++) {
		bool may, all;
		under(&p->glob[i], dir, &may, &all);
		if (may) {
			struct gl_labels u = {0};
			gl_labels_union(&u, &acc, &p->glob[i].tags);
			gl_labels_free(&acc);
			acc = u;
		}
		if (all) {
			*out = acc; /* later globs can never apply beneath dir */
			return 0;
		}
	}
	gl_labels_free(&acc);
	*out = (struct gl_labels){0};
	return -1;
}
