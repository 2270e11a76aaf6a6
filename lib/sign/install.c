/* install.c — verify and install one release; see install.h. */
#define _GNU_SOURCE
#include "sign/install.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sha.h"
#include "sign/archive.h"
#include "json/json.h"
#include "release/manifest.h"
#include "sign/repo.h"
#include "sign/trust.h"
#include "sign/tuf_client.h"

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

struct hasher {
	struct gl_sha256 s256;
	struct gl_sha512 s512;
	int copy_fd, want512; /* SHA-512 only when targets.json lists one */
	const char *name;
};

static int hash_sink(void *ctx, const void *data, size_t len, struct gl_fail *f)
{
	struct hasher *h = ctx;
	gl_sha256_update(&h->s256, data, len);
	if (h->want512)
		gl_sha512_update(&h->s512, data, len);
	if (h->copy_fd >= 0 && gl_write_all(h->copy_fd, data, len) < 0)
		return gl_fail_set(f, GL_E_IO, "copying %s: %s", h->name, strerror(errno)), -1;
	return 0;
}

/* TUF §5.7.3: stream the target (at most its signed length and one byte
 * more), writing it to copy_fd when >= 0; then its length, then every
 * hash targets.json lists that this host supports (sha256, sha512; at least
 * one). sha (out) is its SHA-256, the release's identity. */
