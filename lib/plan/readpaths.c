/* readpaths.c — the deployer grants read_paths; see readpaths.h. */
#define _GNU_SOURCE
#include "plan/readpaths.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json/json.h"
#include "release/manifest.h"
#include "core/util.h"

/* Is p equal to or beneath dir (both clean absolute paths)? */
static bool under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1) /* "/" */
		return true;
	return !strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/');
}

/* gl_path_resolve: see readpaths.h. */
char *gl_path_resolve(const char *p)
{
	char real[PATH_MAX];
	autofree char *head = gl_xstrdup(p);
	for (;;) {
		if (realpath(head, real)) {
			if (!strcmp(head, "/"))
				return gl_xstrdup(p); /* nothing of p below "/" is there */
			const char *rest = p + strlen(head); /* "" or "/…" */
			if (!strcmp(real, "/") && *rest)
				return gl_xstrdup(rest);
			return gl_xasprintf("%s%s", real, rest);
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return NULL;
		char *slash = strrchr(head, '/');
		if (!slash)
			return NULL;
		if (slash == head) {
			if (!head[1])
				return NULL;
			head[1] = 0;
		} else {
			*slash = 0;
		}
	}
}

const char *gl_host_state_rule(const struct gl_state_roots *roots, const char *x)
{
	if (!strcmp(x, "/"))
		return "root (every host path)";
	if (under(x, "/proc") || under(x, "/sys"))
		return "proc_sys (under /proc or /sys)";
	/* devices (a raw disk holds every file) and the host's runtime
	 * directories (secrets, sockets, other users' sessions) */
	if (under(x, "/dev") || under(x, "/run") || under(x, "/var/run"))
		return "host_runtime (under /dev, /run or /var/run)";
	for (size_t i = 0; roots && i < roots->n; i++)
		if (under(x, roots->p[i]) || under(roots->p[i], x))
			return "gl_home (GL_HOME or another path of the host's state, beneath "
			       "it or an ancestor of it)";
	return NULL;
}

void gl_state_roots_init(struct gl_state_roots *roots, const char *const *state)
{
	memset(roots, 0, sizeof *roots);
	char cwd[PATH_MAX];
	for (size_t i = 0; state && state[i] && i < GL_READPATHS_STATE_MAX; i++) {
		/* a relative --damp, --receipts…: from the working directory */
		roots->p[roots->n] = state[i][0] == '/' || !getcwd(cwd, sizeof cwd)
					 ? gl_xstrdup(state[i])
					 : gl_xasprintf("%s/%s", cwd, state[i]);
		char *real = gl_path_resolve(roots->p[roots->n++]);
		if (real)
			roots->p[roots->n++] = real;
	}
}

void gl_state_roots_free(struct gl_state_roots *roots)
{
	for (size_t i = 0; i < roots->n; i++)
		free(roots->p[i]);
	roots->n = 0;
}

/* The labels rule of policy p for x, or NULL; *glob names the glob. */
static const char *labelled(const struct gl_policy *p, const char *x, const char **glob)
{
	autofree char *pre = gl_xstrdup(x);
	for (size_t i = 0; p && i < p->nglob; i++) {
		*glob = p->glob[i].glob;
		if (gl_glob_may_match_under(&p->glob[i], x))
			return "labelled (a labels glob matches it or a path beneath it)";
		/* beneath a labelled path: a proper prefix of x that matches */
		strcpy(pre, x);
		for (char *s = strrchr(pre, '/'); s && s != pre; s = strrchr(pre, '/')) {
			*s = 0;
			if (gl_glob_match(&p->glob[i], pre))
				return "labelled (beneath a path a labels glob matches)";
		}
	}
	*glob = NULL;
	return NULL;
}

/* The first deny rule path x breaks, or NULL. *glob names the labels glob
 * of a "labelled" rule. pol[0] is the policy, pol[1] its globs resolved. */
static const char *denied(const struct gl_policy *const pol[2], const struct gl_state_roots *roots,
			  const char *x, const char **glob)
{
	*glob = NULL;
	const char *rule = gl_host_state_rule(roots, x);
	if (rule)
		return rule;
	rule = labelled(pol[0], x, glob);
	return rule ? rule : labelled(pol[1], x, glob);
}

static bool granted(const struct gl_policy *const pol[2], const char *x)
{
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; pol[k] && i < pol[k]->nrpath; i++)
			if (gl_glob_match(&pol[k]->rpath[i], x))
				return true;
	return false;
}

/* Glob g with its literal head (the components before the first one
 * holding '*', '?' or '[') resolved, or NULL when that changes nothing.
 * strict: also NULL when the resolved head holds a pattern character
 * (it would widen a grant). */
