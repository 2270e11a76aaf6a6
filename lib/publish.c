/* publish.c — gl-sign init|add|rotate over a repository; see publish.h. */
#define _GNU_SOURCE
#include "publish.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "json.h"
#include "manifest.h"
#include "tuf.h"

#define CHUNK (256u << 10)

/* ---- helpers ----------------------------------------------------------- */

static size_t distinct(struct gl_keys ks, int need_secret)
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

/* The keys of ks (with secrets) that role lists, into out (caller frees
 * out->k, a shallow copy); warns about the others. Borrows role. */
static void authorised(struct gl_keys ks, jv role, const char *what, struct gl_keys *out)
{
	struct gl_key *a = gl_xcalloc(ks.n, sizeof *a);
	size_t n = 0;
	for (size_t i = 0; i < ks.n; i++) {
		if (role_has(role, ks.k[i].keyid) && ks.k[i].sk)
			a[n++] = ks.k[i];
		else
			gl_warn("%s (key %s) is not a signing key of the %s; it does not sign",
				ks.k[i].path, ks.k[i].keyid, what);
	}
	out->k = a;
	out->n = n;
}

static int64_t role_threshold(jv role)
{
	int64_t t = 0;
	gl_json_get_int(role, "threshold", &t);
	return t;
}

static void warn_expired(const char *path, int64_t expires)
{
	if (expires > gl_now())
		return;
	char t[21];
	gl_time_format(expires, t);
	gl_warn("warning: %s is already expired (expires %s)", path, t);
}

static enum gl_refusal write_doc(const char *path, jv doc, struct gl_fail *f)
{
	autofree char *err = NULL;
	int r = gl_tuf_write(path, doc, &err);
	jv_free(doc);
	return r < 0 ? gl_fail_set(f, GL_R_IO, "%s", err) : GL_R_OK;
}

/* {"root":[…],"targets":[…]} of a root "signed" object (borrowed). */
static jv keyids_of(jv signed_)
{
	jv roles = gl_json_get(signed_, "roles"), out = jv_object();
	static const char *const names[] = {"root", "targets"};
	for (int i = 0; i < 2; i++) {
		jv r = gl_json_get(roles, names[i]);
		out = jv_object_set(out, jv_string(names[i]), gl_json_get(r, "keyids"));
		jv_free(r);
	}
	jv_free(roles);
	return out;
}

/* ---- init -------------------------------------------------------------- */

