/* publish.c — gl-sign init|add|remove|pack over a repository; see publish.h.
 * The metadata chain, timestamp and rotate are lib/sign/publish_meta.c. */
#define _GNU_SOURCE
#include "sign/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sha.h"
#include "sign/archive.h"
#include "json/json.h"
#include "release/manifest.h"
#include "sign/minisign.h"
#include "sign/publish_impl.h"
#include "sign/tuf.h"

#define CHUNK (256u << 10)

/* ---- init -------------------------------------------------------------- */

static jv init_record(const char *repo, jv root_signed, int consistent)
{
	jv roles = gl_json_get(root_signed, "roles"), ids = jv_object();
	static const char *const names[] = {"root", "targets", "snapshot", "timestamp"};
	for (int i = 0; i < 4; i++) {
		jv r = gl_json_get(roles, names[i]);
		ids = jv_object_set(ids, jv_string(names[i]), gl_json_get(r, "keyids"));
		jv_free(r);
	}
	jv_free(roles);
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	o = jv_object_set(o, jv_string("repo"), jv_string(repo));
	o = jv_object_set(o, jv_string("root_version"), jv_number(1));
	o = jv_object_set(o, jv_string("targets_version"), jv_number(1));
	o = jv_object_set(o, jv_string("consistent_snapshot"), jv_bool(consistent));
	return jv_object_set(o, jv_string("keyids"), ids);
}

static enum gl_code init_checks(const struct gl_init *in, const struct gl_keys *ks,
				   struct gl_fail *f)
{
	static const char *const names[] = {"root", "targets", "snapshot", "timestamp"};
	for (int i = 0; i < 4; i++) {
		if ((size_t)in->threshold > gl_keys_distinct(ks[i], 1))
			return gl_fail_set(f, GL_E_IO,
					   "--threshold %lld exceeds the %zu distinct signing keys "
					   "given for the %s role",
					   (long long)in->threshold, gl_keys_distinct(ks[i], 1),
					   names[i]);
	}
	return GL_E_OK;
}

