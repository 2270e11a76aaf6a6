/* install.c — verify and install one release; see install.h. */
#define _GNU_SOURCE
#include "install.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "json.h"
#include "manifest.h"
#include "trust.h"

#define CHUNK (256u << 10)

/* An anonymous file in dir for the private copy of the archive. */
static int private_copy_fd(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	autofree char *tmp = gl_xasprintf("%s/.incoming.XXXXXX", dir);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmp);
	return fd;
}

/* Read at most want+1 bytes of path, hashing them and (when copy_fd >= 0)
 * writing them to copy_fd; then compare length, then SHA-256. */
static enum gl_refusal fetch(const char *path, int64_t want, const char *want_sha, int copy_fd,
			     struct gl_fail *f)
{
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return gl_fail_set(f, GL_R_IO, "%s: not a regular file", path);
	crypto_hash_sha256_state h;
	crypto_hash_sha256_init(&h);
	autofree unsigned char *buf = gl_xmalloc(CHUNK);
	uint64_t total = 0, limit = (uint64_t)want + 1;
	while (total < limit) {
		size_t room = limit - total < CHUNK ? (size_t)(limit - total) : CHUNK;
		ssize_t r = read(fd, buf, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return gl_fail_set(f, GL_R_IO, "%s: %s", path, strerror(errno));
		if (r == 0)
			break;
		total += (uint64_t)r;
		crypto_hash_sha256_update(&h, buf, (unsigned long long)r);
		if (copy_fd >= 0 && gl_write_all(copy_fd, buf, (size_t)r) < 0)
			return gl_fail_set(f, GL_R_IO, "copying %s: %s", path, strerror(errno));
	}
	if (total > (uint64_t)want)
		return gl_fail_set(f, GL_R_LENGTH, "%s: longer than the %lld bytes targets.json says",
				   path, (long long)want);
	if (total < (uint64_t)want)
		return gl_fail_set(f, GL_R_LENGTH, "%s: %llu bytes, but targets.json says %lld", path,
				   (unsigned long long)total, (long long)want);
	unsigned char d[crypto_hash_sha256_BYTES];
	char hex[2 * sizeof d + 1];
	crypto_hash_sha256_final(&h, d);
	gl_hex(d, sizeof d, hex);
	if (strcmp(hex, want_sha))
		return gl_fail_set(f, GL_R_HASH, "%s: SHA-256 is %s, but targets.json says %s",
				   path, hex, want_sha);
	return GL_R_OK;
}

/* The manifest of the extracted tree (owned), or invalid with f set. The
 * signed custom name/version of targets.json are informational: the record
 * takes name and version from the manifest inside the verified archive, and
 * a mismatch is only warned about. */
static jv load_manifest(const char *dir, const char *target, jv entry, struct gl_fail *f)
{
	jv m = gl_manifest_load(dir);
	if (!jv_is_valid(m)) {
		jv msg = jv_invalid_get_msg(m);
		gl_fail_set(f, GL_R_BAD_MANIFEST, "%s: manifest.json: %s", target,
			    jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg)
							       : "missing or invalid");
		jv_free(msg);
		return jv_invalid();
	}
	jv custom = gl_json_get(entry, "custom");
	static const char *const fields[] = {"name", "version"};
	for (int i = 0; i < 2; i++) {
		const char *want = gl_json_get_str(custom, fields[i]);
		const char *have = gl_json_get_str(m, fields[i]);
		if (want && have && strcmp(want, have)) {
			autofree char *w = gl_sanitize(want, strlen(want));
			autofree char *h = gl_sanitize(have, strlen(have));
			gl_warn("%s: manifest %s \"%s\" differs from targets.json custom.%s \"%s\"",
				target, fields[i], h, fields[i], w);
		}
	}
	jv_free(custom);
	return m;
}

static jv release_record(const char *sha, const char *path, jv manifest, jv signers)
{
	jv r = jv_object_set(jv_object(), jv_string("sha256"), jv_string(sha));
	r = jv_object_set(r, jv_string("name"), gl_json_get(manifest, "name"));
	r = jv_object_set(r, jv_string("version"), gl_json_get(manifest, "version"));
	r = jv_object_set(r, jv_string("path"), jv_string(path));
	r = jv_object_set(r, jv_string("manifest"), manifest);
	return jv_object_set(r, jv_string("publisher"), signers);
}

/* Extract the verified private copy into dest (must not exist). */
static enum gl_refusal extract(int fd, const char *dest, const char *target, jv *files,
			       struct gl_fail *f)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return gl_fail_set(f, GL_R_IO, "rewinding the copy of %s: %s", target,
				   strerror(errno));
	struct gl_archive_limits lim;
	gl_archive_limits_default(&lim);
	autofree char *err = NULL;
	*files = jv_invalid();
	enum gl_archive_status s = gl_archive_extract(fd, dest, &lim, files, &err);
	if (s == GL_ARCHIVE_OK)
		return GL_R_OK;
	jv_free(*files);
	*files = jv_invalid();
	return gl_fail_set(f, s == GL_ARCHIVE_UNSAFE ? GL_R_UNSAFE_ARCHIVE : GL_R_IO, "%s: %s",
			   target, err ? err : "extraction failed");
}

