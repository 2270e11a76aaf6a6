/* archive_pack.c — reproducible release archives (SPEC §3 `gl-sign pack`).
 *
 * The same tree always gives the same bytes: entries sorted by the byte
 * order of their path, pax-restricted tar (plain ustar headers unless a
 * name needs a pax record), mtime 0, uid/gid 0, no owner names, modes
 * normalised, no atime/ctime/xattrs/ACLs, gzip at a fixed level with no
 * timestamp or name in its header. docs/archives.md gives the format.
 *
 * Pack never produces what extraction (archive_extract.c) would refuse:
 * devices, fifos and sockets are refused; a symlink is kept only when it
 * resolves inside the tree (openat2 RESOLVE_BENEATH from the tree root,
 * which also refuses absolute and dangling targets); the entry count, total
 * size and path length are held to the same bounds. Hard-linked files are
 * packed as separate regular files. */
#define _GNU_SOURCE
#include "sign/archive_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#define PACK_BUF (1u << 20)
#define PACK_GZIP_LEVEL "6"

struct pack_entry {
	char *path;    /* relative, no "./", no trailing slash */
	mode_t type;   /* S_IFREG, S_IFDIR or S_IFLNK */
	mode_t perm;   /* normalised */
	uint64_t size; /* regular files */
	char *target;  /* symlinks */
};

struct pack {
	int root;      /* O_PATH fd of src_dir */
	dev_t out_dev; /* the temporary output file, never packed */
	ino_t out_ino;
	struct gl_archive_limits lim;
	struct pack_entry *v;
	size_t n, cap;
	uint64_t bytes;
	char *err;
};

static enum gl_archive_status pack_fail(struct pack *p, enum gl_archive_status st, int errnum,
					const char *fmt, ...) GL_PRINTF(4, 5);
static enum gl_archive_status pack_fail(struct pack *p, enum gl_archive_status st, int errnum,
					const char *fmt, ...)
{
	autofree char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	free(p->err);
	p->err = errnum ? gl_xasprintf("%s: %s", msg, strerror(errnum)) : gl_xstrdup(msg);
	return st;
}

static enum gl_archive_status add_entry(struct pack *p, char *path, const struct stat *st,
					char *target)
{
	if (p->n >= p->lim.max_entries) {
		free(path);
		free(target);
		return pack_fail(p, GL_ARCHIVE_UNSAFE, 0,
				 "more than %llu entries (extraction would refuse it)",
				 (unsigned long long)p->lim.max_entries);
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->v = gl_xrealloc(p->v, p->cap * sizeof *p->v);
	}
	struct pack_entry *e = &p->v[p->n++];
	e->path = path;
	e->target = target;
	e->type = st->st_mode & S_IFMT;
	e->size = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
	if (S_ISDIR(st->st_mode))
		e->perm = 0755;
	else if (S_ISLNK(st->st_mode))
		e->perm = 0777;
	else
		e->perm = (st->st_mode & S_IXUSR) ? 0755 : 0644;
	return GL_ARCHIVE_OK;
}

/* A symlink is kept only if it resolves beneath the tree root, following
 * every link on the way (RESOLVE_BENEATH refuses absolute targets, ".."
 * above the root and magic links). */
