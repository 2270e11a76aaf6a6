/* archive_extract.c — safe extraction of a hostile release archive (SPEC
 * §3 `gl-verify install`).
 *
 * The archive is the adversary's (paper §III-A: the release's code, init
 * code and dependencies are hostile and know this mechanism). libarchive
 * only parses (archive.c: tar behind gzip, nothing else) and never touches
 * the filesystem (no archive_write_disk). Every entry is created here,
 * relative to a directory descriptor of a fresh temporary directory, with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
 * for its parents and O_CREAT|O_EXCL|O_NOFOLLOW for the entry itself, so
 * nothing is ever written through a link or outside. Symlinks are checked
 * once the tree is complete. What is refused and why: docs/archives.md. */
#define _GNU_SOURCE
#include "sign/archive_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sha.h"
#include "json/json.h"
#include "json/log.h"

#define XBUF (1u << 20) /* the one data buffer: memory is independent of size */
/* Directory modes while extracting: created implicitly as the parent of an
 * entry, or by a directory entry of its own. The mode is the record of which
 * (the temporary tree is private), so a second entry for one directory is a
 * duplicate while a directory entry after its children is not. */
#define DIR_IMPLICIT 0700
#define DIR_EXPLICIT 0750

struct xtract {
	struct archive *a;
	int root; /* the temporary directory */
	const struct gl_archive_limits *lim;
	uint64_t index;	    /* 1-based entry number, for messages */
	uint64_t bytes;	    /* file bytes actually decompressed */
	const char *raw;    /* the entry's path as the archive has it */
	unsigned char *buf; /* XBUF bytes */
	jv files;
	struct gl_fail *f; /* the caller's, filled on refusal */
};

/* Refuse the current entry: 'entry 3 "../evil": <why>'. */
static enum gl_code refuse(struct xtract *x, const char *fmt, ...) GL_PRINTF(2, 3);
static enum gl_code refuse(struct xtract *x, const char *fmt, ...)
{
	autofree char *why = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	autofree char *shown = gl_sanitize(x->raw, strlen(x->raw));
	return gl_fail_set(x->f, GL_E_UNSAFE_ARCHIVE, "entry %llu \"%s\": %s",
			   (unsigned long long)x->index, shown, why);
}

/* An errno from creating an entry: the archive's fault, or the host's. */
static enum gl_code create_error(struct xtract *x, int e, const char *what)
{
	switch (e) {
	case EEXIST:
		return refuse(x, "duplicate entry");
	case ELOOP:
		return refuse(x, "path goes through a symbolic link");
	case EXDEV:
		return refuse(x, "path leaves the release directory");
	case ENOTDIR:
		return refuse(x, "a parent of the path is not a directory");
	case ENAMETOOLONG:
		return refuse(x, "a path component is too long");
	default: {
		autofree char *shown = gl_sanitize(x->raw, strlen(x->raw));
		return gl_fail_set(x->f, GL_E_IO, "entry %llu \"%s\": %s: %s",
				   (unsigned long long)x->index, shown, what, strerror(e));
	}
	}
}

/* Open (creating as needed) the parent directory of path, never following
 * a link. *pfd is an O_PATH descriptor, or x->root itself for a top-level
 * entry (the caller must then not close it). */
static enum gl_code open_parent(struct xtract *x, char *path, int *pfd, char **base)
{
	char *slash = strrchr(path, '/');
	if (!slash) {
		*pfd = x->root;
		*base = path;
		return GL_E_OK;
	}
	*slash = 0;
	*base = slash + 1;
	int fd = gl_ar_openat2(x->root, path, O_PATH | O_DIRECTORY, 0, GL_AR_RES_STRICT);
	if (fd < 0 && errno == ENOENT) {
		/* Some component is missing: walk and create one at a time. */
		fd = gl_ar_openat2(x->root, ".", O_PATH | O_DIRECTORY, 0, GL_AR_RES_STRICT);
		for (char *c = path; fd >= 0 && c;) {
			char *next = strchr(c, '/');
			if (next)
				*next = 0;
			int sub = gl_ar_openat2(fd, c, O_PATH | O_DIRECTORY, 0, GL_AR_RES_STRICT);
			if (sub < 0 && errno == ENOENT) {
				if (mkdirat(fd, c, DIR_IMPLICIT) < 0 ||
				    fchmodat(fd, c, DIR_IMPLICIT, 0) < 0)
					sub = -1;
				else
					sub = gl_ar_openat2(fd, c, O_PATH | O_DIRECTORY, 0,
							    GL_AR_RES_STRICT);
			}
			int e = errno;
			close(fd);
			errno = e;
			fd = sub;
			if (next)
				*next = '/';
			c = next ? next + 1 : NULL;
		}
	}
	*slash = '/';
	if (fd < 0)
		return create_error(x, errno, "parent directory");
	*pfd = fd;
	return GL_E_OK;
}

