/* repo.c — reading a repository directory; see repo.h. */
#define _GNU_SOURCE
#include "sign/repo.h"

#include "sign/fetch.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK (256u << 10)

int gl_repo_is_url(const char *repo)
{
	return repo && gl_fetch_is_url(repo);
}

/* repo/rel as a URL: rel's bytes outside RFC 3986's unreserved set (and
 * '/') percent-encoded, repo's trailing '/' dropped. Owned. */
static char *url_of(const char *repo, const char *rel)
{
	static const char hex[] = "0123456789ABCDEF";
	struct gl_buf b = {0};
	size_t n = strlen(repo);
	while (n > 0 && repo[n - 1] == '/')
		n--;
	gl_buf_add(&b, repo, n);
	gl_buf_addc(&b, '/');
	for (const unsigned char *c = (const unsigned char *)rel; *c; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= '0' && *c <= '9') || strchr("-._~/", *c)) {
			gl_buf_addc(&b, (char)*c);
		} else {
			gl_buf_addc(&b, '%');
			gl_buf_addc(&b, hex[*c >> 4]);
			gl_buf_addc(&b, hex[*c & 15]);
		}
	}
	gl_buf_addc(&b, 0);
	return b.data;
}

/* One file over HTTP(S) (lib/sign/fetch.h): the cap, a total time bound per
 * file (GL_FETCH_TIMEOUT_MS for metadata, GL_REPO_TARGET_TIMEOUT_MS for a
 * target), same-origin redirects only; 403/404/410 is "missing". */
static enum gl_code url_get(const char *repo, const char *rel, size_t max,
			       struct gl_buf *out, int *missing, struct gl_fail *f)
{
	autofree char *url = url_of(repo, rel);
	struct gl_fetch_info info = {0};
	enum gl_code r = gl_fetch_bytes(url, max, gl_fetch_deadline(GL_FETCH_TIMEOUT_MS), out,
					   &info, f);
	if (r == GL_E_FETCH && info.missing && missing) {
		gl_fail_clear(f);
		out->len = 0;
		*missing = 1;
		return GL_E_OK;
	}
	return r;
}

/* A target over HTTP(S): streamed into an unlinked temporary file (at most
 * max bytes), then given to the sink from there. */
static enum gl_code url_stream(const char *repo, const char *rel, uint64_t max,
				  gl_repo_sink sink, void *ctx, uint64_t *total, int *more,
				  struct gl_fail *f)
{
	autofree char *url = url_of(repo, rel);
	const char *tmp = getenv("TMPDIR");
	autoclose int fd = open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return gl_fail_set(f, GL_E_IO, "a temporary file for %s: %s", url, strerror(errno));
	size_t cap = max > SIZE_MAX - 1 ? SIZE_MAX - 1 : (size_t)max;
	enum gl_code r =
	    gl_fetch_fd(url, cap, gl_fetch_deadline(GL_REPO_TARGET_TIMEOUT_MS), fd, NULL, f);
	if (r == GL_E_LENGTH) { /* byte max+1 arrived: longer than it may be */
		gl_fail_clear(f);
		*total = max;
		*more = 1;
		return GL_E_OK;
	}
	if (r)
		return r;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", url, strerror(errno));
	autofree unsigned char *buf = gl_xmalloc(CHUNK);
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return gl_fail_set(f, GL_E_IO, "%s: %s", url, strerror(errno));
		if (n == 0)
			return GL_E_OK;
		if (sink(ctx, buf, (size_t)n, f) < 0)
			return f->code;
		*total += (uint64_t)n;
	}
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

enum gl_code gl_repo_get(const char *repo, const char *rel, size_t max, struct gl_buf *out,
			    int *missing, struct gl_fail *f)
{
	out->len = 0;
	if (missing)
		*missing = 0;
	if (gl_repo_is_url(repo))
		return url_get(repo, rel, max, out, missing, f);
	autofree char *path = gl_repo_name(repo, rel);
	autoclose int fd = open_file(path);
	if (fd < 0 && errno == ENOENT && missing) {
		*missing = 1;
		return GL_E_OK;
	}
	if (fd < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", path,
				   errno == EINVAL ? "not a regular file" : strerror(errno));
	autofree char *buf = NULL;
	size_t len;
	if (gl_read_fd_capped(fd, max == SIZE_MAX ? SIZE_MAX - 1 : max, &buf, &len) < 0) {
		if (errno == EFBIG)
			return gl_fail_set(f, GL_E_LENGTH,
					   "%s: longer than %zu bytes (the cap for this file)",
					   path, max);
		return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno));
	}
	gl_buf_add(out, buf, len);
	return GL_E_OK;
}

enum gl_code gl_repo_stream(const char *repo, const char *rel, uint64_t max,
			       gl_repo_sink sink, void *ctx, uint64_t *total, int *more,
			       struct gl_fail *f)
{
	*total = 0;
	*more = 0;
	if (gl_repo_is_url(repo))
		return url_stream(repo, rel, max, sink, ctx, total, more, f);
	autofree char *path = gl_repo_name(repo, rel);
	autoclose int fd = open_file(path);
	if (fd < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", path,
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
			return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno));
		if (r == 0)
			return GL_E_OK;
		size_t use = (uint64_t)r > max - *total ? (size_t)(max - *total) : (size_t)r;
		if (use && sink(ctx, buf, use, f) < 0)
			return f->code;
		*total += use;
		if (use < (size_t)r) {
			*more = 1;
			return GL_E_OK;
		}
	}
}