static enum gl_archive_status check_link(struct pack *p, const char *rel, const char *target)
{
	int fd = gl_ar_openat2(p->root, rel, O_PATH, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	if (fd >= 0) {
		close(fd);
		return GL_ARCHIVE_OK;
	}
	int e = errno;
	autofree char *r = gl_sanitize(rel, strlen(rel));
	autofree char *t = gl_sanitize(target, strlen(target));
	const char *why = e == EXDEV    ? "points outside the tree"
			  : e == ENOENT ? "is dangling"
			  : e == ELOOP  ? "is a loop"
					: NULL;
	if (!why)
		return pack_fail(p, GL_ARCHIVE_IO, e, "\"%s\": cannot resolve symlink", r);
	return pack_fail(p, GL_ARCHIVE_UNSAFE, 0, "\"%s\": symlink -> \"%s\" %s (refused)", r, t,
			 why);
}

static enum gl_archive_status walk(struct pack *p, int dfd, const char *prefix);

/* One entry name of directory d (whose path is prefix): checked and added,
 * a directory walked. */
static enum gl_archive_status walk_entry(struct pack *p, DIR *d, const char *name,
					 const char *prefix)
{
	enum gl_archive_status rc;
	char *rel = *prefix ? gl_xasprintf("%s/%s", prefix, name)
			    : gl_xstrdup(name);
	autofree char *shown = gl_sanitize(rel, strlen(rel));
	if (strlen(rel) > GL_ARCHIVE_MAX_PATH) {
		free(rel);
		return pack_fail(p, GL_ARCHIVE_UNSAFE, 0, "\"%s\": path longer than %d bytes",
			       shown, GL_ARCHIVE_MAX_PATH);
	}
	if (!gl_ar_utf8_valid(name)) {
		free(rel);
		return pack_fail(p, GL_ARCHIVE_UNSAFE, 0,
			       "\"%s\": name is not valid UTF-8 (refused)", shown);
	}
	struct stat st;
	if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		free(rel);
		return pack_fail(p, GL_ARCHIVE_IO, errno, "\"%s\": stat", shown);
	}
	if (S_ISREG(st.st_mode)) {
		if (st.st_dev == p->out_dev && st.st_ino == p->out_ino) {
			free(rel);
			return pack_fail(p, GL_ARCHIVE_IO, 0,
				       "the output file lies inside the tree");
		}
		if ((uint64_t)st.st_size > p->lim.max_bytes - p->bytes) {
			free(rel);
			return pack_fail(p, GL_ARCHIVE_UNSAFE, 0,
				       "more than %llu bytes (extraction would refuse it)",
				       (unsigned long long)p->lim.max_bytes);
		}
		p->bytes += (uint64_t)st.st_size;
		rc = add_entry(p, rel, &st, NULL);
	} else if (S_ISDIR(st.st_mode)) {
		int sub = openat(dirfd(d), name,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			free(rel);
			return pack_fail(p, GL_ARCHIVE_IO, errno, "\"%s\": open", shown);
		}
		rc = add_entry(p, rel, &st, NULL);
		if (rc == GL_ARCHIVE_OK)
			rc = walk(p, sub, rel);
		else
			close(sub);
	} else if (S_ISLNK(st.st_mode)) {
		char target[GL_ARCHIVE_MAX_PATH + 1];
		ssize_t n = readlinkat(dirfd(d), name, target, sizeof target);
		if (n < 0 || (size_t)n >= sizeof target) {
			free(rel);
			return n < 0 ? pack_fail(p, GL_ARCHIVE_IO, errno, "\"%s\": readlink",
					       shown)
				   : pack_fail(p, GL_ARCHIVE_UNSAFE, 0,
					       "\"%s\": symlink target too long", shown);
		}
		target[n] = 0;
		rc = check_link(p, rel, target);
		if (rc == GL_ARCHIVE_OK)
			rc = add_entry(p, rel, &st, gl_xstrdup(target));
		else
			free(rel);
	} else {
		const char *kind = S_ISCHR(st.st_mode)	  ? "character device"
				   : S_ISBLK(st.st_mode)  ? "block device"
				   : S_ISFIFO(st.st_mode) ? "fifo"
				   : S_ISSOCK(st.st_mode) ? "socket"
							  : "file of unknown type";
		free(rel);
		rc = pack_fail(p, GL_ARCHIVE_UNSAFE, 0, "\"%s\": %s (refused)", shown,
			       kind);
	}
	return rc;
}