static enum gl_code put_file(struct xtract *x, int pfd, const char *base,
			     const char *path, mode_t perm)
{
	autoclose int fd = gl_ar_openat2(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600,
					 GL_AR_RES_STRICT);
	if (fd < 0)
		return create_error(x, errno, "create");
	struct gl_sha256 h;
	gl_sha256_init(&h);
	for (;;) {
		la_ssize_t n = archive_read_data(x->a, x->buf, XBUF);
		if (n == 0)
			break;
		if (n < 0) {
			const char *m = archive_error_string(x->a);
			autofree char *shown = gl_sanitize(m ? m : "?", m ? strlen(m) : 1);
			return refuse(x, "malformed data: %s", shown);
		}
		/* Count what was decompressed, not what the header claims. */
		if ((uint64_t)n > x->lim->max_bytes - x->bytes)
			return refuse(x, "decompressed size past the bound of %llu bytes in total",
				      (unsigned long long)x->lim->max_bytes);
		x->bytes += (uint64_t)n;
		gl_sha256_update(&h, x->buf, n);
		if (gl_write_all(fd, x->buf, (size_t)n) < 0)
			return create_error(x, errno, "write");
	}
	/* Owner-exec decides 0555 against 0444; setuid/setgid/sticky dropped. */
	if (fchmod(fd, (perm & S_IXUSR) ? 0555 : 0444) < 0 || close(gl_steal_fd(&fd)) < 0)
		return create_error(x, errno, "write");
	unsigned char md[GL_SHA256_BYTES];
	char hex[2 * GL_SHA256_BYTES + 1];
	gl_sha256_final(&h, md);
	gl_hex(md, sizeof md, hex);
	x->files = jv_object_set(x->files, jv_string(path), jv_string(hex));
	return GL_E_OK;
}

static enum gl_code put_dir(struct xtract *x, int pfd, const char *base)
{
	if (mkdirat(pfd, base, DIR_EXPLICIT) == 0)
		return fchmodat(pfd, base, DIR_EXPLICIT, 0) < 0 ? create_error(x, errno, "chmod")
								: GL_E_OK;
	if (errno != EEXIST)
		return create_error(x, errno, "mkdir");
	struct stat st;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return create_error(x, errno, "stat");
	if (!S_ISDIR(st.st_mode) || (st.st_mode & 07777) != DIR_IMPLICIT)
		return refuse(x, "duplicate entry");
	if (fchmodat(pfd, base, DIR_EXPLICIT, 0) < 0)
		return create_error(x, errno, "chmod");
	return GL_E_OK;
}

static enum gl_code put_symlink(struct xtract *x, int pfd, const char *base, const char *target)
{
	if (!target || !*target)
		return refuse(x, "symbolic link without a target");
	if (strlen(target) > GL_ARCHIVE_MAX_PATH)
		return refuse(x, "symbolic link target longer than %d bytes", GL_ARCHIVE_MAX_PATH);
	if (target[0] == '/')
		return refuse(x, "symbolic link to an absolute path");
	/* Where it points is checked once the whole tree exists (seal). */
	if (symlinkat(target, pfd, base) < 0)
		return create_error(x, errno, "symlink");
	return GL_E_OK;
}

