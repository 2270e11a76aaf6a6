/* replay_release.c — the release a witness names, found and verified
 * before anything of it runs (SPEC §7 --release FILE|DIR, or the installed
 * tree; paper §IV-F: the auditor replays the release the witness names,
 * byte for byte, or nothing). Used by lib/replay/replay.c. */
#define _GNU_SOURCE
#include "replay/replay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sha.h"
#include "sign/archive.h"
#include "json/json.h"
#include "release/manifest.h"

#define RELEASE_RECORD_MAX (64u << 20) /* bytes of GL_HOME/releases/<sha>.json */
#define TREE_DEPTH_MAX 64

static int hash_fd(int fd, unsigned char out[32], int copy_to)
{
	struct gl_sha256 h;
	gl_sha256_init(&h);
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		gl_sha256_update(&h, (unsigned char *)buf, n);
		if (copy_to >= 0 && gl_write_all(copy_to, buf, (size_t)n) < 0)
			return -1;
	}
	gl_sha256_final(&h, out);
	return 0;
}

int gl_replay_make_tmp(struct gl_replay *x, struct gl_fail *f)
{
	if (x->tmp)
		return 0;
	const char *t = getenv("TMPDIR");
	char *p = gl_xasprintf("%s/gl-replay.XXXXXX", t && *t == '/' ? t : "/tmp");
	if (!mkdtemp(p)) {
		gl_fail_errno(f, GL_E_IO, "%s", p);
		free(p);
		return -1;
	}
	x->tmp = p;
	return 0;
}

/* --release: a private copy of the archive is hashed as it is written, and
 * only that copy is extracted (the bytes extracted are the bytes hashed),
 * once, when a witness names its hash. 0, or -1 with f (hash,
 * unsafe_archive, io). */
static int verify_archive(struct gl_replay *x, const char *want, struct gl_fail *f)
{
	if (gl_replay_make_tmp(x, f) < 0)
		return -1;
	autofree char *copy = gl_xasprintf("%s/release.tar.gz", x->tmp);
	if (!x->archive_sha[0]) {
		unlink(copy); /* a previous witness's release */
		autoclose int in = open(x->archive, O_RDONLY | O_CLOEXEC);
		autoclose int out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		unsigned char h[32];
		if (in < 0 || out < 0 || hash_fd(in, h, out) < 0)
			return gl_fail_errno(f, GL_E_IO, "%s", x->archive);
		gl_hex(h, 32, x->archive_sha);
	}
	if (strcmp(want, x->archive_sha))
		return gl_fail(f, GL_E_HASH,
			       "the release archive's SHA-256 %s is not the witness's release %s",
			       x->archive_sha, want);
	autofree char *dest = gl_xasprintf("%s/%s", x->tmp, x->archive_sha);
	if (access(dest, F_OK) == 0)
		return 0;
	autoclose int fd = open(copy, O_RDONLY | O_CLOEXEC);
	struct gl_archive_limits lim;
	gl_archive_limits_default(&lim);
	jv files = jv_invalid();
	autofail struct gl_fail why = {0};
	enum gl_code st = fd < 0 ? GL_E_IO : gl_archive_extract(fd, dest, &lim, &files, &why);
	if (st == GL_E_OK) {
		/* the install record an exec launch verifies the tree against */
		autofree char *rec = gl_xasprintf("%s.json", dest);
		autobuf struct gl_buf b = {0};
		jv rj = JV_OBJECT(jv_string("files"), files);
		gl_json_dump(&b, rj);
		jv_free(rj);
		if (gl_atomic_write(rec, b.data, b.len, 0600) < 0)
			return gl_fail_errno(f, GL_E_HASH, "%s", rec); /* past the hash check */
		return 0;
	}
	jv_free(files);
	return gl_fail(f, st == GL_E_UNSAFE_ARCHIVE ? GL_E_UNSAFE_ARCHIVE : GL_E_IO, "%s: %s",
		       x->archive, why.detail ? why.detail : strerror(errno));
}

/* --release DIR (SPEC §7): the regular file "*.tar.gz" in DIR whose SHA-256
 * is the witness's release becomes the archive to verify and extract; a
 * directory of downloads or a publisher's targets/ works as it is. At most
 * GL_REPLAY_DIR_MAX candidates are hashed. 0, or -1 with f (hash). */
#define GL_REPLAY_DIR_MAX 4096
static int pick_archive(struct gl_replay *x, const char *want, struct gl_fail *f)
{
	DIR *d = opendir(x->archive_dir);
	if (!d)
		return gl_fail_errno(f, GL_E_HASH, "%s", x->archive_dir);
	struct dirent *e;
	int seen = 0, rc = -1;
	while ((e = readdir(d)) && seen < GL_REPLAY_DIR_MAX) {
		size_t n = strlen(e->d_name);
		if (n < 8 || strcmp(e->d_name + n - 7, ".tar.gz"))
			continue;
		seen++;
		autoclose int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct stat st;
		unsigned char h[32];
		char hex[65];
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || hash_fd(fd, h, -1) < 0)
			continue;
		gl_hex(h, 32, hex);
		if (strcmp(hex, want))
			continue;
		free(x->found);
		x->found = gl_xasprintf("%s/%s", x->archive_dir, e->d_name);
		x->archive = x->found;
		x->archive_sha[0] = 0;
		rc = 0;
		break;
	}
	closedir(d);
	if (rc < 0)
		gl_fail(f, GL_E_HASH, "%s: no release archive (*.tar.gz) with SHA-256 %s",
			x->archive_dir, want);
	return rc;
}

