/* tuf_client.c — timestamp, snapshot and targets (TUF specification
 * §5.4-5.6); see tuf_client.h. */
#define _GNU_SOURCE
#include "sign/tuf_client.h"

#include <fnmatch.h>
#include <string.h>

#include "json/json.h"
#include "sign/repo.h"

int gl_tuf_check_off(const char *check)
{
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_TUF_OFF");
	size_t n = strlen(check);
	for (const char *s = off; s && *s;) {
		size_t l = strcspn(s, ",");
		if (l == n && !strncmp(s, check, n))
			return 1;
		s += l + (s[l] == ',');
	}
#else
	(void)check;
#endif
	return 0;
}

static enum gl_code expiry(const struct gl_meta *m, int64_t now, struct gl_fail *f)
{
	return gl_tuf_check_off("expiry") ? GL_E_OK : gl_meta_check_expiry(m, now, f);
}

/* Fetch rel (at most want_len bytes when given, else the role's cap),
 * check its length and hashes as the parent gives them, parse it as t and
 * verify it with the root's role t. Borrows hashes. */
static enum gl_code fetch_verified(struct gl_meta *m, const struct gl_publisher *p,
				      const char *repo, const char *rel, enum gl_meta_type t,
				      int64_t want_len, jv hashes, struct gl_fail *f)
{
	autobuf struct gl_buf b = {0};
	autofree char *name = gl_repo_name(repo, rel);
	size_t cap = gl_tuf_cap(t);
	if (want_len >= 0 && (uint64_t)want_len < cap && cap != SIZE_MAX)
		cap = (size_t)want_len;
	*m = (struct gl_meta){.doc = jv_invalid(), .sig = jv_invalid()};
	if (gl_repo_get(repo, rel, cap, &b, NULL, f))
		return f->code;
	if (!gl_tuf_check_off("hash") &&
	    gl_tuf_check_bytes(name, b.data ? b.data : "", b.len, want_len, hashes, f))
		return f->code;
	if (gl_meta_parse(m, name, b.data ? b.data : "", b.len, t, f) ||
	    gl_meta_verify(m, &p->root, gl_meta_type_name(t), NULL, f))
		return f->code;
	return GL_E_OK;
}

/* The version a parent names must be the version served (mix-and-match). */
static enum gl_code same_version(const struct gl_meta *m, const char *parent, int64_t want,
				    struct gl_fail *f)
{
	if (m->version == want || gl_tuf_check_off("version"))
		return GL_E_OK;
	return gl_fail_set(f, GL_E_ROLLBACK,
			   "%s: holds %s version %lld, but %s names version %lld (a mix of "
			   "metadata from different times)",
			   m->name, gl_meta_type_name(m->type), (long long)m->version, parent,
			   (long long)want);
}

/* 5.4: the new timestamp into *ts (or the trusted one when the version is
 * the same). */
static enum gl_code step_timestamp(struct gl_publisher *p, const char *repo, int64_t now,
				      struct gl_meta *ts, struct gl_fail *f)
{
	if (fetch_verified(ts, p, repo, "timestamp.json", GL_META_TIMESTAMP, -1, jv_null(), f))
		return f->code;
	struct gl_meta *old = &p->timestamp;
	if (gl_meta_present(old) && !gl_tuf_check_off("rollback")) {
		int64_t ov, nv, l;
		jv h1 = jv_null(), h2 = jv_null();
		gl_meta_file(old, "snapshot.json", &ov, &l, &h1);
		gl_meta_file(ts, "snapshot.json", &nv, &l, &h2);
		jv_free(h1);
		jv_free(h2);
		if (ts->version < old->version)
			return gl_fail_set(f, GL_E_ROLLBACK,
					   "%s: timestamp version %lld is lower than the trusted "
					   "%lld (rollback)",
					   ts->name, (long long)ts->version, (long long)old->version);
		if (nv < ov)
			return gl_fail_set(f, GL_E_ROLLBACK,
					   "%s: names snapshot version %lld, lower than the "
					   "trusted timestamp's %lld (rollback)",
					   ts->name, (long long)nv, (long long)ov);
		if (ts->version == old->version) { /* no update: keep what is trusted */
			gl_meta_free(ts);
			*ts = *old;
			*old = (struct gl_meta){.doc = jv_invalid(), .sig = jv_invalid()};
		}
	}
	return expiry(ts, now, f);
}