static char *resolve_glob(const char *g, bool strict)
{
	size_t head = strcspn(g, "*?[");
	while (head > 0 && g[head] && g[head] != '/')
		head--;
	if (head == 0)
		return NULL; /* the first component is a pattern already */
	autofree char *lit = strndup(g, head);
	if (!lit)
		gl_die(GL_EXIT_USAGE, "out of memory");
	autofree char *real = gl_path_resolve(lit);
	if (!real || !strcmp(real, lit) || (strict && strpbrk(real, "*?[")) ||
	    (!strcmp(real, "/") && !g[head]))
		return NULL; /* "/" itself: the root rule refuses it anyway */
	return gl_xasprintf("%s%s", strcmp(real, "/") ? real : "", g + head);
}

/* The policy's labels and read_paths globs whose literal heads lead
 * through a symlink, resolved (a labelled /data/hr/GLOB where /data links
 * to /mnt/data also labels /mnt/data/hr/...), as policy *alt. */
static int resolved_policy(const struct gl_policy *pol, struct gl_policy *alt, struct gl_fail *f)
{
	jv labels = jv_object(), rps = jv_array();
	for (size_t i = 0; i < pol->nglob; i++) {
		autofree char *r = resolve_glob(pol->glob[i].glob, false);
		if (r)
			labels = jv_object_set(labels, jv_string(r), jv_array());
	}
	for (size_t i = 0; i < pol->nrpath; i++) {
		autofree char *r = resolve_glob(pol->rpath[i].glob, true);
		if (r)
			rps = jv_array_append(rps, jv_string(r));
	}
	jv doc = JV_OBJECT(jv_string("clearances"), jv_object(), jv_string("labels"), labels,
			   jv_string("read_paths"), rps);
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, doc);
	jv_free(doc);
	autofail struct gl_fail pf = {0};
	/* a resolved glob over the bounds: fail closed */
	if (gl_policy_parse(alt, b.data, b.len, &pf) < 0)
		return gl_fail(f, GL_E_READ_PATHS, "the policy's globs, resolved, are not usable: %s",
			       gl_fail_detail(&pf));
	return 0;
}

static char *show(const char *s)
{
	size_t n = strlen(s);
	autofree char *t = gl_sanitize(s, n > 512 ? 512 : n);
	return gl_xasprintf("\"%s\"%s", t, n > 512 ? "…" : "");
}

/* One entry: 0, or -1 with *f. */
static int check_one(const struct gl_policy *const pol[2], const struct gl_state_roots *homes,
		     const char *p, int idx, struct gl_fail *f)
{
	autofree char *real = gl_path_resolve(p);
	autofree char *qp = show(p);
	autofree char *qr = real && strcmp(real, p) ? show(real) : NULL;
	autofree char *via = qr ? gl_xasprintf(" (resolves to %s)", qr) : gl_xstrdup("");
	const char *xs[] = {p, real};
	for (size_t k = 0; k < 2; k++) {
		if (!xs[k])
			continue;
		const char *glob = NULL;
		const char *rule = denied(pol, homes, xs[k], &glob);
		if (rule) {
			autofree char *qg = glob ? show(glob) : NULL;
			return gl_fail(f, GL_E_READ_PATHS, "manifest read_paths[%d] %s%s: refused: %s%s%s",
				       idx, qp, via, rule, qg ? " " : "", qg ? qg : "");
		}
		if (!granted(pol, xs[k]))
			return gl_fail(f, GL_E_READ_PATHS,
				       "manifest read_paths[%d] %s%s: refused: not_granted (no glob "
				       "of the policy's read_paths matches %s)",
				       idx, qp, via, k ? "the resolved path" : "it");
	}
	return 0;
}

int gl_readpaths_check(const struct gl_policy *pol, const char *const *state, jv manifest,
		       struct gl_fail *f)
{
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_READPATHS_OFF");
	if (off && !strcmp(off, "1"))
		return 0; /* test build only: the release's read_paths as it asks */
#endif
	jv rp = gl_json_get(manifest, "read_paths");
	if (!jv_is_valid(rp) || jv_get_kind(rp) == JV_KIND_NULL) {
		jv_free(rp);
		return 0;
	}
	if (jv_get_kind(rp) != JV_KIND_ARRAY) {
		jv_free(rp);
		return gl_fail(f, GL_E_READ_PATHS, "manifest read_paths: not an array");
	}
	/* the host's state, as given and resolved */
	struct gl_state_roots homes;
	gl_state_roots_init(&homes, state);
	struct gl_policy alt = {.doc = jv_null()};
	int rc = pol ? resolved_policy(pol, &alt, f) : 0;
	const struct gl_policy *const pols[2] = {pol, pol ? &alt : NULL};
	jv_array_foreach(rp, i, v)
	{
		if (rc == 0 && (jv_get_kind(v) != JV_KIND_STRING ||
				!gl_path_clean(jv_string_value(v),
					       (size_t)jv_string_length_bytes(jv_copy(v)))))
			rc = gl_fail(f, GL_E_READ_PATHS, "manifest read_paths[%d]: not a clean absolute path",
				     i);
		else if (rc == 0)
			rc = check_one(pols, &homes, jv_string_value(v), i, f);
		jv_free(v);
	}
	jv_free(rp);
	gl_state_roots_free(&homes);
	gl_policy_free(&alt);
	return rc;
}
