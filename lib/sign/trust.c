/* trust.c — the trust store and the root chain; see trust.h. */
#define _GNU_SOURCE
#include "sign/trust.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "core/sha.h"
#include "json/json.h"
#include "sign/repo.h"

void gl_publisher_free(struct gl_publisher *p)
{
	free(p->dir);
	p->dir = NULL;
	if (p->lock_fd >= 0)
		close(p->lock_fd); /* releases the flock */
	p->lock_fd = -1;
	gl_meta_free(&p->root);
	gl_meta_free(&p->timestamp);
	gl_meta_free(&p->snapshot);
	gl_meta_free(&p->targets);
}

static void publisher_id(const struct gl_meta *root, char id[17])
{
	unsigned char h[GL_SHA256_BYTES];
	char hex[2 * sizeof h + 1];
	gl_sha256(h, (const unsigned char *)root->signed_bytes.data,
			   root->signed_bytes.len);
	gl_hex(h, sizeof h, hex);
	memcpy(id, hex, 16);
	id[16] = 0;
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* {"root":[…],"targets":[…]} keyids of a root (owned). */
static jv role_keyids(const struct gl_meta *root)
{
	jv out = jv_object();
	static const char *const roles[] = {"root", "targets", "snapshot", "timestamp"};
	for (int i = 0; i < 4; i++) {
		jv r = gl_meta_role(root, roles[i]);
		out = jv_object_set(out, jv_string(roles[i]), gl_json_get(r, "keyids"));
		jv_free(r);
	}
	return out;
}

static jv pin_record(const char *id, const struct gl_meta *root)
{
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	o = jv_object_set(o, jv_string("publisher"), jv_string(id));
	o = jv_object_set(o, jv_string("version"), jv_number((double)root->version));
	return jv_object_set(o, jv_string("keyids"), role_keyids(root));
}

static int write_file(const char *path, const struct gl_buf *b, struct gl_fail *f)
{
	if (gl_atomic_write(path, b->data, b->len, 0644) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno)), -1;
	return 0;
}

/* The publisher directory whose stored root.json is byte-identical to raw,
 * or NULL. Owned. */
static char *find_same_root(const char *trust, const struct gl_buf *raw)
{
	autofree struct dirent **names = NULL;
	int n = scandir(trust, &names, NULL, alphasort);
	char *found = NULL;
	for (int i = 0; i < n; i++) {
		autofree char *path = gl_xasprintf("%s/%s/root.json", trust, names[i]->d_name);
		autofree char *buf = NULL;
		size_t len;
		if (!found && names[i]->d_name[0] != '.' &&
		    gl_read_file_capped(path, GL_TUF_META_MAX, &buf, &len) == 0 &&
		    len == raw->len && memcmp(buf, raw->data, len) == 0)
			found = gl_xstrdup(names[i]->d_name);
		free(names[i]);
	}
	return found;
}

/* Fetch and parse repo/rel as type t (capped per role). */
static enum gl_code get_meta(struct gl_meta *m, const char *repo, const char *rel,
				enum gl_meta_type t, int *missing, struct gl_fail *f)
{
	autobuf struct gl_buf b = {0};
	*m = (struct gl_meta){.doc = jv_invalid(), .sig = jv_invalid()};
	if (gl_repo_get(repo, rel, gl_tuf_cap(t), &b, missing, f))
		return f->code;
	if (missing && *missing)
		return GL_E_OK;
	autofree char *name = gl_repo_name(repo, rel);
	return gl_meta_parse(m, name, b.data ? b.data : "", b.len, t, f);
}