/* Root v1 and the empty targets v1 -> snapshot v1 -> timestamp v1. */
enum gl_code gl_publish_init(const char *repo, const struct gl_init *in, jv *out,
				struct gl_fail *f)
{
	struct gl_keys ks[4] = {in->root, in->targets, in->snapshot.n ? in->snapshot : in->targets,
				in->timestamp.n ? in->timestamp : in->targets};
	if (init_checks(in, ks, f))
		return f->code;
	autofree char *rootp = gl_xasprintf("%s/root.json", repo);
	autofree char *root1 = gl_xasprintf("%s/1.root.json", repo);
	autofree char *tdir = gl_xasprintf("%s/targets", repo);
	if (access(rootp, F_OK) == 0 || access(root1, F_OK) == 0)
		return gl_fail_set(f, GL_E_IO, "%s: already initialised (root.json exists)", repo);
	if (gl_mkdir_p(tdir, 0755) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", tdir, strerror(errno));
	jv keys = jv_object(), roles = jv_object();
	static const char *const names[] = {"root", "targets", "snapshot", "timestamp"};
	for (int i = 0; i < 4; i++) {
		keys = gl_tuf_keys_add(keys, ks[i].k, ks[i].n);
		roles = jv_object_set(roles, jv_string(names[i]),
				      gl_tuf_role(ks[i].k, ks[i].n, in->threshold));
	}
	jv rs = gl_tuf_root_signed(1, in->root_expires, keys, roles, in->consistent);
	jv rec = init_record(repo, rs, in->consistent);
	jv root = gl_tuf_sign(rs, ks[0].k, ks[0].n, f);
	if (!jv_is_valid(root)) {
		jv_free(rec);
		return f->code;
	}
	gl_pub_warn_expired(rootp, in->root_expires);
	/* A bootstrap chain at version 0 that the commit below advances to 1. */
	struct gl_pubrepo r = {.dir = repo};
	autobuf struct gl_buf b = {0};
	enum gl_code rc = gl_tuf_dump(&b, root, f) < 0
			      ? gl_fail_set(f, GL_E_IO, "root.json: %s", gl_fail_detail(f))
			      : gl_meta_parse(&r.root, "root.json", b.data, b.len, GL_META_ROOT, f);
	r.snapshot.sig = jv_object_set(jv_object(), jv_string("meta"), jv_object());
	r.snapshot.doc = r.targets.doc = r.targets.sig = r.timestamp.doc = r.timestamp.sig =
	    jv_invalid();
	r.snapshot.doc = jv_invalid();
	if (rc == GL_E_OK)
		rc = gl_pub_write(repo, "1.root.json", jv_copy(root), f);
	if (rc == GL_E_OK)
		rc = gl_pub_write(repo, "root.json", jv_copy(root), f);
	struct gl_key *all = gl_xcalloc(ks[1].n + ks[2].n + ks[3].n + 1, sizeof *all);
	size_t n = 0;
	for (int i = 1; i < 4; i++)
		for (size_t j = 0; j < ks[i].n; j++)
			all[n++] = ks[i].k[j];
	if (rc == GL_E_OK)
		rc = gl_pubrepo_commit(&r, (struct gl_keys){all, n}, GL_META_TARGETS, jv_object(),
				       &in->exp, &rec, f);
	free(all);
	jv_free(root);
	gl_pubrepo_free(&r);
	if (rc == GL_E_OK)
		*out = rec;
	else
		jv_free(rec);
	return rc;
}

/* ---- add --------------------------------------------------------------- */

struct staged {
	char *tmp; /* temporary copy in REPO/targets, or NULL when in place */
	int fd;	   /* the bytes that will be published */
	int64_t len;
	char sha[65];
};

static void staged_free(struct staged *s)
{
	if (s->tmp)
		unlink(s->tmp);
	free(s->tmp);
	if (s->fd >= 0)
		close(s->fd);
}

/* Hash src (copying it into dst_fd unless dst_fd < 0). */
static enum gl_code hash_copy(const char *src, int dst_fd, struct staged *s, struct gl_fail *f)
{
	autoclose int fd = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", src, strerror(errno));
	struct gl_sha256 h;
	gl_sha256_init(&h);
	autofree unsigned char *buf = gl_xmalloc(CHUNK);
	s->len = 0;
	for (;;) {
		ssize_t r = read(fd, buf, CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return gl_fail_set(f, GL_E_IO, "%s: %s", src, strerror(errno));
		if (r == 0)
			break;
		s->len += r;
		gl_sha256_update(&h, buf, r);
		if (dst_fd >= 0 && gl_write_all(dst_fd, buf, (size_t)r) < 0)
			return gl_fail_set(f, GL_E_IO, "copying %s: %s", src, strerror(errno));
	}
	unsigned char d[GL_SHA256_BYTES];
	gl_sha256_final(&h, d);
	gl_hex(d, sizeof d, s->sha);
	if (dst_fd >= 0 && fsync(dst_fd) < 0)
		return gl_fail_set(f, GL_E_IO, "copying %s: %s", src, strerror(errno));
	return GL_E_OK;
}

/* Copy archive into REPO/targets (a temporary name until commit), hashing
 * it; an archive already at REPO/targets/NAME is only hashed. */
static enum gl_code stage(const char *archive, const char *dest, struct staged *s,
			     struct gl_fail *f)
{
	struct stat a, b;
	if (stat(archive, &a) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", archive, strerror(errno));
	if (!S_ISREG(a.st_mode))
		return gl_fail_set(f, GL_E_IO, "%s: not a regular file", archive);
	if (stat(dest, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		s->fd = open(dest, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0)
			return gl_fail_set(f, GL_E_IO, "%s: %s", dest, strerror(errno));
		return hash_copy(dest, -1, s, f);
	}
	s->tmp = gl_xasprintf("%s.tmp.XXXXXX", dest);
	s->fd = mkostemp(s->tmp, O_CLOEXEC);
	if (s->fd < 0 || fchmod(s->fd, 0644) < 0) {
		free(s->tmp);
		s->tmp = NULL;
		return gl_fail_set(f, GL_E_IO, "%s: %s", dest, strerror(errno));
	}
	return hash_copy(archive, s->fd, s, f);
}

/* The manifest inside the staged archive (owned), or invalid with f set. */
static jv staged_manifest(const struct staged *s, const char *archive, struct gl_fail *f)
{
	if (lseek(s->fd, 0, SEEK_SET) < 0) {
		gl_fail_set(f, GL_E_IO, "%s: %s", archive, strerror(errno));
		return jv_invalid();
	}
	autofree char *buf = NULL;
	size_t len;
	enum gl_code st = gl_archive_read_member(s->fd, "manifest.json", GL_MANIFEST_MAX, &buf, &len, f);
	if (st != GL_E_OK) {
		gl_fail_set(f, st == GL_E_UNSAFE_ARCHIVE ? GL_E_BAD_MANIFEST : GL_E_IO,
			    "%s: manifest.json: %s", archive,
			    f->detail && *f->detail ? f->detail : "cannot be read");
		return jv_invalid();
	}
	jv m = gl_manifest_parse(buf, len);
	if (!jv_is_valid(m)) {
		jv msg = jv_invalid_get_msg(m);
		gl_fail_set(f, GL_E_BAD_MANIFEST, "%s: manifest.json: %s", archive,
			    jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "invalid");
		jv_free(msg);
		return jv_invalid();
	}
	return m;
}

/* The targets.json entry for a staged archive. Borrows manifest. */
static jv target_entry(const struct staged *s, jv manifest)
{
	jv custom = jv_object_set(jv_object(), jv_string("name"), gl_json_get(manifest, "name"));
	custom = jv_object_set(custom, jv_string("version"), gl_json_get(manifest, "version"));
	jv hashes = jv_object_set(jv_object(), jv_string("sha256"), jv_string(s->sha));
	jv e = jv_object_set(jv_object(), jv_string("length"), jv_number((double)s->len));
	e = jv_object_set(e, jv_string("hashes"), hashes);
	return jv_object_set(e, jv_string("custom"), custom);
}

static jv add_record(const char *name, const struct staged *s, jv manifest)
{
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	o = jv_object_set(o, jv_string("target"), jv_string(name));
	o = jv_object_set(o, jv_string("length"), jv_number((double)s->len));
	o = jv_object_set(o, jv_string("sha256"), jv_string(s->sha));
	o = jv_object_set(o, jv_string("name"), gl_json_get(manifest, "name"));
	return jv_object_set(o, jv_string("version"), gl_json_get(manifest, "version"));
}

/* REPO/targets/HASH.NAME, the consistent-snapshot name of a target (TUF
 * §5.7.3): a hard link to REPO/targets/NAME, else a copy. */
static enum gl_code hashed_copy(const char *repo, const char *name, const struct staged *s,
				   struct gl_fail *f)
{
	autofree char *src = gl_xasprintf("%s/targets/%s", repo, name);
	autofree char *dst = gl_xasprintf("%s/targets/%s.%s", repo, s->sha, name);
	if (access(dst, F_OK) == 0 || link(src, dst) == 0)
		return GL_E_OK;
	struct staged c = {.fd = -1};
	autofree char *tmp = gl_xasprintf("%s.tmp.XXXXXX", dst);
	autoclose int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, 0644) < 0 || hash_copy(src, fd, &c, f) || rename(tmp, dst) < 0) {
		if (fd >= 0)
			unlink(tmp);
		return f->code ? f->code : gl_fail_set(f, GL_E_IO, "%s: %s", dst, strerror(errno));
	}
	return GL_E_OK;
}

/* Stage the archive, check its manifest and every threshold, publish it
 * under name and re-sign the chain. */
static enum gl_code add_signed(struct gl_pubrepo *r, struct gl_keys keys, const char *archive,
				  const char *name, const struct gl_expiry *e, jv *out,
				  struct gl_fail *f)
{
	autofree char *dest = gl_xasprintf("%s/targets/%s", r->dir, name);
	autofree char *tdir = gl_xasprintf("%s/targets", r->dir);
	struct staged s = {.fd = -1};
	jv m = jv_invalid();
	if (gl_mkdir_p(tdir, 0755) < 0) {
		gl_fail_set(f, GL_E_IO, "%s: %s", tdir, strerror(errno));
		goto done;
	}
	if (stage(archive, dest, &s, f) || !jv_is_valid(m = staged_manifest(&s, archive, f)))
		goto done;
	if (s.tmp && rename(s.tmp, dest) < 0) {
		gl_fail_set(f, GL_E_IO, "%s: %s", dest, strerror(errno));
		goto done;
	}
	free(s.tmp);
	s.tmp = NULL;
	if (!gl_meta_consistent(&r->root) || !hashed_copy(r->dir, name, &s, f)) {
		jv ts = gl_json_get(r->targets.sig, "targets");
		ts = jv_object_set(ts, jv_string(name), target_entry(&s, m));
		jv o = add_record(name, &s, m);
		if (gl_pubrepo_commit(r, keys, GL_META_TARGETS, ts, e, &o, f) == GL_E_OK)
			*out = o;
		else
			jv_free(o);
	}
done:
	jv_free(m);
	staged_free(&s);
	return f->code;
}

/* Every key given signs some role (else it is a mistake worth a word). */
static void warn_unused(const struct gl_meta *root, struct gl_keys keys)
{
	jv roles = gl_json_get(root->sig, "roles");
	for (size_t i = 0; i < keys.n; i++) {
		int used = 0;
		jv_object_foreach(roles, k, v)
		{
			jv ids = gl_json_get(v, "keyids");
			jv_array_foreach(ids, j, id)
			{
				(void)j;
				used |= !strcmp(jv_string_value(id), keys.k[i].keyid);
				jv_free(id);
			}
			jv_free(ids);
			jv_free(k);
			jv_free(v);
		}
		if (!used)
			gl_warn("%s (key %s) is not a key of any role of %s; it does not sign",
				keys.k[i].path, keys.k[i].keyid, root->name);
	}
	jv_free(roles);
}

enum gl_code gl_publish_add(const char *repo, struct gl_keys keys, const char *archive,
			       const struct gl_expiry *e, jv *out, struct gl_fail *f)
{
	autofree char *copy = gl_xstrdup(archive);
	const char *name = basename(copy);
	if (!gl_tuf_target_name_ok(name))
		return gl_fail_set(f, GL_E_IO, "%s: not usable as a target file name", archive);
	struct gl_pubrepo r;
	if (gl_pubrepo_load(&r, repo, f))
		return f->code;
	warn_unused(&r.root, keys);
	add_signed(&r, keys, archive, name, e, out, f);
	gl_pubrepo_free(&r);
	return f->code;
}

enum gl_code gl_publish_minisign(const char *repo, struct gl_keys keys, const char *name,
				    jv *out, struct gl_fail *f)
{
	struct gl_pubrepo r;
	if (gl_pubrepo_load(&r, repo, f))
		return f->code;
	jv role = gl_meta_role(&r.root, "targets"), ids = gl_json_get(role, "keyids");
	const struct gl_key *k = NULL;
	for (size_t i = 0; i < keys.n && !k; i++) {
		jv_array_foreach(ids, j, id)
		{
			(void)j;
			if (!k && keys.k[i].sk && !strcmp(jv_string_value(id), keys.k[i].keyid))
				k = &keys.k[i];
			jv_free(id);
		}
	}
	jv_free(ids);
	jv_free(role);
	gl_pubrepo_free(&r);
	if (!k)
		return gl_fail_set(f, GL_E_THRESHOLD, "--minisign: no --key is a targets key");
	autofree char *file = gl_xasprintf("%s/targets/%s", repo, name);
	autofree char *sig = gl_xasprintf("%s.minisig", file);
	char pub[GL_MINISIGN_PUBKEY_LEN];
	if (gl_minisign_write(k, file, sig, f) || gl_minisign_pubkey(k, pub, sizeof pub, f) < 0)
		return f->code ? f->code : gl_fail_set(f, GL_E_IO, "minisign public key");
	*out = jv_object_set(*out, jv_string("minisig"), jv_string(sig));
	*out = jv_object_set(*out, jv_string("minisign_pubkey"), jv_string(pub));
	return GL_E_OK;
}

enum gl_code gl_publish_remove(const char *repo, struct gl_keys keys, const char *target,
				  const struct gl_expiry *e, jv *out, struct gl_fail *f)
{
	struct gl_pubrepo r;
	if (gl_pubrepo_load(&r, repo, f))
		return f->code;
	warn_unused(&r.root, keys);
	jv ts = gl_json_get(r.targets.sig, "targets");
	if (!jv_object_has(jv_copy(ts), jv_string(target))) {
		jv_free(ts);
		gl_fail_set(f, GL_E_IO, "%s/targets.json lists no target \"%s\"", repo, target);
	} else {
		jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
		o = jv_object_set(o, jv_string("removed"), jv_string(target));
		ts = jv_object_delete(ts, jv_string(target));
		if (gl_pubrepo_commit(&r, keys, GL_META_TARGETS, ts, e, &o, f) == GL_E_OK) {
			autofree char *plain = gl_xasprintf("%s/targets/%s", repo, target);
			if (gl_tuf_target_path_ok(target) && unlink(plain) < 0 && errno != ENOENT)
				gl_warn_errno("%s", plain);
			*out = o;
		} else {
			jv_free(o);
		}
	}
	gl_pubrepo_free(&r);
	return f->code;
}

/* ---- pack -------------------------------------------------------------- */

enum gl_code gl_publish_pack(const char *src_dir, const char *out_path, jv *out,
				struct gl_fail *f)
{
	if (gl_archive_pack(src_dir, out_path, f) != GL_E_OK)
		return f->code;
	struct staged s = {.fd = -1};
	if (hash_copy(out_path, -1, &s, f) == GL_E_OK) {
		jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
		o = jv_object_set(o, jv_string("archive"), jv_string(out_path));
		o = jv_object_set(o, jv_string("length"), jv_number((double)s.len));
		*out = jv_object_set(o, jv_string("sha256"), jv_string(s.sha));
	}
	return f->code;
}