/* The installed tree against its recorded per-file hashes: every regular
 * file recorded and unchanged, none missing, links staying inside. 0, or
 * -1 with f (hash). */
static int walk(int dfd, const char *rel, const char *root, jv files, size_t *seen, int depth,
		struct gl_fail *f)
{
	if (depth > TREE_DEPTH_MAX)
		return gl_fail(f, GL_E_HASH, "%s: deeper than %d directories", rel, TREE_DEPTH_MAX);
	DIR *d = fdopendir(dfd);
	if (!d)
		return gl_fail_errno(f, GL_E_HASH, "%s", rel);
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		autofree char *p = *rel ? gl_xasprintf("%s/%s", rel, e->d_name)
					: gl_xstrdup(e->d_name);
		autofree char *q = gl_quote(p, strlen(p));
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = gl_fail_errno(f, GL_E_HASH, "%s", q);
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC);
			rc = sub < 0 ? gl_fail_errno(f, GL_E_HASH, "%s", q)
				     : walk(sub, p, root, files, seen, depth + 1, f);
		} else if (S_ISREG(st.st_mode)) {
			const char *want = gl_json_get_str(files, p);
			autoclose int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			unsigned char h[32];
			char hex[65];
			if (!want)
				rc = gl_fail(f, GL_E_HASH, "%s: a file the release did not install",
					     q);
			else if (fd < 0 || hash_fd(fd, h, -1) < 0)
				rc = gl_fail_errno(f, GL_E_HASH, "%s", q);
			else if (gl_hex(h, 32, hex), strcmp(hex, want))
				rc = gl_fail(f, GL_E_HASH,
					     "%s: changed since install (SHA-256 %s, recorded %s)",
					     q, hex, want);
			else
				(*seen)++;
		} else if (S_ISLNK(st.st_mode)) {
			autofree char *full = gl_xasprintf("%s/%s", root, p);
			char real[PATH_MAX];
			size_t rl = strlen(root);
			if (!realpath(full, real) || strncmp(real, root, rl) || real[rl] != '/')
				rc = gl_fail(f, GL_E_HASH, "%s: a link leaving the release tree",
					     q);
		} else {
			rc = gl_fail(f, GL_E_HASH, "%s: neither a file, a directory nor a link", q);
		}
	}
	closedir(d);
	return rc;
}

/* 0, or -1 with f (hash; the caller says unknown_release for a release
 * without an install record). */
static int verify_installed(struct gl_replay *x, const char *sha, struct gl_fail *f)
{
	autofree char *dir = gl_xasprintf("%s/releases/%s", x->home, sha);
	autofree char *recp = gl_xasprintf("%s.json", dir);
	autofree char *buf = NULL;
	size_t len = 0;
	if (gl_read_file_capped(recp, RELEASE_RECORD_MAX, &buf, &len) < 0)
		return gl_fail(f, GL_E_HASH, "release %s is not installed (%s: %s)", sha, recp,
			       strerror(errno));
	jv rec = gl_json_parse(buf, len);
	jv files = jv_get_kind(rec) == JV_KIND_OBJECT ? gl_json_get(rec, "files") : jv_invalid();
	jv_free(rec);
	if (jv_get_kind(files) != JV_KIND_OBJECT) {
		jv_free(files);
		return gl_fail(f, GL_E_HASH, "%s: no \"files\" map of per-file hashes", recp);
	}
	char root[PATH_MAX];
	int dfd = realpath(dir, root) ? open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				      : -1;
	size_t seen = 0;
	int rc = dfd < 0 ? gl_fail_errno(f, GL_E_HASH, "%s", dir)
			 : walk(dfd, "", root, files, &seen, 0, f);
	if (rc == 0 && seen != (size_t)jv_object_length(jv_copy(files)))
		rc = gl_fail(f, GL_E_HASH, "%zu of the %d recorded files are missing",
			     (size_t)jv_object_length(jv_copy(files)) - seen,
			     jv_object_length(jv_copy(files)));
	jv_free(files);
	return rc;
}

/* The release sha's bytes, verified before anything of it runs: the
 * archive --release names (or the one in --release DIR whose SHA-256 is
 * sha), hashed as copied and extracted once; else the installed tree
 * against its install record. Sets x->release_dir. */
int gl_replay_release_verify(struct gl_replay *x, const char *sha, struct gl_fail *f)
{
	if (x->archive_dir && pick_archive(x, sha, f) < 0)
		return -1;
	if (x->archive) {
		if (verify_archive(x, sha, f) < 0)
			return -1;
	} else if (verify_installed(x, sha, f) < 0) {
		autofree char *rec = gl_xasprintf("%s/releases/%s.json", x->home, sha);
		if (access(rec, F_OK) < 0)
			f->code = GL_E_UNKNOWN_RELEASE;
		return -1;
	}
	x->release_dir = x->archive ? gl_xasprintf("%s/%s", x->tmp, sha)
				    : gl_xasprintf("%s/releases/%s", x->home, sha);
	return 0;
}
