/* workspace.c — an exec copy's workspace <-> its slot key "gl.files"; see
 * workspace.h and docs/exec.md "File state through slots: the workspace".
 * Part of gl-exec-host: it runs inside the copy, next to hostile code. */
#define _GNU_SOURCE
#include "workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/json.h"
#include "json/msg.h"
#include "core/util.h"

#define STATE_ENTRIES_MAX GL_WS_ENTRIES_MAX
#define STATE_FILE_MAX GL_WS_FILE_MAX
#define STATE_TOTAL_MAX GL_WS_TOTAL_MAX
#define STATE_DEPTH_MAX GL_WS_DEPTH_MAX
#define STATE_COMPONENT_MAX 255
#define STATE_NAME_MAX 1024

static bool component_ok(const char *s, size_t n)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
	if (n == 0 || n > STATE_COMPONENT_MAX || (n == 1 && s[0] == '.') ||
	    (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!memchr(ok, s[i], sizeof ok - 1))
			return false;
	return true;
}

/* A "gl.files" name: components joined by '/', optionally ending in '/'
 * (a directory). */
static bool state_name_ok(const char *s, size_t len, bool *is_dir)
{
	*is_dir = len && s[len - 1] == '/';
	if (*is_dir)
		len--;
	if (len == 0 || len > STATE_NAME_MAX || memchr(s, 0, len))
		return false;
	int depth = 0;
	for (size_t i = 0; i < len;) {
		const char *sl = memchr(s + i, '/', len - i);
		size_t n = sl ? (size_t)(sl - (s + i)) : len - i;
		if (!component_ok(s + i, n) || ++depth > STATE_DEPTH_MAX)
			return false;
		i += n + 1;
		if (sl && i == len)
			return false; /* "a//" */
	}
	return true;
}

/* Open (creating when missing) the directories of rel[0..len) below root,
 * never following a symlink. A new descriptor, or -1. */
static int open_parents(int root, const char *rel, size_t len)
{
	int cur = fcntl(root, F_DUPFD_CLOEXEC, 0);
	for (size_t i = 0; cur >= 0 && i < len;) {
		const char *sl = memchr(rel + i, '/', len - i);
		size_t n = sl ? (size_t)(sl - (rel + i)) : len - i;
		char comp[STATE_COMPONENT_MAX + 1];
		memcpy(comp, rel + i, n);
		comp[n] = 0;
		if (mkdirat(cur, comp, 0777) < 0 && errno != EEXIST) {
			close(cur);
			return -1;
		}
		int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
		i += n + 1;
	}
	return cur;
}

/* One entry of a slot's "gl.files" (k, v borrowed) checked before anything
 * is written: NULL, or why it is refused (malloc'd). */
static char *check_entry(jv k, jv v)
{
	const char *name = jv_string_value(k);
	size_t nl = (size_t)jv_string_length_bytes(jv_copy(k));
	bool is_dir;
	if (!state_name_ok(name, nl, &is_dir)) {
		autofree char *q = gl_sanitize(name, nl > 256 ? 256 : nl);
		return gl_xasprintf("%s is not a workspace name", q);
	}
	if (jv_get_kind(v) != JV_KIND_STRING || (is_dir && jv_string_length_bytes(jv_copy(v)) != 0) ||
	    (size_t)jv_string_length_bytes(jv_copy(v)) / 4 * 3 > STATE_FILE_MAX + 3) {
		autofree char *q = gl_sanitize(name, nl > 256 ? 256 : nl);
		return gl_xasprintf("%s: not %s", q,
				    is_dir ? "\"\" (a directory)" : "a base64 file of at most 8 MiB");
	}
	return NULL;
}

/* Write one checked entry (k, v borrowed) below root: a directory, or a
 * new file (O_EXCL, nothing followed) counted into *total. NULL, or why
 * it is refused (malloc'd). */