/* Collect the entries of directory dfd (owned) whose path is prefix. */
static enum gl_archive_status walk(struct pack *p, int dfd, const char *prefix)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return pack_fail(p, GL_ARCHIVE_IO, e, "\"%s\": opendir", prefix);
	}
	enum gl_archive_status rc = GL_ARCHIVE_OK;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				rc = pack_fail(p, GL_ARCHIVE_IO, errno, "\"%s\": readdir", prefix);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc = walk_entry(p, d, de->d_name, prefix);
		if (rc != GL_ARCHIVE_OK)
			break;
	}
	closedir(d);
	return rc;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pack_entry *)a)->path, ((const struct pack_entry *)b)->path);
}

static enum gl_archive_status ar_fail(struct pack *p, struct archive *a, const char *what)
{
	const char *m = archive_error_string(a);
	autofree char *shown = gl_sanitize(m ? m : "?", m ? strlen(m) : 1);
	return pack_fail(p, GL_ARCHIVE_IO, 0, "%s: %s", what, shown);
}

/* Copy exactly e->size bytes of the file; a file that changed since the
 * walk is an error (its header is already written). */
static enum gl_archive_status write_file(struct pack *p, struct archive *a,
					 const struct pack_entry *e, char *buf)
{
	autofree char *shown = gl_sanitize(e->path, strlen(e->path));
	autoclose int fd =
		gl_ar_openat2(p->root, e->path, O_RDONLY | O_NOFOLLOW, 0, GL_AR_RES_STRICT);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return pack_fail(p, GL_ARCHIVE_IO, errno, "\"%s\": open", shown);
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != e->size)
		return pack_fail(p, GL_ARCHIVE_IO, 0, "\"%s\": changed while packing", shown);
	uint64_t left = e->size;
	while (left) {
		size_t want = left < PACK_BUF ? (size_t)left : PACK_BUF;
		ssize_t n = gl_read_full(fd, buf, want);
		if (n < 0)
			return pack_fail(p, GL_ARCHIVE_IO, errno, "\"%s\": read", shown);
		if ((size_t)n != want)
			return pack_fail(p, GL_ARCHIVE_IO, 0, "\"%s\": changed while packing",
					 shown);
		if (archive_write_data(a, buf, (size_t)n) != n)
			return ar_fail(p, a, "write");
		left -= (uint64_t)n;
	}
	return GL_ARCHIVE_OK;
}

static enum gl_archive_status write_archive(struct pack *p, int outfd)
{
	struct archive *a = archive_write_new();
	if (!a)
		gl_die(GL_EXIT_USAGE, "out of memory");
	enum gl_archive_status rc = GL_ARCHIVE_OK;
	/* gzip: "!timestamp" leaves the header's MTIME zero; no name is
	 * written; the level is fixed so the bytes depend on the tree only
	 * (and on zlib's deflate, which Debian 12 fixes). */
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "timestamp", NULL) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "compression-level", PACK_GZIP_LEVEL) !=
		    ARCHIVE_OK ||
	    archive_write_open_fd(a, outfd) != ARCHIVE_OK) {
		rc = ar_fail(p, a, "libarchive");
		archive_write_free(a);
		return rc;
	}
	autofree char *buf = gl_xmalloc(PACK_BUF);
	struct archive_entry *ae = archive_entry_new();
	if (!ae)
		gl_die(GL_EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < p->n && rc == GL_ARCHIVE_OK; i++) {
		const struct pack_entry *e = &p->v[i];
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, e->path);
		archive_entry_set_filetype(ae, (unsigned)e->type);
		archive_entry_set_perm(ae, e->perm);
		archive_entry_set_mtime(ae, 0, 0);
		archive_entry_set_uid(ae, 0);
		archive_entry_set_gid(ae, 0);
		archive_entry_set_size(ae, (la_int64_t)e->size);
		if (e->target)
			archive_entry_set_symlink(ae, e->target);
		if (archive_write_header(a, ae) != ARCHIVE_OK) {
			rc = ar_fail(p, a, "write header");
			break;
		}
		if (e->type == S_IFREG)
			rc = write_file(p, a, e, buf);
		if (rc == GL_ARCHIVE_OK && archive_write_finish_entry(a) != ARCHIVE_OK)
			rc = ar_fail(p, a, "write");
	}
	archive_entry_free(ae);
	if (rc == GL_ARCHIVE_OK && archive_write_close(a) != ARCHIVE_OK)
		rc = ar_fail(p, a, "write");
	archive_write_free(a);
	return rc;
}

