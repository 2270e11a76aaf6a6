/* publish_meta.c — the metadata chain of a publisher's repository: every
 * change re-signs targets -> snapshot -> timestamp (TUF specification §6.1),
 * gl-sign timestamp, gl-sign rotate for every role; see publish.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "json/json.h"
#include "sign/publish_impl.h"

static const char *const roles4[] = {"root", "targets", "snapshot", "timestamp"};

void gl_pubrepo_free(struct gl_pubrepo *r)
{
	gl_meta_free(&r->root);
	gl_meta_free(&r->targets);
	gl_meta_free(&r->snapshot);
	gl_meta_free(&r->timestamp);
}

enum gl_code gl_pubrepo_load(struct gl_pubrepo *r, const char *dir, struct gl_fail *f)
{
	static const enum gl_meta_type types[] = {GL_META_ROOT, GL_META_TARGETS,
						  GL_META_SNAPSHOT, GL_META_TIMESTAMP};
	struct gl_meta *dst[] = {&r->root, &r->targets, &r->snapshot, &r->timestamp};
	*r = (struct gl_pubrepo){.dir = dir};
	for (int i = 0; i < 4; i++) {
		autofree char *path = gl_xasprintf("%s/%s.json", dir, roles4[i]);
		if (gl_meta_load(dst[i], path, types[i], f)) {
			if (f->code == GL_E_IO && i >= 2)
				gl_fail_set(f, GL_E_IO,
					    "%s: missing: this repository predates the snapshot "
					    "and timestamp roles; make a new one with gl-sign init",
					    path);
			gl_pubrepo_free(r);
			return f->code;
		}
	}
	return GL_E_OK;
}

size_t gl_keys_distinct(struct gl_keys ks, int need_secret)
{
	size_t n = 0;
	for (size_t i = 0; i < ks.n; i++) {
		int dup = need_secret && !ks.k[i].sk;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(ks.k[i].keyid, ks.k[j].keyid) && (!need_secret || ks.k[j].sk);
		n += !dup;
	}
	return n;
}

static int role_has(jv role, const char *keyid)
{
	jv ids = gl_json_get(role, "keyids");
	int found = 0;
	jv_array_foreach(ids, i, e)
	{
		(void)i;
		found |= !strcmp(jv_string_value(e), keyid);
		jv_free(e);
	}
	jv_free(ids);
	return found;
}

/* The keys of ks with secrets that root's role lists (a shallow copy in
 * out->k, to free); refuses "threshold" when they do not reach it. */
static enum gl_code signers_of(const struct gl_meta *root, const char *role, struct gl_keys ks,
				  struct gl_keys *out, struct gl_fail *f)
{
	jv r = gl_meta_role(root, role);
	struct gl_key *a = gl_xcalloc(ks.n + 1, sizeof *a);
	size_t n = 0;
	for (size_t i = 0; i < ks.n; i++) {
		if (ks.k[i].sk && role_has(r, ks.k[i].keyid))
			a[n++] = ks.k[i];
	}
	int64_t t = 0;
	gl_json_get_int(r, "threshold", &t);
	jv_free(r);
	*out = (struct gl_keys){a, n};
	size_t have = gl_keys_distinct(*out, 1);
	if ((int64_t)have >= t)
		return GL_E_OK;
	free(a);
	out->k = NULL;
	return gl_fail_set(f, GL_E_THRESHOLD,
			   "the %s role of root version %lld needs %lld signature(s) from distinct "
			   "keys; the keys given hold %zu of them",
			   role, (long long)root->version, (long long)t, have);
}

void gl_pub_warn_expired(const char *path, int64_t expires)
{
	if (expires > gl_now())
		return;
	char t[21];
	gl_time_format(expires, t);
	gl_warn("warning: %s is already expired (expires %s)", path, t);
}

enum gl_code gl_pub_write(const char *dir, const char *name, jv doc, struct gl_fail *f)
{
	autofree char *path = gl_xasprintf("%s/%s", dir, name);
	int r = gl_tuf_write(path, doc, f);
	jv_free(doc);
	return r < 0 ? gl_fail_set(f, GL_E_IO, "%s", gl_fail_detail(f)) : GL_E_OK;
}

static int64_t or_default(int64_t t, int days)
{
	return t ? t : gl_now() + (int64_t)days * 86400;
}