static char *restore_entry(int root, jv k, jv v, size_t *total)
{
	const char *name = jv_string_value(k);
	size_t nl = (size_t)jv_string_length_bytes(jv_copy(k));
	autofree char *q = gl_sanitize(name, nl > 256 ? 256 : nl);
	char *why = NULL;
	if (name[nl - 1] == '/') {
		int fd = open_parents(root, name, nl - 1);
		if (fd < 0)
			return gl_xasprintf("%s: %s", q, strerror(errno));
		close(fd);
		return NULL;
	}
	const char *b64 = jv_string_value(v);
	size_t len = 0;
	unsigned char *data = gl_b64_decode(b64, strlen(b64), &len);
	const char *slash = memrchr(name, '/', nl);
	int pfd = slash ? open_parents(root, name, (size_t)(slash - name)) : fcntl(root, F_DUPFD_CLOEXEC, 0);
	int fd = pfd < 0 ? -1
			 : openat(pfd, slash ? slash + 1 : name,
				  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (!data)
		why = gl_xasprintf("%s: not base64", q);
	else if (len > STATE_FILE_MAX || (*total += len) > STATE_TOTAL_MAX)
		why = gl_xasprintf("%s: more than %u bytes a file or %u in all", q, STATE_FILE_MAX,
				   STATE_TOTAL_MAX);
	else if (fd < 0 || gl_write_all(fd, data, len) < 0)
		why = gl_xasprintf("%s: %s", q, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	free(data);
	return why;
}

char *gl_ws_restore(const char *dir, jv state)
{
	jv ent = gl_json_get(state, GL_WS_KEY);
	if (!jv_is_valid(ent)) {
		jv_free(ent);
		return NULL; /* an empty slot: an empty workspace */
	}
	jv files = jv_get_kind(ent) == JV_KIND_OBJECT ? gl_json_get(ent, "value") : jv_invalid();
	jv_free(ent);
	char *why = NULL;
	if (jv_get_kind(files) != JV_KIND_OBJECT) {
		jv_free(files);
		return gl_xstrdup("its value is not an object");
	}
	if (jv_object_length(jv_copy(files)) > STATE_ENTRIES_MAX) {
		jv_free(files);
		return gl_xasprintf("more than %d entries", STATE_ENTRIES_MAX);
	}
	/* every name and value first: nothing is written from a bad slot */
	jv_object_foreach(files, k, v)
	{
		if (!why)
			why = check_entry(k, v);
		jv_free(k);
		jv_free(v);
	}
	autoclose int root = why ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!why && root < 0)
		why = gl_xasprintf("%s: %s", dir, strerror(errno));
	size_t total = 0;
	jv_object_foreach(files, k, v)
	{
		if (!why)
			why = restore_entry(root, k, v, &total);
		jv_free(k);
		jv_free(v);
	}
	jv_free(files);
	return why;
}

struct collect {
	jv out;       /* {"name": base64 | ""} */
	int entries;
	size_t total;
	char *why;    /* the refusal, malloc'd */
};

/* Add the tree of dirfd (its names prefixed by prefix, depth levels
 * down) to c; nothing is followed. */
static void collect_dir(struct collect *c, int dirfd, const char *prefix, int depth)
{
	int dup_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		c->why = gl_xasprintf("%s: %s", *prefix ? prefix : ".", strerror(errno));
		return;
	}
	struct dirent *e;
	while (!c->why && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		autofree char *rel = gl_xasprintf("%s%s", prefix, e->d_name);
		autofree char *q = gl_sanitize(rel, strlen(rel));
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			c->why = gl_xasprintf("%s: %s", q, strerror(errno));
			break;
		}
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			continue; /* a symlink, fifo, socket or device: not stored */
		if (!component_ok(e->d_name, strlen(e->d_name)) || depth >= STATE_DEPTH_MAX ||
		    strlen(rel) + 1 > STATE_NAME_MAX) {
			c->why = gl_xasprintf("%s cannot be stored (components [A-Za-z0-9._-], at most "
					      "%d deep)",
					      q, STATE_DEPTH_MAX);
			break;
		}
		if (++c->entries > STATE_ENTRIES_MAX) {
			c->why = gl_xasprintf("more than %d files and directories", STATE_ENTRIES_MAX);
			break;
		}
		int fd = openat(dirfd, e->d_name,
				O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
				    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		struct stat fs;
		if (fd < 0 || fstat(fd, &fs) < 0 || (fs.st_mode & S_IFMT) != (st.st_mode & S_IFMT)) {
			c->why = gl_xasprintf("%s: %s", q, fd < 0 ? strerror(errno) : "changed");
		} else if (S_ISDIR(fs.st_mode)) {
			autofree char *sub = gl_xasprintf("%s/", rel);
			c->out = jv_object_set(c->out, jv_string(sub), jv_string(""));
			collect_dir(c, fd, sub, depth + 1);
		} else {
			char *buf = NULL;
			size_t len = 0;
			if (gl_read_fd_capped(fd, STATE_FILE_MAX, &buf, &len) < 0)
				c->why = errno == EFBIG ? gl_xasprintf("%s: more than %u bytes", q, STATE_FILE_MAX)
							: gl_xasprintf("%s: %s", q, strerror(errno));
			else if ((c->total += len) > STATE_TOTAL_MAX)
				c->why = gl_xasprintf("more than %u bytes in all", STATE_TOTAL_MAX);
			else {
				struct gl_buf b = {0};
				gl_b64_encode(&b, (unsigned char *)buf, len);
				c->out = jv_object_set(c->out, jv_string(rel),
						       jv_string_sized(b.data ? b.data : "", (int)b.len));
				free(b.data);
			}
			free(buf);
		}
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
}

jv gl_ws_collect(const char *dir, char **why)
{
	struct collect c = {.out = jv_object()};
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		c.why = gl_xasprintf("%s: %s", dir, strerror(errno));
	else
		collect_dir(&c, root, "", 0);
	if (root >= 0)
		close(root);
	if (c.why) {
		jv_free(c.out);
		*why = c.why;
		return jv_invalid();
	}
	return c.out;
}