enum gl_code gl_trust_pin(const char *home, const char *root_arg, int64_t now, jv *out,
			     struct gl_fail *f)
{
	autometa struct gl_meta root = {0};
	enum gl_code r;
	if (is_dir(root_arg) || gl_repo_is_url(root_arg))
		r = get_meta(&root, root_arg, "root.json", GL_META_ROOT, NULL, f);
	else
		r = get_meta(&root, NULL, root_arg, GL_META_ROOT, NULL, f);
	if (r || gl_meta_verify(&root, &root, "root", NULL, f) || gl_meta_check_expiry(&root, now, f))
		return f->code;
	autofree char *trust = gl_xasprintf("%s/trust", home);
	if (gl_mkdir_p(trust, 0755) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", trust, strerror(errno));
	char id[17];
	publisher_id(&root, id);
	autofree char *same = find_same_root(trust, &root.raw);
	if (same && strlen(same) == 16)
		memcpy(id, same, 17);
	autofree char *dir = gl_xasprintf("%s/%s", trust, id);
	autofree char *rpath = gl_xasprintf("%s/root.json", dir);
	if (is_dir(dir)) {
		/* Already pinned (perhaps advanced since): keep what is trusted. */
		autometa struct gl_meta cur = {0};
		autofail struct gl_fail cf = {0};
		if (gl_meta_load(&cur, rpath, GL_META_ROOT, &cf) == GL_E_OK) {
			*out = pin_record(id, &cur);
			return GL_E_OK;
		}
		gl_warn("%s: %s; pinning it again", rpath, cf.detail);
	}
	if (gl_mkdir_p(dir, 0755) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", dir, strerror(errno));
	if (write_file(rpath, &root.raw, f) < 0)
		return f->code;
	*out = pin_record(id, &root);
	return GL_E_OK;
}

/* Does repo hold p's trusted root byte-identical as <version>.root.json?
 * A transport failure (not a missing file) is kept in *err. */
static int repo_holds(const char *repo, const struct gl_meta *root, struct gl_fail *err)
{
	autofree char *rel = gl_xasprintf("%lld.root.json", (long long)root->version);
	autobuf struct gl_buf b = {0};
	autofail struct gl_fail f = {0};
	int missing;
	enum gl_code r = gl_repo_get(repo, rel, GL_TUF_META_MAX, &b, &missing, &f);
	if (r == GL_E_FETCH || (r == GL_E_LENGTH && gl_repo_is_url(repo)))
		gl_fail_set(err, r, "%s", f.detail);
	return r == GL_E_OK && !missing && b.len == root->raw.len &&
	       memcmp(b.data, root->raw.data, b.len) == 0;
}

/* The trusted timestamp, snapshot and targets of p, each verified against
 * the trusted root; one that no longer verifies (its role's keys rotated
 * while the host was away and it was not yet dropped) is ignored. */
static void load_trusted(struct gl_publisher *p)
{
	static const enum gl_meta_type types[] = {GL_META_TIMESTAMP, GL_META_SNAPSHOT,
						  GL_META_TARGETS};
	struct gl_meta *dst[] = {&p->timestamp, &p->snapshot, &p->targets};
	for (int i = 0; i < 3; i++) {
		const char *role = gl_meta_type_name(types[i]);
		autofree char *path = gl_xasprintf("%s/%s.json", p->dir, role);
		autofail struct gl_fail f = {0};
		if (access(path, F_OK) < 0)
			continue;
		if (gl_meta_load(dst[i], path, types[i], &f) == GL_E_OK &&
		    gl_meta_verify(dst[i], &p->root, role, NULL, &f) == GL_E_OK)
			continue;
		gl_warn("%s: %s; not trusted any more", path, f.detail);
		gl_meta_free(dst[i]);
	}
}

/* Lock publisher dir `name` and load its trusted root into p. 0 or -1. */
static int open_publisher(const char *trust, const char *name, struct gl_publisher *p)
{
	if (strlen(name) != 16 || strspn(name, "0123456789abcdef") != 16)
		return -1;
	p->dir = gl_xasprintf("%s/%s", trust, name);
	p->lock_fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->lock_fd < 0 || flock(p->lock_fd, LOCK_EX) < 0)
		return -1;
	autofree char *rpath = gl_xasprintf("%s/root.json", p->dir);
	autofail struct gl_fail f = {0};
	if (gl_meta_load(&p->root, rpath, GL_META_ROOT, &f) != GL_E_OK) {
		gl_warn("skipping publisher %s: %s", name, f.detail);
		return -1;
	}
	memcpy(p->id, name, 17);
	return 0;
}

/* Is publisher dir `name` the one whose trusted root repo also holds?
 * Leaves it locked and loaded in p when so. */
static int try_publisher(const char *trust, const char *name, const char *repo,
			 struct gl_publisher *p, struct gl_fail *err)
{
	if (open_publisher(trust, name, p) == 0 && repo_holds(repo, &p->root, err)) {
		load_trusted(p);
		return 1;
	}
	gl_publisher_free(p);
	return 0;
}

enum gl_code gl_trust_find(const char *home, const char *repo, struct gl_publisher *p,
			      struct gl_fail *f)
{
	*p = (struct gl_publisher){.lock_fd = -1};
	autofree char *trust = gl_xasprintf("%s/trust", home);
	autofree struct dirent **names = NULL;
	int n = scandir(trust, &names, NULL, alphasort);
	int found = 0;
	autofail struct gl_fail err = {0};
	for (int i = 0; i < n; i++) {
		if (!found)
			found = try_publisher(trust, names[i]->d_name, repo, p, &err);
		free(names[i]);
	}
	if (found)
		return GL_E_OK;
	if (err.code) /* the repository could not be read: say why */
		return gl_fail_set(f, err.code, "%s", err.detail);
	return gl_fail_set(f, GL_E_NOT_PINNED,
			   "%s: no pinned publisher's trusted root is in this repository "
			   "(pin it first: gl-verify pin %s)",
			   repo, repo);
}

/* Verify next (the root that claims version want) against the trusted cur. */
static enum gl_code chain_step(const struct gl_meta *cur, const struct gl_meta *next,
				  int64_t want, struct gl_fail *f)
{
	if (next->version < want)
		return gl_fail_set(f, GL_E_ROLLBACK, "%s: holds root version %lld, expected %lld",
				   next->name, (long long)next->version, (long long)want);
	if (next->version > want)
		return gl_fail_set(f, GL_E_THRESHOLD,
				   "%s: holds root version %lld, expected %lld (a skipped version "
				   "is not signed by the root it skips)",
				   next->name, (long long)next->version, (long long)want);
	if (gl_meta_verify(next, cur, "root", NULL, f) ||
	    gl_meta_verify(next, next, "root", NULL, f))
		return f->code;
	return GL_E_OK;
}

static int role_changed(const struct gl_meta *a, const struct gl_meta *b, const char *role)
{
	return !jv_equal(gl_meta_role(a, role), gl_meta_role(b, role));
}

/* REPO/root.json must not be newer than what the chain reached. */
static enum gl_code check_repo_root(const struct gl_meta *cur, const char *repo,
				       struct gl_fail *f)
{
	autometa struct gl_meta top = {0};
	int missing = 0;
	if (get_meta(&top, repo, "root.json", GL_META_ROOT, &missing, f))
		return f->code;
	if (missing || top.version <= cur->version)
		return GL_E_OK;
	return gl_fail_set(f, GL_E_THRESHOLD,
			   "%s/root.json: root version %lld cannot be reached from the trusted "
			   "version %lld: %s/%lld.root.json is missing, so no chain of signatures "
			   "leads to it",
			   repo, (long long)top.version, (long long)cur->version, repo,
			   (long long)cur->version + 1);
}

enum gl_code gl_trust_store(const struct gl_publisher *p, const struct gl_meta *m,
			       struct gl_fail *f)
{
	autofree char *path = gl_xasprintf("%s/%s.json", p->dir, gl_meta_type_name(m->type));
	return write_file(path, &m->raw, f) < 0 ? f->code : GL_E_OK;
}

/* Drop the trusted file of role (5.3.11). */
static enum gl_code drop(struct gl_publisher *p, struct gl_meta *m, const char *role,
			    struct gl_fail *f)
{
	autofree char *path = gl_xasprintf("%s/%s.json", p->dir, role);
	gl_meta_free(m);
	if (unlink(path) < 0 && errno != ENOENT)
		return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno));
	return GL_E_OK;
}