static enum gl_code put_entry(struct xtract *x, struct archive_entry *e, int *root_seen)
{
	char path[GL_ARCHIVE_MAX_PATH + 1];
	x->raw = archive_entry_pathname(e);
	if (!x->raw)
		x->raw = "";
	const char *why = gl_ar_normalise(x->raw, path);
	if (why)
		return refuse(x, "%s", why);
	if (archive_entry_hardlink(e)) {
		const char *t = archive_entry_hardlink(e);
		autofree char *shown = gl_sanitize(t, strlen(t));
		return refuse(x, "hard link to \"%s\" (hard links are refused)", shown);
	}
	mode_t type = archive_entry_filetype(e);
	switch (type) {
	case AE_IFREG:
	case AE_IFDIR:
	case AE_IFLNK:
		break;
	case AE_IFCHR:
		return refuse(x, "character device");
	case AE_IFBLK:
		return refuse(x, "block device");
	case AE_IFIFO:
		return refuse(x, "fifo");
	case AE_IFSOCK:
		return refuse(x, "socket");
	default:
		return refuse(x, "entry of unknown type %#o", (unsigned)type);
	}
	if (!*path) {
		/* "./" — the root itself, as `tar -C dir .` writes it. */
		if (type != AE_IFDIR)
			return refuse(x, "empty path");
		return (*root_seen)++ ? refuse(x, "duplicate entry") : GL_E_OK;
	}
	/* A fast first check on what the header claims; file data is counted
	 * again as it is decompressed (put_file), which is what holds. Data
	 * of other entries is skipped, i.e. decompressed all the same. */
	uint64_t claim = archive_entry_size_is_set(e) ? (uint64_t)archive_entry_size(e) : 0;
	if (claim > x->lim->max_bytes - x->bytes)
		return refuse(x, "declared size past the bound of %llu bytes in total",
			      (unsigned long long)x->lim->max_bytes);
	if (type != AE_IFREG)
		x->bytes += claim;
	int pfd = -1;
	char *base = NULL;
	enum gl_code rc = open_parent(x, path, &pfd, &base);
	if (rc != GL_E_OK)
		return rc;
	if (type == AE_IFREG)
		rc = put_file(x, pfd, base, path, archive_entry_perm(e));
	else if (type == AE_IFDIR)
		rc = put_dir(x, pfd, base);
	else
		rc = put_symlink(x, pfd, base, archive_entry_symlink(e));
	if (pfd != x->root)
		close(pfd);
	return rc;
}

/* After the last write: check each symlink resolves beneath the root (a
 * dangling link is refused too) and make directories read-only, children
 * before parents. Holds one directory listing per level, no descriptors. */
