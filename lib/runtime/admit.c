/* admit.c — a release tree checked against its install record at launch,
 * from descriptors kept open (SPEC §9; see admit.h). */
#define _GNU_SOURCE
#include "runtime/admit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha.h"
#include "json/json.h"
#include "release/manifest.h"
#include "core/util.h"

#define RECORD_MAX (64u << 20) /* bytes of an install record */
#define DEPTH_MAX 64

const char *gl_admit_binding(enum gl_admit_status s)
{
	switch (s) {
	case GL_ADMIT_OK: return "ok";
	case GL_ADMIT_NO_RECORD: return "release";
	case GL_ADMIT_TREE: return "tree";
	case GL_ADMIT_MANIFEST: return "manifest_sha256";
	case GL_ADMIT_TARGET: return "target_sha256";
	}
	return "?";
}

void gl_admit_close(struct gl_admit *a)
{
	for (size_t i = 0; i < a->n; i++) {
		if (a->f[i].fd >= 0)
			close(a->f[i].fd);
		free(a->f[i].rel);
	}
	free(a->f);
	free(a->target);
	if (a->dirfd >= 0)
		close(a->dirfd);
	memset(a, 0, sizeof *a);
	a->dirfd = -1;
}

/* A refused admission: its words in *why, code rejected; returns st. */
static enum gl_admit_status refuse(struct gl_fail *why, enum gl_admit_status st,
				   const char *fmt, ...) GL_PRINTF(3, 4);
static enum gl_admit_status refuse(struct gl_fail *why, enum gl_admit_status st,
				   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gl_fail_vset(why, GL_E_REJECTED, fmt, ap);
	va_end(ap);
	return st;
}

/* Count the non-directories under dfd (relative prefix pre) and refuse any
 * that the record (files, borrowed) does not list as a regular file. */
static enum gl_admit_status walk(int dfd, const char *pre, jv files, int depth, size_t *count,
				 struct gl_fail *why)
{
	if (depth > DEPTH_MAX)
		return refuse(why, GL_ADMIT_TREE, "release tree deeper than %d", DEPTH_MAX);
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return refuse(why, GL_ADMIT_TREE, "%s: %s", *pre ? pre : ".", strerror(errno));
	}
	rewinddir(d);
	enum gl_admit_status st = GL_ADMIT_OK;
	struct dirent *e;
	while (st == GL_ADMIT_OK && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		autofree char *rel = *pre ? gl_xasprintf("%s/%s", pre, e->d_name) : gl_xstrdup(e->d_name);
		struct stat sb;
		if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
			st = refuse(why, GL_ADMIT_TREE, "%s: %s", rel, strerror(errno));
		} else if (S_ISDIR(sb.st_mode)) {
			int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				st = refuse(why, GL_ADMIT_TREE, "%s: %s", rel, strerror(errno));
			} else {
				st = walk(sub, rel, files, depth + 1, count, why);
				close(sub);
			}
		} else {
			jv h = jv_object_get(jv_copy(files), jv_string(rel));
			bool listed = jv_get_kind(h) == JV_KIND_STRING;
			jv_free(h);
			if (!S_ISREG(sb.st_mode) || !listed) {
				autofree char *s = gl_sanitize(rel, strlen(rel));
				st = refuse(why, GL_ADMIT_TREE,
					    "%s: not in the install record (added after install)", s);
			}
			(*count)++;
		}
	}
	closedir(d);
	return st;
}

/* The entry file of a python release: ENTRY.py, else ENTRY/__init__.py. */
static char *entry_file(jv files, const char *entry)
{
	if (!entry || !*entry || strchr(entry, '/') || strlen(entry) > 255)
		return NULL;
	char *cands[2] = {gl_xasprintf("%s.py", entry), gl_xasprintf("%s/__init__.py", entry)};
	char *hit = NULL;
	for (int i = 0; i < 2; i++) {
		jv h = jv_object_get(jv_copy(files), jv_string(cands[i]));
		if (!hit && jv_get_kind(h) == JV_KIND_STRING)
			hit = gl_steal_ptr(&cands[i]);
		jv_free(h);
		free(cands[i]);
	}
	return hit;
}

/* The install record's "files" map (owned, into *files) and its digest,
 * what the receipt binds as tree_sha256. */
static enum gl_admit_status read_record(const char *rpath, jv *files, char tree_sha256[65],
					struct gl_fail *why)
{
	autofree char *buf = NULL;
	size_t len = 0;
	if (gl_read_file_capped(rpath, RECORD_MAX, &buf, &len) < 0)
		return refuse(why, GL_ADMIT_NO_RECORD, "install record %s: %s", rpath,
			      strerror(errno));
	jv rec = gl_json_parse(buf, len);
	*files = jv_get_kind(rec) == JV_KIND_OBJECT ? gl_json_get(rec, "files") : jv_invalid();
	jv_free(rec);
	if (jv_get_kind(*files) != JV_KIND_OBJECT ||
	    jv_object_length(jv_copy(*files)) > GL_ADMIT_FILES_MAX)
		return refuse(why, GL_ADMIT_NO_RECORD, "install record %s: no \"files\" map",
			      rpath);
	autobuf struct gl_buf b = {0};
	autofail struct gl_fail cf = {0};
	if (gl_canon_dump(&b, *files, &cf) < 0)
		return refuse(why, GL_ADMIT_NO_RECORD, "install record %s: %s", rpath,
			      gl_fail_detail(&cf));
	unsigned char h[32];
	gl_sha256(h, (const unsigned char *)b.data, b.len);
	gl_hex(h, 32, tree_sha256);
	return GL_ADMIT_OK;
}