/* Sign signed_ (consumed) with role's keys of ks; *bytes its canonical form. */
static enum gl_code sign_role(const struct gl_meta *root, const char *role, struct gl_keys ks,
				 jv signed_, jv *doc, struct gl_buf *bytes, struct gl_fail *f)
{
	struct gl_keys s;
	*doc = jv_invalid();
	if (signers_of(root, role, ks, &s, f)) {
		jv_free(signed_);
		return f->code;
	}
	*doc = gl_tuf_sign(signed_, s.k, s.n, f);
	free((void *)s.k);
	if (!jv_is_valid(*doc))
		return f->code;
	if (gl_tuf_dump(bytes, *doc, f) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", role, gl_fail_detail(f));
	return GL_E_OK;
}

struct chain {
	jv doc[3]; /* targets, snapshot, timestamp (invalid: unchanged) */
	struct gl_buf bytes[3];
	int64_t version[3], expires[3];
};

static void chain_free(struct chain *c)
{
	for (int i = 0; i < 3; i++) {
		jv_free(c->doc[i]);
		gl_buf_free(&c->bytes[i]);
	}
}

/* Build and sign the chain from `from` down (nothing written). */
static enum gl_code chain_build(struct gl_pubrepo *r, struct gl_keys keys,
				   enum gl_meta_type from, jv targets, const struct gl_expiry *e,
				   struct chain *c, struct gl_fail *f)
{
	c->version[0] = r->targets.version;
	c->version[1] = r->snapshot.version + (from <= GL_META_SNAPSHOT);
	c->version[2] = r->timestamp.version + 1;
	c->expires[0] = or_default(e ? e->targets : 0, GL_TARGETS_DAYS_DEFAULT);
	c->expires[1] = or_default(e ? e->snapshot : 0, GL_SNAPSHOT_DAYS_DEFAULT);
	c->expires[2] = or_default(e ? e->timestamp : 0, GL_TIMESTAMP_DAYS_DEFAULT);
	if (from == GL_META_TARGETS) {
		c->version[0]++;
		/* the old document's other fields (delegations, a writer's own) are kept */
		jv s = gl_tuf_targets_signed(c->version[0], c->expires[0], targets);
		if (jv_get_kind(r->targets.sig) == JV_KIND_OBJECT) {
			jv old = jv_copy(r->targets.sig);
			jv_object_foreach(s, k, v) old = jv_object_set(old, k, v);
			jv_free(s);
			s = old;
		}
		if (sign_role(&r->root, "targets", keys, s, &c->doc[0], &c->bytes[0], f))
			return f->code;
	} else {
		jv_free(targets);
	}
	if (from <= GL_META_SNAPSHOT) {
		jv meta = gl_json_get(r->snapshot.sig, "meta");
		meta = jv_object_set(meta, jv_string("targets.json"),
				     gl_tuf_meta_entry(c->version[0], NULL, 0));
		jv s = gl_tuf_snapshot_signed(c->version[1], c->expires[1], meta);
		if (sign_role(&r->root, "snapshot", keys, s, &c->doc[1], &c->bytes[1], f))
			return f->code;
	}
	const struct gl_buf *snap = from <= GL_META_SNAPSHOT ? &c->bytes[1] : &r->snapshot.raw;
	jv meta = jv_object_set(jv_object(), jv_string("snapshot.json"),
				gl_tuf_meta_entry(c->version[1], snap->data, snap->len));
	jv s = gl_tuf_timestamp_signed(c->version[2], c->expires[2], meta);
	return sign_role(&r->root, "timestamp", keys, s, &c->doc[2], &c->bytes[2], f);
}

/* Versioned files first, then the plain ones, timestamp.json last: a
 * client that reads the new timestamp finds everything it names. */
static enum gl_code chain_write(struct gl_pubrepo *r, struct chain *c, struct gl_fail *f)
{
	static const char *const plain[] = {"targets.json", "snapshot.json", "timestamp.json"};
	int cs = gl_meta_consistent(&r->root);
	for (int i = 0; i < 2; i++) {
		if (!cs || !jv_is_valid(c->doc[i]))
			continue;
		autofree char *name = gl_xasprintf("%lld.%s", (long long)c->version[i], plain[i]);
		if (gl_pub_write(r->dir, name, jv_copy(c->doc[i]), f))
			return f->code;
	}
	for (int i = 0; i < 3; i++) {
		if (!jv_is_valid(c->doc[i]))
			continue;
		autofree char *path = gl_xasprintf("%s/%s", r->dir, plain[i]);
		gl_pub_warn_expired(path, c->expires[i]);
		if (gl_pub_write(r->dir, plain[i], jv_copy(c->doc[i]), f))
			return f->code;
	}
	return GL_E_OK;
}

enum gl_code gl_pubrepo_commit(struct gl_pubrepo *r, struct gl_keys keys,
				  enum gl_meta_type from, jv targets, const struct gl_expiry *e,
				  jv *out, struct gl_fail *f)
{
	struct chain c = {.doc = {jv_invalid(), jv_invalid(), jv_invalid()}};
	if (chain_build(r, keys, from, targets, e, &c, f) == GL_E_OK &&
	    chain_write(r, &c, f) == GL_E_OK) {
		*out = jv_object_set(*out, jv_string("targets_version"),
				     jv_number((double)c.version[0]));
		*out = jv_object_set(*out, jv_string("snapshot_version"),
				     jv_number((double)c.version[1]));
		*out = jv_object_set(*out, jv_string("timestamp_version"),
				     jv_number((double)c.version[2]));
	}
	chain_free(&c);
	return f->code;
}

enum gl_code gl_publish_timestamp(const char *repo, struct gl_keys keys, int64_t expires,
				     jv *out, struct gl_fail *f)
{
	struct gl_pubrepo r;
	if (gl_pubrepo_load(&r, repo, f))
		return f->code;
	struct gl_expiry e = {.timestamp = expires};
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	if (gl_pubrepo_commit(&r, keys, GL_META_TIMESTAMP, jv_null(), &e, &o, f) == GL_E_OK) {
		char t[21];
		gl_time_format(or_default(expires, GL_TIMESTAMP_DAYS_DEFAULT), t);
		*out = jv_object_set(o, jv_string("expires"), jv_string(t));
	} else {
		jv_free(o);
	}
	gl_pubrepo_free(&r);
	return f->code;
}

/* ---- rotate ------------------------------------------------------------ */

/* {"root":[…],…} keyids of a root "signed" object (borrowed). */
static jv keyids_of(jv signed_)
{
	jv roles = gl_json_get(signed_, "roles"), out = jv_object();
	for (int i = 0; i < 4; i++) {
		jv r = gl_json_get(roles, roles4[i]);
		out = jv_object_set(out, jv_string(roles4[i]), gl_json_get(r, "keyids"));
		jv_free(r);
	}
	jv_free(roles);
	return out;
}

/* The new root's "signed": role replaced by new_keys/t; keys are those the
 * roles list. */
static jv rotated_root(const struct gl_meta *cur, const char *role, struct gl_keys new_keys,
		       int64_t t, int64_t expires)
{
	jv roles = gl_json_get(cur->sig, "roles");
	roles = jv_object_set(roles, jv_string(role), gl_tuf_role(new_keys.k, new_keys.n, t));
	jv all = gl_tuf_keys_add(gl_json_get(cur->sig, "keys"), new_keys.k, new_keys.n);
	jv keys = jv_object();
	for (int i = 0; i < 4; i++) {
		jv r = gl_json_get(roles, roles4[i]), ids = gl_json_get(r, "keyids");
		jv_array_foreach(ids, j, id)
		{
			(void)j;
			keys = jv_object_set(keys, jv_copy(id), jv_object_get(jv_copy(all), id));
		}
		jv_free(ids);
		jv_free(r);
	}
	jv_free(all);
	return gl_tuf_root_signed(cur->version + 1, expires, keys, roles,
				  gl_meta_consistent(cur));
}

static enum gl_code rotate_checks(const char *role, int64_t t, struct gl_keys new_keys,
				     struct gl_fail *f)
{
	if (t < 1 || (size_t)t > gl_keys_distinct(new_keys, 0))
		return gl_fail_set(f, GL_E_IO,
				   "threshold %lld does not fit the %zu distinct --new-key keys "
				   "(give --threshold)",
				   (long long)t, gl_keys_distinct(new_keys, 0));
	if (!strcmp(role, "root") && (int64_t)gl_keys_distinct(new_keys, 1) < t)
		return gl_fail_set(f, GL_E_THRESHOLD,
				   "the new root role needs %lld signature(s) from its own keys; "
				   "the --new-key secret keys hold %zu",
				   (long long)t, gl_keys_distinct(new_keys, 1));
	return GL_E_OK;
}

/* Sign the new root (old root threshold, and the new one for the root role)
 * and parse it back as *next. */
static enum gl_code sign_root(const struct gl_meta *cur, const char *role, jv rs,
				 struct gl_keys old_keys, struct gl_keys new_keys, jv *doc,
				 struct gl_meta *next, struct gl_fail *f)
{
	struct gl_keys old_ok;
	autobuf struct gl_buf b = {0};
	*doc = jv_invalid();
	if (signers_of(cur, "root", old_keys, &old_ok, f)) {
		jv_free(rs);
		return f->code;
	}
	size_t n = old_ok.n + (!strcmp(role, "root") ? new_keys.n : 0);
	struct gl_key *all = gl_xcalloc(n + 1, sizeof *all);
	memcpy(all, old_ok.k, old_ok.n * sizeof *all);
	if (n > old_ok.n)
		memcpy(all + old_ok.n, new_keys.k, new_keys.n * sizeof *all);
	*doc = gl_tuf_sign(rs, all, n, f);
	free(all);
	free((void *)old_ok.k);
	if (!jv_is_valid(*doc))
		return f->code;
	if (gl_tuf_dump(&b, *doc, f) < 0)
		return gl_fail_set(f, GL_E_IO, "new root: %s", gl_fail_detail(f));
	autofree char *name = gl_xasprintf("%lld.root.json", (long long)cur->version + 1);
	return gl_meta_parse(next, name, b.data, b.len, GL_META_ROOT, f);
}

/* r->root is the rotated root (signed, doc its JSON): the chain below the
 * rotated role is signed again under it by the old and new keys together
 * and checked before anything is written; then the root, its numbered copy
 * and the chain are written, and *out says what was rotated. doc is
 * borrowed. */
static enum gl_code rotate_write(struct gl_pubrepo *r, const char *repo, const char *role,
				 struct gl_keys old_keys, struct gl_keys new_keys, jv doc,
				 struct chain *c, jv *out, struct gl_fail *f)
{
	struct gl_key *both = gl_xcalloc(old_keys.n + new_keys.n + 1, sizeof *both);
	memcpy(both, old_keys.k, old_keys.n * sizeof *both);
	memcpy(both + old_keys.n, new_keys.k, new_keys.n * sizeof *both);
	struct gl_keys ks = {both, old_keys.n + new_keys.n};
	enum gl_meta_type from = !strcmp(role, "targets")    ? GL_META_TARGETS
				 : !strcmp(role, "snapshot") ? GL_META_SNAPSHOT
							     : GL_META_TIMESTAMP;
	bool resign = strcmp(role, "root") != 0;
	enum gl_code rc =
	    resign ? chain_build(r, ks, from, gl_json_get(r->targets.sig, "targets"), NULL, c, f)
		   : GL_E_OK;
	free(both);
	if (rc != GL_E_OK)
		return rc;
	autofree char *vname = gl_xasprintf("%lld.root.json", (long long)r->root.version);
	if (gl_pub_write(repo, vname, jv_copy(doc), f) ||
	    gl_pub_write(repo, "root.json", jv_copy(doc), f) || (resign && chain_write(r, c, f)))
		return f->code;
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	o = jv_object_set(o, jv_string("role"), jv_string(role));
	o = jv_object_set(o, jv_string("version"), jv_number((double)r->root.version));
	*out = jv_object_set(o, jv_string("keyids"), keyids_of(r->root.sig));
	return GL_E_OK;
}

enum gl_code gl_publish_rotate(const char *repo, const char *role, struct gl_keys old_keys,
				  struct gl_keys new_keys, int64_t threshold, int64_t expires,
				  jv *out, struct gl_fail *f)
{
	struct gl_pubrepo r;
	if (gl_pubrepo_load(&r, repo, f))
		return f->code;
	autofree char *nextp = gl_xasprintf("%s/%lld.root.json", repo, (long long)r.root.version + 1);
	jv doc = jv_invalid();
	struct gl_meta next = {0};
	struct chain c = {.doc = {jv_invalid(), jv_invalid(), jv_invalid()}};
	struct gl_keys probe = {0};
	jv cur_role = gl_meta_role(&r.root, role);
	int64_t t = threshold;
	if (!t)
		gl_json_get_int(cur_role, "threshold", &t);
	jv_free(cur_role);
	if (access(nextp, F_OK) == 0) {
		gl_fail_set(f, GL_E_IO, "%s exists; root.json is not the newest root", nextp);
		goto done;
	}
	if (signers_of(&r.root, "root", old_keys, &probe, f))
		goto done;
	free((void *)probe.k);
	if (rotate_checks(role, t, new_keys, f) ||
	    sign_root(&r.root, role, rotated_root(&r.root, role, new_keys, t, expires), old_keys,
		      new_keys, &doc, &next, f) ||
	    gl_meta_verify(&next, &next, "root", NULL, f))
		goto done;
	gl_meta_free(&r.root);
	r.root = next;
	next = (struct gl_meta){0};
	if (rotate_write(&r, repo, role, old_keys, new_keys, doc, &c, out, f) == GL_E_OK)
		gl_pub_warn_expired(nextp, expires);
done:
	jv_free(doc);
	chain_free(&c);
	gl_meta_free(&next);
	gl_pubrepo_free(&r);
	return f->code;
}