static enum gl_code seal(struct xtract *x, const char *rel)
{
	int dfd = gl_ar_openat2(x->root, *rel ? rel : ".", O_RDONLY | O_DIRECTORY, 0,
				GL_AR_RES_STRICT);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return gl_fail_set(x->f, GL_E_IO, "sealing the release: %s", strerror(errno));
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rd_errno;
	for (;;) {
		errno = 0;
		if (!(de = readdir(d))) {
			rd_errno = errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			names = gl_xrealloc(names, cap * sizeof *names);
		}
		names[n++] = *rel ? gl_xasprintf("%s/%s", rel, de->d_name) : gl_xstrdup(de->d_name);
	}
	closedir(d);
	enum gl_code rc = GL_E_OK;
	if (rd_errno)
		rc = gl_fail_set(x->f, GL_E_IO, "sealing the release: %s", strerror(rd_errno));
	for (size_t i = 0; i < n && rc == GL_E_OK; i++) {
		struct stat st;
		if (fstatat(x->root, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = gl_fail_set(x->f, GL_E_IO, "sealing the release: %s", strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = seal(x, names[i]);
		} else if (S_ISLNK(st.st_mode)) {
			int fd = gl_ar_openat2(x->root, names[i], O_PATH, 0,
					       RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
			if (fd >= 0) {
				close(fd);
				continue;
			}
			const char *why = errno == EXDEV    ? "points outside the release directory"
					  : errno == ENOENT ? "is dangling"
					  : errno == ELOOP  ? "is a loop"
							    : "does not resolve";
			autofree char *shown = gl_sanitize(names[i], strlen(names[i]));
			rc = gl_fail_set(x->f, GL_E_UNSAFE_ARCHIVE,
					 "entry \"%s\": symbolic link %s", shown, why);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc != GL_E_OK)
		return rc;
	autoclose int fd = gl_ar_openat2(x->root, *rel ? rel : ".", O_RDONLY | O_DIRECTORY, 0,
					 GL_AR_RES_STRICT);
	if (fd < 0 || fchmod(fd, 0555) < 0)
		return gl_fail_set(x->f, GL_E_IO, "sealing the release: %s", strerror(errno));
	return GL_E_OK;
}

static int fsync_parent(const char *path)
{
	autofree char *dir = gl_xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *p = !slash ? "." : slash == dir ? "/" : (*slash = 0, dir);
	autoclose int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -1 : fsync(fd);
}

static enum gl_code extract(int fd, const char *dest, const struct gl_archive_limits *lim,
			    jv *files, struct gl_fail *f)
{
	struct stat st;
	if (lstat(dest, &st) == 0)
		return gl_fail_set(f, GL_E_IO, "%s: already exists", dest);
	if (errno != ENOENT)
		return gl_fail_set(f, GL_E_IO, "%s: %s", dest, strerror(errno));
	autofree char *tmp = gl_xasprintf("%s.tmp.XXXXXX", dest);
	if (!mkdtemp(tmp))
		return gl_fail_set(f, GL_E_IO, "%s: %s", tmp, strerror(errno));
	struct xtract x = {.root = -1, .lim = lim, .files = jv_object(), .f = f};
	enum gl_code rc = GL_E_OK;
	int root_seen = 0;
	x.root = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (x.root < 0) {
		rc = gl_fail_set(x.f, GL_E_IO, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	x.a = gl_ar_reader_open(fd, x.f);
	if (!x.a) {
		rc = GL_E_UNSAFE_ARCHIVE;
		goto out;
	}
	x.buf = gl_xmalloc(XBUF);
	for (;;) {
		struct archive_entry *e;
		if (x.index++ >= lim->max_entries) {
			x.raw = "";
			int r = gl_ar_next_header(x.a, &e, x.index, x.f);
			if (r < 0)
				rc = GL_E_UNSAFE_ARCHIVE;
			else if (r > 0)
				rc = gl_fail_set(x.f, GL_E_UNSAFE_ARCHIVE,
						 "entry %llu: more than %llu entries (the bound)",
						 (unsigned long long)x.index,
						 (unsigned long long)lim->max_entries);
			break;
		}
		int r = gl_ar_next_header(x.a, &e, x.index, x.f);
		if (r <= 0) {
			rc = r < 0 ? GL_E_UNSAFE_ARCHIVE : GL_E_OK;
			break;
		}
		rc = put_entry(&x, e, &root_seen);
		if (rc != GL_E_OK)
			break;
		/* long installs say how far they are, on a terminal only */
		gl_log_progress("%llu entries extracted", (unsigned long long)x.index);
	}
	gl_log_progress_end();
	if (rc == GL_E_OK)
		rc = seal(&x, "");
	/* Data reaches the disk before the tree gets its final name. */
	if (rc == GL_E_OK && syncfs(x.root) < 0)
		rc = gl_fail_set(x.f, GL_E_IO, "%s: sync: %s", tmp, strerror(errno));
	if (rc == GL_E_OK && renameat2(AT_FDCWD, tmp, AT_FDCWD, dest, RENAME_NOREPLACE) < 0)
		rc = gl_fail_set(x.f, GL_E_IO, "%s: %s", dest,
				 errno == EEXIST ? "already exists" : strerror(errno));
	else if (rc == GL_E_OK && fsync_parent(dest) < 0) {
		rc = gl_fail_set(x.f, GL_E_IO, "%s: sync: %s", dest, strerror(errno));
		gl_rm_rf(dest);
	}
out:
	if (x.a)
		archive_read_free(x.a);
	free(x.buf);
	if (x.root >= 0)
		close(x.root);
	if (rc != GL_E_OK) {
		gl_rm_rf(tmp);
		jv_free(x.files);
		return rc;
	}
	*files = x.files;
	return GL_E_OK;
}

enum gl_code gl_archive_extract(int fd, const char *dest, const struct gl_archive_limits *lim,
				jv *files, struct gl_fail *f)
{
	struct gl_ar_locale s = gl_ar_utf8_enter();
	enum gl_code rc = extract(fd, dest, lim, files, f);
	gl_ar_utf8_leave(&s);
	return rc;
}