/* One listed file opened beneath a->dirfd, kept open and hashed from its
 * descriptor against want (the record's hash). */
static enum gl_admit_status admit_file(struct gl_admit *a, struct gl_admit_file *f,
				       const char *want, struct gl_fail *why)
{
	bool is_manifest = !strcmp(f->rel, "manifest.json");
	bool is_target = !strcmp(f->rel, a->target);
	/* RESOLVE_BENEATH semantics by hand: no absolute path, no "..",
	 * no link followed (O_NOFOLLOW on the last component; the walk
	 * refused links everywhere in the tree). */
	struct stat sb;
	f->fd = f->rel[0] == '/' || strstr(f->rel, "..")
		    ? -1
		    : openat(a->dirfd, f->rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (f->fd < 0 || fstat(f->fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    gl_sha256_fd_hex(f->fd, f->sha256) < 0) {
		autofree char *s = gl_sanitize(f->rel, strlen(f->rel));
		return refuse(why, GL_ADMIT_TREE, "%s: missing or unreadable (%s)", s,
			      f->fd < 0 ? strerror(errno) : "not a regular file");
	}
	if (strcmp(f->sha256, want)) {
		autofree char *s = gl_sanitize(f->rel, strlen(f->rel));
		enum gl_admit_status st = is_manifest ? GL_ADMIT_MANIFEST
					  : is_target ? GL_ADMIT_TARGET
						      : GL_ADMIT_TREE;
		return refuse(why, st, "%s changed after install: SHA-256 %s, the record says %.64s",
			      s, f->sha256, want);
	}
	if (is_manifest)
		memcpy(a->manifest_sha256, f->sha256, 65);
	if (is_target)
		memcpy(a->target_sha256, f->sha256, 65);
	return GL_ADMIT_OK;
}

/* Every file the record lists, admitted in the record's order until one
 * fails; then the counts and the manifest. seen: the walk's count. */
static enum gl_admit_status admit_files(struct gl_admit *a, jv files, size_t seen,
					struct gl_fail *why)
{
	enum gl_admit_status st = GL_ADMIT_OK;
	size_t n = (size_t)jv_object_length(jv_copy(files));
	a->f = gl_xcalloc(n ? n : 1, sizeof *a->f);
	jv_object_foreach(files, k, v)
	{
		if (st == GL_ADMIT_OK) {
			struct gl_admit_file *f = &a->f[a->n++];
			f->rel = gl_xstrdup(jv_string_value(k));
			st = admit_file(a, f, jv_get_kind(v) == JV_KIND_STRING ? jv_string_value(v) : "",
					why);
		}
		jv_free(k);
		jv_free(v);
	}
	if (st == GL_ADMIT_OK && seen != n) {
		st = refuse(why, GL_ADMIT_TREE,
			    "release tree holds %zu files, the install record %zu", seen, n);
	}
	if (st == GL_ADMIT_OK && !a->manifest_sha256[0]) {
		st = refuse(why, GL_ADMIT_MANIFEST, "manifest.json is not in the install record");
	}
	return st;
}

enum gl_admit_status gl_admit_open(const char *releases_dir, const char *sha256, const char *entry,
				   struct gl_admit *a, struct gl_fail *why)
{
	memset(a, 0, sizeof *a);
	a->dirfd = -1;
	if (!gl_sha256_hex_ok(sha256, strlen(sha256)))
		return refuse(why, GL_ADMIT_NO_RECORD, "not a release SHA-256");
	autofree char *rpath = gl_xasprintf("%s/%s.json", releases_dir, sha256);
	jv files = jv_invalid();
	enum gl_admit_status st = read_record(rpath, &files, a->tree_sha256, why);
	if (st != GL_ADMIT_OK) {
		jv_free(files);
		return st;
	}
	autofree char *dpath = gl_xasprintf("%s/%s", releases_dir, sha256);
	a->dirfd = open(dpath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	size_t seen = 0;
	if (a->dirfd < 0) {
		st = refuse(why, GL_ADMIT_NO_RECORD, "%s: %s", dpath, strerror(errno));
	} else if (!(a->target = entry_file(files, entry))) {
		st = refuse(why, GL_ADMIT_TARGET,
			    "the entry module has no file in the install record");
	} else if ((st = walk(a->dirfd, "", files, 0, &seen, why)) == GL_ADMIT_OK) {
		st = admit_files(a, files, seen, why);
	}
	jv_free(files);
	if (st != GL_ADMIT_OK)
		gl_admit_close(a);
	return st;
}

enum gl_admit_status gl_admit_recheck(const struct gl_admit *a, struct gl_fail *why)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct gl_admit_file *f = &a->f[i];
		struct stat held, now;
		char h[65];
		bool same = fstat(f->fd, &held) == 0 &&
			    fstatat(a->dirfd, f->rel, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
			    held.st_dev == now.st_dev && held.st_ino == now.st_ino;
		if (!same || gl_sha256_fd_hex(f->fd, h) < 0 || strcmp(h, f->sha256)) {
			autofree char *s = gl_sanitize(f->rel, strlen(f->rel));
			gl_fail_set(why, GL_E_REJECTED, "%s changed during the launch (%s)", s,
				    same ? "its bytes differ" : "the path names another file now");
			return !strcmp(f->rel, "manifest.json") ? GL_ADMIT_MANIFEST
			       : !strcmp(f->rel, a->target)     ? GL_ADMIT_TARGET
								: GL_ADMIT_TREE;
		}
	}
	return GL_ADMIT_OK;
}