/* Walk p->root, write the sorted entries to *outfd (the temporary file
 * tmp) and give it its name out_path; *outfd is closed on success. */
static enum gl_archive_status pack_into(struct pack *p, const char *src_dir, int *outfd,
					const char *tmp, const char *out_path)
{
	int walkfd = openat(p->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (walkfd < 0)
		return pack_fail(p, GL_ARCHIVE_IO, errno, "%s", src_dir);
	enum gl_archive_status rc = walk(p, walkfd, "");
	if (rc != GL_ARCHIVE_OK)
		return rc;
	qsort(p->v, p->n, sizeof *p->v, entry_cmp);
	/* Names are bytes; pax records are UTF-8. In a UTF-8 locale libarchive
	 * writes a UTF-8 name as it is (a pax record only where one is needed)
	 * and refuses a name that is not UTF-8. Thread-local: the process's
	 * locale is left alone. */
	struct gl_ar_locale utf8 = gl_ar_utf8_enter();
	rc = write_archive(p, *outfd);
	gl_ar_utf8_leave(&utf8);
	if (rc != GL_ARCHIVE_OK)
		return rc;
	/* 0644 whatever the umask: the file's mode is not part of its bytes,
	 * but a publisher expects the same result every time. */
	if (fchmod(*outfd, 0644) < 0 || fsync(*outfd) < 0 || close(gl_steal_fd(outfd)) < 0 ||
	    rename(tmp, out_path) < 0)
		return pack_fail(p, GL_ARCHIVE_IO, errno, "%s", out_path);
	return GL_ARCHIVE_OK;
}

enum gl_code gl_archive_pack(const char *src_dir, const char *out_path, struct gl_fail *f)
{
	struct pack p = {.root = -1};
	if (gl_archive_limits_env(&p.lim, f) < 0)
		return f->code;
	autofree char *tmp = gl_xasprintf("%s.tmp.XXXXXX", out_path);
	autoclose int outfd = -1;
	enum gl_archive_status rc;
	struct stat st;

	p.root = open(src_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p.root < 0) {
		rc = pack_fail(&p, GL_ARCHIVE_IO, errno, "%s", src_dir);
		goto out;
	}
	outfd = mkostemp(tmp, O_CLOEXEC);
	if (outfd < 0 || fstat(outfd, &st) < 0) {
		rc = pack_fail(&p, GL_ARCHIVE_IO, errno, "%s", tmp);
		goto out;
	}
	p.out_dev = st.st_dev;
	p.out_ino = st.st_ino;
	rc = pack_into(&p, src_dir, &outfd, tmp, out_path);
out:
	if (rc != GL_ARCHIVE_OK && (outfd >= 0 || p.out_ino))
		unlink(tmp);
	if (p.root >= 0)
		close(p.root);
	for (size_t i = 0; i < p.n; i++) {
		free(p.v[i].path);
		free(p.v[i].target);
	}
	free(p.v);
	if (rc != GL_ARCHIVE_OK)
		gl_fail_set(f, rc == GL_ARCHIVE_UNSAFE ? GL_E_UNSAFE_ARCHIVE : GL_E_IO, "%s: %s",
			    src_dir, p.err ? p.err : "cannot pack");
	free(p.err);
	return rc == GL_ARCHIVE_OK ? GL_E_OK : f->code;
}
