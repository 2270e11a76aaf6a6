/* exec_tree.c — the release tree of a runtime "exec" release: recorded
 * once per session against the install record (every file's SHA-256, no
 * file added or missing), then re-checked by metadata before every copy, so
 * a file swapped while gl-run runs never runs (SPEC §9, seed 002: verified
 * launch; docs/exec.md "One copy"). See exec_tree.h. */
#define _GNU_SOURCE
#include "runtime/exec_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/json.h"
#include "core/util.h"

/* One file or directory of the verified tree. */
struct gl_exec_file {
	char *rel; /* path relative to the release root ("" for the root) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	bool is_dir;
};

/* ---- the release tree: verified once, re-checked before every copy ------ */

struct walk {
	struct gl_exec *x;
	jv files; /* borrowed: the install record's {"path": sha256} */
	const char *target; /* entry[0] relative to the release root, or NULL */
	size_t seen;
	struct gl_fail *f;
};

static void add_file(struct gl_exec *x, const char *rel, const struct stat *st)
{
	if (x->nfile % 256 == 0)
		x->file = gl_xrealloc(x->file, (x->nfile + 256) * sizeof *x->file);
	x->file[x->nfile++] = (struct gl_exec_file){gl_xstrdup(rel), st->st_dev, st->st_ino,
						    st->st_size, st->st_mtim, st->st_ctim,
						    S_ISDIR(st->st_mode)};
}

/* Walk dirfd (relative path rel), hashing every regular file against the
 * record. 0 or -1 with *w->f. */
static int walk_dir(struct walk *w, int dirfd, const char *rel)
{
	struct stat st;
	if (fstat(dirfd, &st) < 0)
		return gl_fail(w->f, GL_E_REJECTED, "verified launch: %s: %s", rel,
			       strerror(errno));
	add_file(w->x, rel, &st);
	int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d) {
		if (dup >= 0)
			close(dup);
		return gl_fail(w->f, GL_E_REJECTED, "verified launch: %s: %s", rel,
			       strerror(errno));
	}
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		autofree char *sub = *rel ? gl_xasprintf("%s/%s", rel, e->d_name) : gl_xstrdup(e->d_name);
		if (w->x->nfile >= GL_EXEC_FILES_MAX) {
			rc = gl_fail(w->f, GL_E_REJECTED, "verified launch: more than %d files",
				     GL_EXEC_FILES_MAX);
			break;
		}
		autoclose int fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		struct stat fs;
		if (fd < 0 && errno == ELOOP && fstatat(dirfd, e->d_name, &fs, AT_SYMLINK_NOFOLLOW) == 0) {
			add_file(w->x, sub, &fs); /* a symlink the archive created: its inode is checked */
			continue;
		}
		if (fd < 0 || fstat(fd, &fs) < 0) {
			autofree char *q = gl_sanitize(sub, strlen(sub));
			rc = gl_fail(w->f, GL_E_REJECTED, "verified launch: %s: %s", q,
				     strerror(errno));
		} else if (S_ISDIR(fs.st_mode)) {
			rc = walk_dir(w, fd, sub);
		} else if (!S_ISREG(fs.st_mode)) {
			autofree char *q = gl_sanitize(sub, strlen(sub));
			rc = gl_fail(w->f, GL_E_REJECTED,
				     "verified launch: %s is not a regular file", q);
		} else {
			const char *want = gl_json_get_str(w->files, sub);
			char got[65];
			autofree char *q = gl_sanitize(sub, strlen(sub));
			if (!strcmp(sub, "manifest.json") && !want) {
				/* the manifest is checked by its own hash in the record */
			} else if (!want) {
				rc = gl_fail(w->f, GL_E_REJECTED,
					     "verified launch: %s was added after install", q);
			} else if (gl_sha256_fd_hex(fd, got) < 0) {
				rc = gl_fail(w->f, GL_E_REJECTED, "verified launch: %s: %s", q,
					     strerror(errno));
			} else if (strcmp(got, want)) {
				w->x->fail_binding = !strcmp(sub, "manifest.json") ? "manifest_sha256"
						     : w->target && !strcmp(sub, w->target) ? "target_sha256"
											 : "tree";
				rc = gl_fail(w->f, GL_E_REJECTED,
					     "verified launch: %s changed after install (sha256 %s, "
					     "installed %.64s); refusing to run it",
					     q, got, want);
			} else {
				if (!strcmp(sub, "manifest.json"))
					memcpy(w->x->manifest_sha256, got, 65);
				w->seen++;
				add_file(w->x, sub, &fs);
			}
		}
	}
	closedir(d);
	return rc;
}

/* Has any file of the verified tree changed since gl_exec_open? */
int gl_exec_tree_unchanged(const struct gl_exec *x, struct gl_fail *f)
{
	autoclose int root = open(x->release_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return gl_fail_errno(f, GL_E_REJECTED, "verified launch: %s", x->release_dir);
	/* files first, so that a swapped file is named rather than its directory */
	for (size_t k = 0; k < 2 * x->nfile; k++) {
		const struct gl_exec_file *e = &x->file[k % x->nfile];
		bool dir_pass = k >= x->nfile;
		if (e->is_dir != dir_pass)
			continue;
		struct stat st;
		int r = *e->rel ? fstatat(root, e->rel, &st, AT_SYMLINK_NOFOLLOW)
				: fstat(root, &st);
		if (r < 0 || st.st_dev != e->dev || st.st_ino != e->ino || st.st_size != e->size ||
		    st.st_mtim.tv_sec != e->mtime.tv_sec || st.st_mtim.tv_nsec != e->mtime.tv_nsec ||
		    st.st_ctim.tv_sec != e->ctime.tv_sec || st.st_ctim.tv_nsec != e->ctime.tv_nsec) {
			autofree char *q = gl_sanitize(*e->rel ? e->rel : ".", strlen(*e->rel ? e->rel : "."));
			return gl_fail(f, GL_E_REJECTED,
				       "verified launch: %s changed after it was verified%s; "
				       "refusing to run the release",
				       q, r < 0 ? " (gone)" : "");
		}
	}
	return 0;
}

int gl_exec_tree_record(struct gl_exec *x, int root, jv files, const char *target_rel,
			struct gl_fail *f)
{
	struct walk w = {.x = x, .files = files, .target = target_rel, .f = f};
	if (walk_dir(&w, root, "") < 0)
		return -1;
	size_t want = (size_t)jv_object_length(jv_copy(files));
	if (w.seen != want)
		return gl_fail(f, GL_E_REJECTED, "verified launch: %zu installed files are missing",
			       want - (w.seen < want ? w.seen : want));
	return 0;
}

void gl_exec_tree_free(struct gl_exec *x)
{
	for (size_t i = 0; i < x->nfile; i++)
		free(x->file[i].rel);
	free(x->file);
	x->file = NULL;
	x->nfile = 0;
}