enum gl_code gl_trust_refresh_root(struct gl_publisher *p, const char *repo, int64_t now,
				      struct gl_fail *f)
{
	int changed = 0, ts_changed = 0, targets_changed = 0;
	for (int step = 0; step < GL_TRUST_CHAIN_MAX; step++) {
		int64_t want = p->root.version + 1;
		autofree char *rel = gl_xasprintf("%lld.root.json", (long long)want);
		struct gl_meta next = {0};
		int missing = 0;
		if (get_meta(&next, repo, rel, GL_META_ROOT, &missing, f))
			return f->code;
		if (missing)
			break;
		if (chain_step(&p->root, &next, want, f)) {
			gl_meta_free(&next);
			return f->code;
		}
		ts_changed |= role_changed(&p->root, &next, "timestamp") ||
			      role_changed(&p->root, &next, "snapshot");
		targets_changed |= role_changed(&p->root, &next, "targets");
		gl_meta_free(&p->root);
		p->root = next;
		changed = 1;
	}
	if (changed) {
		autofree char *rpath = gl_xasprintf("%s/root.json", p->dir);
		if (write_file(rpath, &p->root.raw, f) < 0)
			return f->code;
		if (ts_changed && (drop(p, &p->timestamp, "timestamp", f) ||
				   drop(p, &p->snapshot, "snapshot", f)))
			return f->code;
		if (targets_changed && drop(p, &p->targets, "targets", f))
			return f->code;
	}
	if (check_repo_root(&p->root, repo, f))
		return f->code;
	return gl_meta_check_expiry(&p->root, now, f);
}
