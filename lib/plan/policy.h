/* policy.h — the deployer's policy (SPEC §4, §11; paper §III-A: "labels and
 * clearances come from the deployer's policy, not from the release").
 *
 *   {"clearances":{"ocr.example":["finance"],"agent":["finance","hr"]},
 *    "routes":{"ocr.example":"127.0.0.1:18080"},
 *    "labels":{"/data/hr/GLOB":["hr"]},
 *    "read_paths":["/usr/share/dict","/opt/models/GLOB"]}
 *
 * clearances: name → tags, the c(d) of Definition 1; a name without an entry
 *   is public ([]). routes (optional): destination host → "addr:port", where
 *   the broker connects (the host compared stays the tool's). labels
 *   (optional): absolute glob → tags for files named by items_from_args,
 *   first match in document order wins; no match is a refusal. Directories
 *   named by dirs_from_args: gl_policy_label_for_dir. read_paths (optional,
 *   default none): absolute globs (the labels syntax) bounding what a
 *   manifest's read_paths may name; the rule is lib/plan/readpaths.h. limits
 *   (optional): per-copy resource bounds, lib/release/bounds.h.
 *   concurrency (optional, default "any"): which calls gl-run --jobs runs
 *   at the same time (enum gl_concurrency below).
 * Every field is validated when the file is loaded; docs/formats.md lists
 * the rules. */
#ifndef GL_POLICY_H
#define GL_POLICY_H

#include <jv.h>
#include <stddef.h>

#include "plan/labels.h"
#include "release/bounds.h"
#include "release/config.h"

#define GL_POLICY_MAX (4u << 20) /* bytes of a policy file */
#define GL_POLICY_NAMES_MAX 65536
#define GL_POLICY_GLOBS_MAX 4096
#define GL_POLICY_READ_PATHS_MAX 256 /* globs of read_paths */
#define GL_NAME_MAX 253 /* a destination or consumer name */
#define GL_POLICY_CA_MAX (1u << 20) /* bytes of a ca_file */

struct gl_policy_clearance {
	const char *name;
	struct gl_labels tags;
};

struct gl_policy_route {
	const char *host;
	const char *addr; /* "addr:port" as written */
};

struct gl_policy_glob {
	const char *glob;
	char **comp; /* the glob split at '/' (owned) */
	size_t ncomp;
	struct gl_labels tags;
};

/* "concurrency": which calls gl-run --jobs N runs at the same time (issue
 * 19): any whose keys are disjoint; same-clearance: only calls whose
 * copies' horizons are all equal; none: one call at a time. */
enum gl_concurrency { GL_CONCURRENCY_ANY = 0, GL_CONCURRENCY_SAME_CLEARANCE, GL_CONCURRENCY_NONE };

struct gl_policy {
	jv doc; /* owned: every string below points into it */
	struct gl_policy_clearance *clear; /* sorted by name */
	size_t nclear;
	struct gl_policy_route *route; /* sorted by host */
	size_t nroute;
	struct gl_policy_glob *glob; /* document order */
	size_t nglob;
	struct gl_policy_glob *rpath; /* read_paths, document order (tags empty) */
	size_t nrpath;
	struct gl_limits_table limits; /* per-copy bounds (lib/release/bounds.h) */
	struct gl_config *config; /* per release name, sorted by it (lib/release/config.h) */
	size_t nconfig;
	/* "ca_file": the PEM certificates the broker trusts for upstream TLS
	 * besides the system's (read and checked at load; len 0: none) */
	struct gl_buf ca_pem;
	enum gl_concurrency concurrency; /* "concurrency" (default any) */
};

/* Parse and validate policy bytes. 0, or -1 with f (usage) naming the
 * field, e.g. "clearances.agent: element 1 is a number, not a tag string".
 * On failure *p is left empty (gl_policy_free is still safe). */
int gl_policy_parse(struct gl_policy *p, const char *buf, size_t len, struct gl_fail *f);

/* Read path (at most GL_POLICY_MAX bytes) and parse it; errors name path:
 * -1 with f (io when unreadable, usage when malformed). */
int gl_policy_load(struct gl_policy *p, const char *path, struct gl_fail *f);

void gl_policy_free(struct gl_policy *p);

/* c(name): its clearance, or the empty (public) set. Never NULL; lives as
 * long as p. */
const struct gl_labels *gl_policy_clearance(const struct gl_policy *p, const char *name);

/* The bounds of a copy of the release named name (NULL: the global ones). */
const struct gl_limits *gl_policy_limits(const struct gl_policy *p, const char *name);

/* The operator's configuration of the release named name (args, env,
 * secrets; lib/release/config.h), or NULL: none. Lives as long as p. */
const struct gl_config *gl_policy_config(const struct gl_policy *p, const char *name);

/* The "addr:port" a host is routed to, or NULL. */
const char *gl_policy_route(const struct gl_policy *p, const char *host);

/* The label of file path (which must satisfy gl_path_clean): the tags of
 * the first glob that matches, or NULL when none does (refuse the file). */
const struct gl_labels *gl_policy_label_for(const struct gl_policy *p, const char *path);

/* Does the glob (as stored) match path? Exposed for tests. '*', '?' and
 * [...] match within one path component (fnmatch(3)); a component "**"
 * matches zero or more whole components. */
bool gl_glob_match(const struct gl_policy_glob *g, const char *path);

/* Directory items (dirs_from_args; docs/exec.md "Directory items"). A
 * directory dir (gl_path_clean) stands for itself and every path beneath
 * it. Its label is the join of the tags of every glob that may match dir
 * or a path beneath it, in document order, up to and including the first
 * glob that matches dir and every path beneath it (no later glob can
 * apply). 0 with *out (owned: gl_labels_free; the tags live in p), or -1
 * when no glob matches the whole subtree (a file beneath dir could be
 * unlabelled: refuse the directory). Never touches the file system. */
int gl_policy_label_for_dir(const struct gl_policy *p, const char *dir, struct gl_labels *out);

/* The two tests gl_policy_label_for_dir is built on, on gl_glob_match's
 * semantics. may: could g match dir or some path beneath it (never false
 * when one exists; may be true when none does: a component other than
 * '*'/'?' is assumed to match some name). all: does g match dir and every
 * path beneath it (never true unless so: beyond dir, only "**" and
 * components of '*' with at most one '?' count as matching every name). */
bool gl_glob_may_match_under(const struct gl_policy_glob *g, const char *dir);
bool gl_glob_matches_all_under(const struct gl_policy_glob *g, const char *dir);

#endif