struct target {
	char *name, *path;
	jv entry; /* targets.json's entry for name */
	int64_t length;
	const char *sha; /* inside entry */
};

static enum gl_refusal pick_target(const char *repo, const char *file, const struct gl_meta *t,
				   struct target *tg, struct gl_fail *f)
{
	autofree char *copy = gl_xstrdup(file);
	int is_path = strchr(file, '/') != NULL;
	tg->name = gl_xstrdup(basename(copy));
	tg->path = is_path ? gl_xstrdup(file) : gl_xasprintf("%s/targets/%s", repo, file);
	jv all = gl_json_get(t->sig, "targets");
	tg->entry = gl_json_get(all, tg->name);
	jv_free(all);
	if (!jv_is_valid(tg->entry))
		return gl_fail_set(f, GL_R_BAD_SIGNATURE,
				   "%s: lists no target named \"%s\" (no signature covers it)",
				   t->name, tg->name);
	jv h = gl_json_get(tg->entry, "hashes");
	tg->sha = gl_json_get_str(h, "sha256"); /* entry keeps it alive */
	jv_free(h);
	gl_json_get_int(tg->entry, "length", &tg->length);
	return GL_R_OK;
}

/* Install the verified bytes (copy_fd) as releases/<sha>, unless done before.
 * Borrows signers. */
static enum gl_refusal place(const char *rel, const struct target *tg, jv signers, int copy_fd,
			     jv *record, struct gl_fail *f)
{
	autofree char *dest = gl_xasprintf("%s/%s", rel, tg->sha);
	autofree char *rec = gl_xasprintf("%s/%s.json", rel, tg->sha);
	jv files = jv_invalid();
	if (copy_fd >= 0) {
		if (access(dest, F_OK) == 0 && gl_rm_rf(dest) < 0) /* a torn earlier install */
			return gl_fail_set(f, GL_R_IO, "%s: %s", dest, strerror(errno));
		if (extract(copy_fd, dest, tg->name, &files, f))
			return f->code;
	}
	jv m = load_manifest(dest, tg->name, tg->entry, f);
	if (!jv_is_valid(m)) {
		jv_free(files);
		if (copy_fd >= 0)
			gl_rm_rf(dest);
		return f->code;
	}
	char real[PATH_MAX];
	if (!realpath(dest, real))
		snprintf(real, sizeof real, "%s", dest);
	*record = release_record(tg->sha, real, m, jv_copy(signers));
	if (copy_fd < 0)
		return GL_R_OK;
	autobuf struct gl_buf b = {0};
	jv full = jv_object_set(jv_copy(*record), jv_string("files"), files);
	gl_json_dump(&b, full);
	jv_free(full);
	if (gl_atomic_write(rec, b.data, b.len, 0644) < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", rec, strerror(errno));
	return GL_R_OK;
}

/* Fetch (length, hash) and place the target named by tg. Borrows signers. */
static enum gl_refusal fetch_and_place(const char *home, const struct target *tg, jv signers,
				       jv *record, struct gl_fail *f)
{
	autofree char *rel = gl_xasprintf("%s/releases", home);
	autofree char *dest = gl_xasprintf("%s/%s", rel, tg->sha);
	autofree char *rec = gl_xasprintf("%s/%s.json", rel, tg->sha);
	if (gl_mkdir_p(rel, 0755) < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", rel, strerror(errno));
	/* Installed before: re-verify the bytes, keep the tree. */
	int installed = access(dest, F_OK) == 0 && access(rec, F_OK) == 0;
	autoclose int copy_fd = installed ? -1 : private_copy_fd(rel);
	if (!installed && copy_fd < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", rel, strerror(errno));
	if (fetch(tg->path, tg->length, tg->sha, copy_fd, f))
		return f->code;
	return place(rel, tg, signers, copy_fd, record, f);
}

enum gl_refusal gl_install(const char *home, const char *repo, const char *file, int64_t now,
			   jv *record, struct gl_fail *f)
{
	autopublisher struct gl_publisher p = {.lock_fd = -1};
	autometa struct gl_meta t = {0};
	jv signers = jv_invalid();
	struct target tg = {.entry = jv_invalid()};
	if (!gl_trust_find(home, repo, &p, f) && !gl_trust_refresh_root(&p, repo, now, f) &&
	    !gl_trust_refresh_targets(&p, repo, now, &t, &signers, f) &&
	    !pick_target(repo, file, &t, &tg, f))
		fetch_and_place(home, &tg, signers, record, f);
	jv_free(signers);
	jv_free(tg.entry);
	free(tg.name);
	free(tg.path);
	return f->code;
}
