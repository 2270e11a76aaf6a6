/* repo.c — reading a repository directory; see repo.h. */
#define _GNU_SOURCE
#include "repo.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK (256u << 10)

int gl_repo_is_url(const char *repo)
{
	return repo && (!strncmp(repo, "http://", 7) || !strncmp(repo, "https://", 8));
}

/* The switch for a URL transport (lib/fetch.h, issue 16): until it is
 * wired, a URL is refused by name rather than read as a directory. */
static enum gl_refusal no_transport(const char *repo, const char *rel, struct gl_fail *f)
{
	return gl_fail_set(f, GL_R_UNSUPPORTED,
			   "%s/%s: this build has no HTTP transport (REPO must be a directory)",
			   repo, rel);
}

char *gl_repo_name(const char *repo, const char *rel)
{
	return repo ? gl_xasprintf("%s/%s", repo, rel) : gl_xstrdup(rel);
}

/* Open repo/rel for reading: a regular file (a FIFO or device could block
 * or never end). -1 with errno. */
static int open_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

enum gl_refusal gl_repo_get(const char *repo, const char *rel, size_t max, struct gl_buf *out,
			    int *missing, struct gl_fail *f)
{
	out->len = 0;
	if (missing)
		*missing = 0;
	if (gl_repo_is_url(repo))
		return no_transport(repo, rel, f);
	autofree char *path = gl_repo_name(repo, rel);
	autoclose int fd = open_file(path);
	if (fd < 0 && errno == ENOENT && missing) {
		*missing = 1;
		return GL_R_OK;
	}
	if (fd < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", path,
				   errno == EINVAL ? "not a regular file" : strerror(errno));
	autofree char *buf = NULL;
	size_t len;
	if (gl_read_fd_capped(fd, max == SIZE_MAX ? SIZE_MAX - 1 : max, &buf, &len) < 0) {
		if (errno == EFBIG)
			return gl_fail_set(f, GL_R_LENGTH,
					   "%s: longer than %zu bytes (the cap for this file)",
					   path, max);
		return gl_fail_set(f, GL_R_IO, "%s: %s", path, strerror(errno));
	}
	gl_buf_add(out, buf, len);
	return GL_R_OK;
}

enum gl_refusal gl_repo_stream(const char *repo, const char *rel, uint64_t max,
			       gl_repo_sink sink, void *ctx, uint64_t *total, int *more,
			       struct gl_fail *f)
{
	*total = 0;
	*more = 0;
	if (gl_repo_is_url(repo))
		return no_transport(repo, rel, f);
	autofree char *path = gl_repo_name(repo, rel);
	autoclose int fd = open_file(path);
	if (fd < 0)
		return gl_fail_set(f, GL_R_IO, "%s: %s", path,
				   errno == EINVAL ? "not a regular file" : strerror(errno));
	autofree unsigned char *buf = gl_xmalloc(CHUNK);
	for (;;) {
		/* one byte past max tells "more" without reading it all */
		uint64_t room64 = max + 1 - *total;
		size_t room = room64 < CHUNK ? (size_t)room64 : CHUNK;
		ssize_t r = read(fd, buf, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return gl_fail_set(f, GL_R_IO, "%s: %s", path, strerror(errno));
		if (r == 0)
			return GL_R_OK;
		size_t use = (uint64_t)r > max - *total ? (size_t)(max - *total) : (size_t)r;
		if (use && sink(ctx, buf, use, f) < 0)
			return f->code;
		*total += use;
		if (use < (size_t)r) {
			*more = 1;
			return GL_R_OK;
		}
	}
}