/* Every role the trusted snapshot lists is listed by the new one, at a
 * version not lower (5.5.5). */
static enum gl_code snapshot_rollback(const struct gl_meta *old, const struct gl_meta *snap,
					 struct gl_fail *f)
{
	if (!gl_meta_present(old) || gl_tuf_check_off("rollback"))
		return GL_E_OK;
	jv meta = gl_json_get(old->sig, "meta");
	enum gl_code rc = GL_E_OK;
	jv_object_foreach(meta, k, v)
	{
		int64_t ov, nv, l;
		jv h = jv_null();
		gl_json_get_int(v, "version", &ov);
		if (rc == GL_E_OK && gl_meta_file(snap, jv_string_value(k), &nv, &l, &h) < 0)
			rc = gl_fail_set(f, GL_E_ROLLBACK,
					 "%s: no longer lists %.200s, which the trusted snapshot "
					 "version %lld lists (rollback)",
					 snap->name, jv_string_value(k), (long long)old->version);
		else if (rc == GL_E_OK && nv < ov)
			rc = gl_fail_set(f, GL_E_ROLLBACK,
					 "%s: names %.200s version %lld, lower than the trusted "
					 "%lld (rollback)",
					 snap->name, jv_string_value(k), (long long)nv, (long long)ov);
		jv_free(h);
		jv_free(k);
		jv_free(v);
	}
	jv_free(meta);
	return rc;
}

/* The trusted m can stand for the file parent names at version want with
 * hashes (borrowed)? */
static int reuse(const struct gl_meta *m, int64_t want, int64_t len, jv hashes)
{
	autofail struct gl_fail f = {0};
	return gl_meta_present(m) && m->version == want &&
	       gl_tuf_check_bytes(m->name, m->raw.data, m->raw.len, len, hashes, &f) == GL_E_OK;
}

static void take(struct gl_meta *dst, struct gl_meta *src)
{
	*dst = *src;
	*src = (struct gl_meta){.doc = jv_invalid(), .sig = jv_invalid()};
}

/* 5.5 (t = snapshot, parent = ts) and 5.6 (t = targets, parent = snapshot). */
static enum gl_code step_child(struct gl_publisher *p, const char *repo, int64_t now,
				  const struct gl_meta *parent, enum gl_meta_type t,
				  struct gl_meta *out, struct gl_fail *f)
{
	const char *role = gl_meta_type_name(t);
	struct gl_meta *trusted = t == GL_META_SNAPSHOT ? &p->snapshot : &p->targets;
	autofree char *file = gl_xasprintf("%s.json", role);
	int64_t want, len;
	jv hashes = jv_null();
	if (gl_meta_file(parent, file, &want, &len, &hashes) < 0)
		return gl_fail_set(f, GL_E_BAD_METADATA, "%s: lists no %s", parent->name, file);
	enum gl_code rc = GL_E_OK;
	autofree char *rel = gl_meta_consistent(&p->root)
				 ? gl_xasprintf("%lld.%s", (long long)want, file)
				 : gl_xstrdup(file);
	if (reuse(trusted, want, len, hashes)) {
		/* named for messages as the file it stands for */
		take(out, trusted);
		free(out->name);
		out->name = gl_repo_name(repo, rel);
	} else {
		rc = fetch_verified(out, p, repo, rel, t, len, hashes, f);
		if (rc == GL_E_OK)
			rc = same_version(out, parent->name, want, f);
		if (rc == GL_E_OK && t == GL_META_SNAPSHOT)
			rc = snapshot_rollback(&p->snapshot, out, f);
		if (rc == GL_E_OK && gl_meta_present(trusted) && out->version < trusted->version &&
		    !gl_tuf_check_off("rollback"))
			rc = gl_fail_set(f, GL_E_ROLLBACK,
					 "%s: %s version %lld is lower than the trusted %lld "
					 "(rollback)",
					 out->name, role, (long long)out->version,
					 (long long)trusted->version);
	}
	jv_free(hashes);
	return rc ? rc : expiry(out, now, f);
}