enum gl_refusal gl_publish_init(const char *repo, struct gl_keys root_keys,
				struct gl_keys targets_keys, int64_t threshold,
				int64_t root_expires, int64_t targets_expires, jv *out,
				struct gl_fail *f)
{
	if ((size_t)threshold > distinct(root_keys, 1) ||
	    (size_t)threshold > distinct(targets_keys, 1))
		return gl_fail_set(f, GL_R_IO,
				   "--threshold %lld exceeds the distinct signing keys given "
				   "(root %zu, targets %zu)",
				   (long long)threshold, distinct(root_keys, 1),
				   distinct(targets_keys, 1));
	autofree char *rootp = gl_xasprintf("%s/root.json", repo);
	autofree char *root1 = gl_xasprintf("%s/1.root.json", repo);
	autofree char *tp = gl_xasprintf("%s/targets.json", repo);
	autofree char *tdir = gl_xasprintf("%s/targets", repo);
	if (access(rootp, F_OK) == 0 || access(root1, F_OK) == 0)
		return gl_fail_set(f, GL_R_IO, "%s: already initialised (root.json exists)", repo);
	if (gl_mkdir_p(tdir, 0755) < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", tdir, strerror(errno));
	jv keys = gl_tuf_keys_add(jv_object(), root_keys.k, root_keys.n);
	keys = gl_tuf_keys_add(keys, targets_keys.k, targets_keys.n);
	jv rs = gl_tuf_root_signed(1, root_expires, keys,
				   gl_tuf_role(root_keys.k, root_keys.n, threshold),
				   gl_tuf_role(targets_keys.k, targets_keys.n, threshold));
	jv ids = keyids_of(rs);
	jv root = gl_tuf_sign(rs, root_keys.k, root_keys.n);
	jv targets = gl_tuf_sign(gl_tuf_targets_signed(1, targets_expires, jv_object()),
				 targets_keys.k, targets_keys.n);
	warn_expired(rootp, root_expires);
	warn_expired(tp, targets_expires);
	enum gl_refusal r = write_doc(root1, jv_copy(root), f);
	if (r == GL_R_OK)
		r = write_doc(rootp, jv_copy(root), f);
	if (r == GL_R_OK)
		r = write_doc(tp, jv_copy(targets), f);
	jv_free(root);
	jv_free(targets);
	if (r != GL_R_OK) {
		jv_free(ids);
		return r;
	}
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	o = jv_object_set(o, jv_string("repo"), jv_string(repo));
	o = jv_object_set(o, jv_string("root_version"), jv_number(1));
	o = jv_object_set(o, jv_string("targets_version"), jv_number(1));
	*out = jv_object_set(o, jv_string("keyids"), ids);
	return GL_R_OK;
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
static enum gl_refusal hash_copy(const char *src, int dst_fd, struct staged *s, struct gl_fail *f)
{
	autoclose int fd = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", src, strerror(errno));
	crypto_hash_sha256_state h;
	crypto_hash_sha256_init(&h);
	autofree unsigned char *buf = gl_xmalloc(CHUNK);
	s->len = 0;
	for (;;) {
		ssize_t r = read(fd, buf, CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return gl_fail_set(f, GL_R_IO, "%s: %s", src, strerror(errno));
		if (r == 0)
			break;
		s->len += r;
		crypto_hash_sha256_update(&h, buf, (unsigned long long)r);
		if (dst_fd >= 0 && gl_write_all(dst_fd, buf, (size_t)r) < 0)
			return gl_fail_set(f, GL_R_IO, "copying %s: %s", src, strerror(errno));
	}
	unsigned char d[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_final(&h, d);
	gl_hex(d, sizeof d, s->sha);
	if (dst_fd >= 0 && fsync(dst_fd) < 0)
		return gl_fail_set(f, GL_R_IO, "copying %s: %s", src, strerror(errno));
	return GL_R_OK;
}

/* Copy archive into REPO/targets (a temporary name until commit), hashing
 * it; an archive already at REPO/targets/NAME is only hashed. */
static enum gl_refusal stage(const char *archive, const char *dest, struct staged *s,
			     struct gl_fail *f)
{
	struct stat a, b;
	if (stat(archive, &a) < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", archive, strerror(errno));
	if (!S_ISREG(a.st_mode))
		return gl_fail_set(f, GL_R_IO, "%s: not a regular file", archive);
	if (stat(dest, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		s->fd = open(dest, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0)
			return gl_fail_set(f, GL_R_IO, "%s: %s", dest, strerror(errno));
		return hash_copy(dest, -1, s, f);
	}
	s->tmp = gl_xasprintf("%s.tmp.XXXXXX", dest);
	s->fd = mkostemp(s->tmp, O_CLOEXEC);
	if (s->fd < 0 || fchmod(s->fd, 0644) < 0) {
		free(s->tmp);
		s->tmp = NULL;
		return gl_fail_set(f, GL_R_IO, "%s: %s", dest, strerror(errno));
	}
	return hash_copy(archive, s->fd, s, f);
}

/* The manifest inside the staged archive (owned), or invalid with f set. */
static jv staged_manifest(const struct staged *s, const char *archive, struct gl_fail *f)
{
	if (lseek(s->fd, 0, SEEK_SET) < 0) {
		gl_fail_set(f, GL_R_IO, "%s: %s", archive, strerror(errno));
		return jv_invalid();
	}
	autofree char *buf = NULL, *err = NULL;
	size_t len;
	enum gl_archive_status st =
	    gl_archive_read_member(s->fd, "manifest.json", GL_MANIFEST_MAX, &buf, &len, &err);
	if (st != GL_ARCHIVE_OK) {
		gl_fail_set(f, st == GL_ARCHIVE_UNSAFE ? GL_R_BAD_MANIFEST : GL_R_IO,
			    "%s: manifest.json: %s", archive, err ? err : "cannot be read");
		return jv_invalid();
	}
	jv m = gl_manifest_parse(buf, len);
	if (!jv_is_valid(m)) {
		jv msg = jv_invalid_get_msg(m);
		gl_fail_set(f, GL_R_BAD_MANIFEST, "%s: manifest.json: %s", archive,
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

static jv add_record(const char *name, const struct staged *s, jv manifest, int64_t version)
{
	jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
	o = jv_object_set(o, jv_string("target"), jv_string(name));
	o = jv_object_set(o, jv_string("length"), jv_number((double)s->len));
	o = jv_object_set(o, jv_string("sha256"), jv_string(s->sha));
	o = jv_object_set(o, jv_string("name"), gl_json_get(manifest, "name"));
	o = jv_object_set(o, jv_string("version"), gl_json_get(manifest, "version"));
	return jv_object_set(o, jv_string("targets_version"), jv_number((double)version));
}

/* Stage the archive, check its manifest, publish it under name and write
 * the new targets.json. Borrows old. */
static enum gl_refusal add_signed(const char *repo, struct gl_keys signers, const char *archive,
				  const char *name, const struct gl_meta *old, int64_t expires,
				  jv *out, struct gl_fail *f)
{
	autofree char *dest = gl_xasprintf("%s/targets/%s", repo, name);
	autofree char *tp = gl_xasprintf("%s/targets.json", repo);
	struct staged s = {.fd = -1};
	jv m = jv_invalid();
	if (stage(archive, dest, &s, f) || !jv_is_valid(m = staged_manifest(&s, archive, f)))
		goto done;
	if (s.tmp && rename(s.tmp, dest) < 0) {
		gl_fail_set(f, GL_R_IO, "%s: %s", dest, strerror(errno));
		goto done;
	}
	free(s.tmp);
	s.tmp = NULL;
	jv ts = gl_json_get(old->sig, "targets");
	ts = jv_object_set(ts, jv_string(name), target_entry(&s, m));
	jv doc =
	    gl_tuf_sign(gl_tuf_targets_signed(old->version + 1, expires, ts), signers.k, signers.n);
	warn_expired(tp, expires);
	if (write_doc(tp, doc, f) == GL_R_OK)
		*out = add_record(name, &s, m, old->version + 1);
done:
	jv_free(m);
	staged_free(&s);
	return f->code;
}

enum gl_refusal gl_publish_add(const char *repo, struct gl_keys keys, const char *archive,
			       int64_t expires, jv *out, struct gl_fail *f)
{
	autofree char *rootp = gl_xasprintf("%s/root.json", repo);
	autofree char *tp = gl_xasprintf("%s/targets.json", repo);
	autofree char *copy = gl_xstrdup(archive);
	const char *name = basename(copy);
	if (!gl_tuf_target_name_ok(name))
		return gl_fail_set(f, GL_R_IO, "%s: not usable as a target file name", archive);
	autometa struct gl_meta root = {0}, old = {0};
	if (gl_meta_load(&root, rootp, GL_META_ROOT, f) ||
	    gl_meta_load(&old, tp, GL_META_TARGETS, f))
		return f->code;
	jv role = gl_meta_role(&root, "targets");
	struct gl_keys signers;
	authorised(keys, role, "targets role", &signers);
	int64_t t = role_threshold(role);
	jv_free(role);
	size_t have = distinct(signers, 1);
	if ((int64_t)have < t)
		gl_fail_set(f, GL_R_THRESHOLD,
			    "%s: the targets role needs %lld signature(s) from distinct keys; the "
			    "keys given hold %zu of them",
			    rootp, (long long)t, have);
	else
		add_signed(repo, signers, archive, name, &old, expires, out, f);
	free((void *)signers.k);
	return f->code;
}

/* ---- rotate ------------------------------------------------------------ */

/* The new root's keys: the targets role's keys, plus new_keys. */
static jv rotated_keys(const struct gl_meta *cur, jv targets_role, struct gl_keys new_keys)
{
	jv all = gl_json_get(cur->sig, "keys"), keys = jv_object();
	jv ids = gl_json_get(targets_role, "keyids");
	jv_array_foreach(ids, i, id)
	{
		(void)i;
		keys = jv_object_set(keys, jv_copy(id), jv_object_get(jv_copy(all), jv_copy(id)));
		jv_free(id);
	}
	jv_free(ids);
	jv_free(all);
	return gl_tuf_keys_add(keys, new_keys.k, new_keys.n);
}

static enum gl_refusal rotate_checks(const char *rootp, struct gl_keys old_ok, int64_t old_t,
				     struct gl_keys new_keys, int64_t t, struct gl_fail *f)
{
	if ((int64_t)distinct(old_ok, 1) < old_t)
		return gl_fail_set(
		    f, GL_R_THRESHOLD,
		    "%s: the root role needs %lld signature(s) from distinct keys; the "
		    "--key keys hold %zu of them",
		    rootp, (long long)old_t, distinct(old_ok, 1));
	if (t < 1 || (size_t)t > distinct(new_keys, 0))
		return gl_fail_set(f, GL_R_IO,
				   "threshold %lld does not fit the %zu distinct --new-key keys "
				   "(give --threshold)",
				   (long long)t, distinct(new_keys, 0));
	if ((int64_t)distinct(new_keys, 1) < t)
		return gl_fail_set(
		    f, GL_R_THRESHOLD,
		    "the new root role needs %lld signature(s) from its own keys; the "
		    "--new-key secret keys hold %zu",
		    (long long)t, distinct(new_keys, 1));
	return GL_R_OK;
}

enum gl_refusal gl_publish_rotate(const char *repo, struct gl_keys old_keys,
				  struct gl_keys new_keys, int64_t threshold, int64_t expires,
				  jv *out, struct gl_fail *f)
{
	autofree char *rootp = gl_xasprintf("%s/root.json", repo);
	autometa struct gl_meta cur = {0};
	if (gl_meta_load(&cur, rootp, GL_META_ROOT, f))
		return f->code;
	int64_t v = cur.version + 1;
	autofree char *nextp = gl_xasprintf("%s/%lld.root.json", repo, (long long)v);
	if (access(nextp, F_OK) == 0)
		return gl_fail_set(f, GL_R_IO, "%s exists; root.json is not the newest root",
				   nextp);
	jv role = gl_meta_role(&cur, "root");
	struct gl_keys old_ok;
	authorised(old_keys, role, "current root role", &old_ok);
	int64_t old_t = role_threshold(role), t = threshold ? threshold : role_threshold(role);
	jv_free(role);
	if (rotate_checks(rootp, old_ok, old_t, new_keys, t, f) == GL_R_OK) {
		jv trole = gl_meta_role(&cur, "targets");
		jv rs = gl_tuf_root_signed(v, expires, rotated_keys(&cur, trole, new_keys),
					   gl_tuf_role(new_keys.k, new_keys.n, t), jv_copy(trole));
		jv_free(trole);
		jv ids = keyids_of(rs);
		struct gl_key *all = gl_xcalloc(old_ok.n + new_keys.n, sizeof *all);
		memcpy(all, old_ok.k, old_ok.n * sizeof *all);
		memcpy(all + old_ok.n, new_keys.k, new_keys.n * sizeof *all);
		jv doc = gl_tuf_sign(rs, all, old_ok.n + new_keys.n);
		free(all);
		warn_expired(nextp, expires);
		if (write_doc(nextp, jv_copy(doc), f) == GL_R_OK &&
		    write_doc(rootp, jv_copy(doc), f) == GL_R_OK) {
			jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
			o = jv_object_set(o, jv_string("version"), jv_number((double)v));
			*out = jv_object_set(o, jv_string("keyids"), jv_copy(ids));
		}
		jv_free(doc);
		jv_free(ids);
	}
	free((void *)old_ok.k);
	return f->code;
}

/* ---- pack -------------------------------------------------------------- */

enum gl_refusal gl_publish_pack(const char *src_dir, const char *out_path, jv *out,
				struct gl_fail *f)
{
	autofree char *err = NULL;
	enum gl_archive_status st = gl_archive_pack(src_dir, out_path, &err);
	if (st != GL_ARCHIVE_OK)
		return gl_fail_set(f, st == GL_ARCHIVE_UNSAFE ? GL_R_UNSAFE_ARCHIVE : GL_R_IO,
				   "%s: %s", src_dir, err ? err : "cannot pack");
	struct staged s = {.fd = -1};
	if (hash_copy(out_path, -1, &s, f) == GL_R_OK) {
		jv o = jv_object_set(jv_object(), jv_string("ok"), jv_true());
		o = jv_object_set(o, jv_string("archive"), jv_string(out_path));
		o = jv_object_set(o, jv_string("length"), jv_number((double)s.len));
		*out = jv_object_set(o, jv_string("sha256"), jv_string(s.sha));
	}
	return f->code;
}