static enum gl_code fetch(const char *repo, const char *rel, int64_t want, jv hashes,
			     int copy_fd, char sha[65], struct gl_fail *f)
{
	autofree char *name = gl_repo_name(repo, rel);
	struct hasher h = {.copy_fd = copy_fd,
			   .want512 = gl_json_get_str(hashes, "sha512") != NULL,
			   .name = name};
	gl_sha256_init(&h.s256);
	gl_sha512_init(&h.s512);
	uint64_t total;
	int more;
	if (gl_repo_stream(repo, rel, (uint64_t)want, hash_sink, &h, &total, &more, f))
		return f->code;
	if (more)
		return gl_fail_set(f, GL_E_LENGTH, "%s: longer than the %lld bytes targets.json says",
				   name, (long long)want);
	if (total < (uint64_t)want)
		return gl_fail_set(f, GL_E_LENGTH, "%s: %llu bytes, but targets.json says %lld", name,
				   (unsigned long long)total, (long long)want);
	unsigned char d256[GL_SHA256_BYTES], d512[GL_SHA512_BYTES];
	char hex512[129];
	gl_sha256_final(&h.s256, d256);
	gl_sha512_final(&h.s512, d512);
	gl_hex(d256, sizeof d256, sha);
	gl_hex(d512, sizeof d512, hex512);
	static const char *const algs[] = {"sha256", "sha512"}, *const names[] = {"SHA-256",
										   "SHA-512"};
	const char *have[] = {sha, hex512};
	int checked = 0;
	for (int i = 0; i < 2; i++) {
		const char *w = gl_json_get_str(hashes, algs[i]);
		if (!w)
			continue;
		if (strcasecmp(w, have[i]) && !gl_tuf_check_off("hash"))
			return gl_fail_set(f, GL_E_HASH, "%s: %s is %s, but targets.json says %.128s",
					   name, names[i], have[i], w);
		checked++;
	}
	if (!checked)
		return gl_fail_set(f, GL_E_UNSUPPORTED,
				   "%s: targets.json lists no hash this host supports (sha256, "
				   "sha512)",
				   name);
	return GL_E_OK;
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
		gl_fail_set(f, GL_E_BAD_MANIFEST, "%s: manifest.json: %s", target,
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
static enum gl_code extract(int fd, const char *dest, const char *target, jv *files,
			       struct gl_fail *f)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return gl_fail_set(f, GL_E_IO, "rewinding the copy of %s: %s", target,
				   strerror(errno));
	struct gl_archive_limits lim;
	if (gl_archive_limits_env(&lim, f) < 0)
		return f->code; /* a usage error: exit 2, the line as it was (SPEC §2) */
	*files = jv_invalid();
	enum gl_code s = gl_archive_extract(fd, dest, &lim, files, f);
	if (s == GL_E_OK)
		return GL_E_OK;
	jv_free(*files);
	*files = jv_invalid();
	return gl_fail_set(f, s, "%s: %s", target, f->detail ? f->detail : "extraction failed");
}

struct target {
	char *name;	  /* the target path in targets.json */
	const char *repo; /* where it is read from: the repository, or NULL */
	char *rel;	  /* its path there (or the local path when repo is NULL) */
	jv entry;	  /* targets.json's entry for name */
	jv hashes;	  /* entry.hashes */
	int64_t length;
	char sha[65]; /* SHA-256 of the bytes read (after fetch) */
};

/* The file a repository serves for target path `path` (TUF §5.7.3): with
 * consistent snapshots targets/DIR/HASH.BASE, HASH its sha256 (else sha512,
 * else the first digest listed), else targets/PATH. Owned. */
static char *target_rel(const struct gl_meta *root, const char *path, jv hashes)
{
	if (!gl_meta_consistent(root))
		return gl_xasprintf("targets/%s", path);
	const char *h = gl_json_get_str(hashes, "sha256");
	if (!h)
		h = gl_json_get_str(hashes, "sha512");
	jv keys = jv_keys(jv_copy(hashes));
	jv first = jv_array_get(jv_copy(keys), 0);
	autofree char *any = jv_is_valid(first) ? gl_json_get_str(hashes, jv_string_value(first))
						      ? gl_xstrdup(gl_json_get_str(
							    hashes, jv_string_value(first)))
						      : NULL
					    : NULL;
	jv_free(first);
	jv_free(keys);
	if (!h)
		h = any;
	const char *slash = strrchr(path, '/');
	if (!slash)
		return gl_xasprintf("targets/%s.%s", h, path);
	return gl_xasprintf("targets/%.*s/%s.%s", (int)(slash - path), path, h, slash + 1);
}

/* FILE: a target path listed in targets.json (or by a role it delegates
 * to), read from the repository; else an existing local path containing '/'
 * whose basename is the target name. */
static enum gl_code pick_target(const char *repo, const char *file, struct gl_publisher *p,
				   int64_t now, struct target *tg, jv *signers, struct gl_fail *f)
{
	const struct gl_meta *t = &p->targets;
	jv all = gl_json_get(t->sig, "targets");
	jv e = gl_json_get(all, file);
	if (!jv_is_valid(e) && gl_tuf_target_path_ok(file)) {
		jv_free(e);
		if (gl_tuf_find_delegated(p, repo, now, file, &e, signers, f)) {
			jv_free(all);
			return f->code;
		}
	}
	int local = !jv_is_valid(e) && strchr(file, '/') && access(file, F_OK) == 0;
	autofree char *copy = gl_xstrdup(file);
	tg->name = gl_xstrdup(local ? basename(copy) : file);
	if (local) {
		jv_free(e);
		e = gl_json_get(all, tg->name);
	}
	jv_free(all);
	tg->entry = e;
	if (!jv_is_valid(tg->entry))
		return gl_fail_set(f, GL_E_BAD_SIGNATURE,
				   "%s: lists no target named \"%s\" (no signature covers it)",
				   t->name, tg->name);
	if (!gl_tuf_target_path_ok(tg->name))
		return gl_fail_set(f, GL_E_BAD_METADATA,
				   "%s: target path \"%s\" is not safe to install (absolute, an "
				   "empty, \".\" or \"..\" segment, or a control character)",
				   t->name, tg->name);
	tg->hashes = gl_json_get(tg->entry, "hashes");
	gl_json_get_int(tg->entry, "length", &tg->length);
	tg->repo = local ? NULL : repo;
	tg->rel = local ? gl_xstrdup(file) : target_rel(&p->root, tg->name, tg->hashes);
	return GL_E_OK;
}

/* Install the verified bytes (copy_fd) as releases/<sha>, unless done before.
 * Borrows signers. */
static enum gl_code place(const char *rel, const struct target *tg, jv signers, int copy_fd,
			     jv *record, struct gl_fail *f)
{
	autofree char *dest = gl_xasprintf("%s/%s", rel, tg->sha);
	autofree char *rec = gl_xasprintf("%s/%s.json", rel, tg->sha);
	jv files = jv_invalid();
	if (copy_fd >= 0 && access(dest, F_OK) == 0 && access(rec, F_OK) == 0)
		copy_fd = -1; /* installed before under the same SHA-256 */
	if (copy_fd >= 0) {
		if (access(dest, F_OK) == 0 && gl_rm_rf(dest) < 0) /* a torn earlier install */
			return gl_fail_set(f, GL_E_IO, "%s: %s", dest, strerror(errno));
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
		return GL_E_OK;
	autobuf struct gl_buf b = {0};
	jv full = jv_object_set(jv_copy(*record), jv_string("files"), files);
	gl_json_dump(&b, full);
	jv_free(full);
	if (gl_atomic_write(rec, b.data, b.len, 0644) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", rec, strerror(errno));
	return GL_E_OK;
}

/* Fetch (length, hashes) and place the target named by tg. Borrows signers. */
static enum gl_code fetch_and_place(const char *home, struct target *tg, jv signers,
				       jv *record, struct gl_fail *f)
{
	autofree char *rel = gl_xasprintf("%s/releases", home);
	if (gl_mkdir_p(rel, 0755) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", rel, strerror(errno));
	/* Installed before: re-verify the bytes, keep the tree. */
	const char *sha = gl_json_get_str(tg->hashes, "sha256");
	autofree char *dest = sha ? gl_xasprintf("%s/%.64s", rel, sha) : NULL;
	autofree char *rec = sha ? gl_xasprintf("%s/%.64s.json", rel, sha) : NULL;
	int installed = sha && strlen(sha) == 64 && strspn(sha, "0123456789abcdef") == 64 &&
			access(dest, F_OK) == 0 && access(rec, F_OK) == 0;
	autoclose int copy_fd = installed ? -1 : private_copy_fd(rel);
	if (!installed && copy_fd < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", rel, strerror(errno));
	if (fetch(tg->repo, tg->rel, tg->length, tg->hashes, copy_fd, tg->sha, f))
		return f->code;
	return place(rel, tg, signers, copy_fd, record, f);
}

enum gl_code gl_install(const char *home, const char *repo, const char *file, int64_t now,
			   jv *record, struct gl_fail *f)
{
	autopublisher struct gl_publisher p = {.lock_fd = -1};
	jv signers = jv_invalid();
	struct target tg = {.entry = jv_invalid(), .hashes = jv_invalid()};
	/* TUF §5.2-5.7: pinned root, root chain, timestamp, snapshot, targets,
	 * then the target itself. */
	if (!gl_trust_find(home, repo, &p, f) && !gl_trust_refresh_root(&p, repo, now, f) &&
	    !gl_tuf_update(&p, repo, now, &signers, f) &&
	    !pick_target(repo, file, &p, now, &tg, &signers, f))
		fetch_and_place(home, &tg, signers, record, f);
	jv_free(signers);
	jv_free(tg.entry);
	jv_free(tg.hashes);
	free(tg.name);
	free(tg.rel);
	return f->code;
}