enum gl_code gl_tuf_update(struct gl_publisher *p, const char *repo, int64_t now,
			      jv *signers, struct gl_fail *f)
{
	autometa struct gl_meta ts = {0}, snap = {0}, tg = {0};
	*signers = jv_invalid();
	if (step_timestamp(p, repo, now, &ts, f) ||
	    step_child(p, repo, now, &ts, GL_META_SNAPSHOT, &snap, f) ||
	    step_child(p, repo, now, &snap, GL_META_TARGETS, &tg, f) ||
	    gl_meta_verify(&tg, &p->root, "targets", signers, f))
		return f->code;
	/* All three verified: store them (each atomically), then trust them. */
	if (gl_trust_store(p, &ts, f) || gl_trust_store(p, &snap, f) || gl_trust_store(p, &tg, f))
		return f->code;
	gl_meta_free(&p->timestamp);
	gl_meta_free(&p->snapshot);
	gl_meta_free(&p->targets);
	take(&p->timestamp, &ts);
	take(&p->snapshot, &snap);
	take(&p->targets, &tg);
	return GL_E_OK;
}

/* ---- delegated targets, one level (TUF §5.6.7) ------------------------- */

static int path_matches(jv role, const char *path)
{
	jv paths = gl_json_get(role, "paths");
	int hit = 0;
	if (gl_json_is_str_array(paths)) {
		jv_array_foreach(paths, i, pat)
		{
			(void)i;
			hit |= fnmatch(jv_string_value(pat), path, FNM_PATHNAME) == 0;
			jv_free(pat);
		}
	}
	jv_free(paths);
	return hit;
}

/* Fetch and verify the delegated role (borrowed) that p->targets names. */
static enum gl_code load_delegated(struct gl_publisher *p, const char *repo, int64_t now,
				      jv role, struct gl_meta *m, jv *signers, struct gl_fail *f)
{
	const char *name = gl_json_get_str(role, "name");
	autofree char *file = gl_xasprintf("%s.json", name);
	int64_t want, len;
	jv hashes = jv_null();
	if (gl_meta_file(&p->snapshot, file, &want, &len, &hashes) < 0)
		return gl_fail_set(f, GL_E_BAD_METADATA, "%s: lists no %s, which %s delegates to",
				   p->snapshot.name, file, p->targets.name);
	autofree char *rel = gl_meta_consistent(&p->root)
				 ? gl_xasprintf("%lld.%s", (long long)want, file)
				 : gl_xstrdup(file);
	autobuf struct gl_buf b = {0};
	autofree char *fname = gl_repo_name(repo, rel);
	size_t cap = gl_tuf_cap(GL_META_TARGETS);
	if (len >= 0 && (uint64_t)len < cap && cap != SIZE_MAX)
		cap = (size_t)len;
	enum gl_code rc = gl_repo_get(repo, rel, cap, &b, NULL, f);
	if (rc == GL_E_OK && !gl_tuf_check_off("hash"))
		rc = gl_tuf_check_bytes(fname, b.data ? b.data : "", b.len, len, hashes, f);
	jv_free(hashes);
	if (rc == GL_E_OK)
		rc = gl_meta_parse(m, fname, b.data ? b.data : "", b.len, GL_META_TARGETS, f);
	if (rc == GL_E_OK)
		rc = gl_meta_verify_delegated(m, &p->targets, role, signers, f);
	if (rc == GL_E_OK)
		rc = same_version(m, p->snapshot.name, want, f);
	return rc ? rc : expiry(m, now, f);
}

enum gl_code gl_tuf_find_delegated(struct gl_publisher *p, const char *repo, int64_t now,
				      const char *path, jv *entry, jv *signers, struct gl_fail *f)
{
	jv d = gl_json_get(p->targets.sig, "delegations");
	jv roles = gl_json_get(d, "roles");
	jv_free(d);
	*entry = jv_invalid();
	enum gl_code rc = GL_E_OK;
	int done = !jv_is_valid(roles);
	for (int i = 0; !done && i < jv_array_length(jv_copy(roles)); i++) {
		jv role = jv_array_get(jv_copy(roles), i);
		if (path_matches(role, path)) {
			struct gl_meta m = {0};
			jv who = jv_invalid();
			rc = load_delegated(p, repo, now, role, &m, &who, f);
			if (rc == GL_E_OK) {
				jv ts = gl_json_get(m.sig, "targets");
				*entry = gl_json_get(ts, path);
				jv_free(ts);
			}
			if (jv_is_valid(*entry)) {
				jv_free(*signers);
				*signers = who;
			} else {
				jv_free(who);
			}
			done = rc != GL_E_OK || jv_is_valid(*entry) ||
			       gl_json_get_bool(role, "terminating", 0);
			gl_meta_free(&m);
		}
		jv_free(role);
	}
	jv_free(roles);
	return rc;
}
