/* archive.c — what reading and writing release archives share (SPEC §3):
 * the bounds, the path rules, the libarchive reader (tar behind gzip, and
 * nothing else), and gl_archive_read_member. Packing is archive_pack.c,
 * extraction archive_extract.c; docs/archives.md describes the format, the
 * bounds and what is refused.
 *
 * Everything read here is hostile (paper §III-A: the adversary controls the
 * whole release and knows this mechanism). */
#define _GNU_SOURCE
#include "sign/archive_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>

#include "json/refusal.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* A bound from the environment may only lower the default; anything but a
 * plain decimal number is a usage error (never silently the default). */
static int env_bound(const char *name, uint64_t dflt, uint64_t *out, struct gl_fail *f)
{
	const char *s = getenv(name);
	*out = dflt;
	if (!s)
		return 0;
	uint64_t v = 0;
	if (!*s)
		return gl_fail(f, GL_E_IO, "%s: empty (a decimal number is expected)", name);
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9' || v > (UINT64_MAX - 9) / 10) {
			autofree char *shown = gl_sanitize(s, strlen(s));
			return gl_fail(f, GL_E_IO, "%s: \"%s\" is not a decimal number", name, shown);
		}
		v = v * 10 + (uint64_t)(*c - '0');
	}
	if (v > dflt) {
		gl_warn("%s=%llu is above the default %llu, which stays in force", name,
			(unsigned long long)v, (unsigned long long)dflt);
		return 0;
	}
	*out = v;
	return 0;
}

int gl_archive_limits_env(struct gl_archive_limits *l, struct gl_fail *f)
{
	if (env_bound("GL_ARCHIVE_MAX_BYTES", GL_ARCHIVE_MAX_BYTES_DEFAULT, &l->max_bytes, f) < 0)
		return -1;
	return env_bound("GL_ARCHIVE_MAX_ENTRIES", GL_ARCHIVE_MAX_ENTRIES_DEFAULT, &l->max_entries,
			 f);
}

void gl_archive_limits_default(struct gl_archive_limits *l)
{
	autofail struct gl_fail f = {0};
	if (gl_archive_limits_env(l, &f) < 0)
		gl_fail_exit(&f);
}

int gl_ar_openat2(int dfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = {.flags = flags | O_CLOEXEC, .mode = mode, .resolve = resolve};
	for (int tries = 0;; tries++) {
		long r = syscall(SYS_openat2, dfd, path, &how, sizeof how);
		if (r >= 0)
			return (int)r;
		/* EAGAIN: a concurrent rename raced a ".." lookup; retry. */
		if (errno != EINTR && !(errno == EAGAIN && tries < 64))
			return -1;
	}
}

/* Strict UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF): a release's names are UTF-8, so that the map of file hashes
 * (JSON) names exactly the files on disk. */
int gl_ar_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p++, n, min, cp;
		if (c < 0x80)
			continue;
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, min = 0x10000, cp = c & 0x07;
		else
			return 0;
		for (unsigned i = 0; i < n; i++, p++) {
			if ((*p & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (*p & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
	}
	return 1;
}

/* Normalise an archive path into out (GL_ARCHIVE_MAX_PATH + 1 bytes):
 * "./a//b/" -> "a/b"; "" means the root itself. Returns NULL, or why the
 * path is refused. */
const char *gl_ar_normalise(const char *raw, char *out)
{
	size_t len = strlen(raw), o = 0;
	if (len == 0)
		return "empty path";
	if (len > GL_ARCHIVE_MAX_PATH)
		return "path longer than " STR(GL_ARCHIVE_MAX_PATH) " bytes";
	if (raw[0] == '/')
		return "absolute path";
	if (!gl_ar_utf8_valid(raw))
		return "name is not valid UTF-8";
	for (const char *s = raw; *s;) {
		const char *end = strchrnul(s, '/');
		size_t n = (size_t)(end - s);
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return "path leaves the release directory (\"..\")";
		if (n && !(n == 1 && s[0] == '.')) {
			if (o)
				out[o++] = '/';
			memcpy(out + o, s, n);
			o += n;
		}
		s = *end ? end + 1 : end;
	}
	out[o] = 0;
	return NULL;
}

struct archive *gl_ar_reader_open(int fd, struct gl_fail *f)
{
	struct archive *a = archive_read_new();
	if (!a)
		gl_die(GL_EXIT_USAGE, "out of memory");
	if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_support_filter_gzip(a) != ARCHIVE_OK ||
	    archive_read_open_fd(a, fd, 64 << 10) != ARCHIVE_OK) {
		const char *m = archive_error_string(a);
		autofree char *shown = gl_sanitize(m ? m : "?", m ? strlen(m) : 1);
		gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "not a tar.gz archive: %s", shown);
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* Next header, refusing anything libarchive only half understood. 1 on an
 * entry, 0 at the end, -1 with f. The filter is checked once data has
 * been read: a release is gzip-compressed (SPEC §3), nothing else. */
int gl_ar_next_header(struct archive *a, struct archive_entry **e, uint64_t index,
		      struct gl_fail *f)
{
	int r = archive_read_next_header(a, e);
	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK) {
		const char *m = archive_error_string(a);
		autofree char *shown = gl_sanitize(m ? m : "?", m ? strlen(m) : 1);
		return gl_fail(f, GL_E_UNSAFE_ARCHIVE, "entry %llu: malformed archive: %s",
			       (unsigned long long)index, shown);
	}
	if (archive_filter_code(a, 0) != ARCHIVE_FILTER_GZIP)
		return gl_fail(f, GL_E_UNSAFE_ARCHIVE,
			       "not gzip-compressed (a release is a tar.gz)");
	return 1;
}

/* Names in pax records are UTF-8, and libarchive converts them to the
 * locale's charset: in the "C" locale any non-ASCII name would be refused.
 * Reading runs in C.UTF-8, set for this thread only (the process's locale
 * is left alone); without C.UTF-8, non-ASCII names are refused. */
struct gl_ar_locale gl_ar_utf8_enter(void)
{
	struct gl_ar_locale s = {newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0), (locale_t)0};
	if (s.loc)
		s.old = uselocale(s.loc);
	return s;
}
void gl_ar_utf8_leave(struct gl_ar_locale *s)
{
	if (s->loc) {
		uselocale(s->old);
		freelocale(s->loc);
	}
}

static enum gl_code read_member(int fd, const char *name, size_t cap, char **out, size_t *len,
				struct gl_fail *f)
{
	struct gl_archive_limits lim;
	gl_archive_limits_default(&lim);
	char want[GL_ARCHIVE_MAX_PATH + 1], path[GL_ARCHIVE_MAX_PATH + 1];
	if (gl_ar_normalise(name, want) || !*want)
		return gl_fail_set(f, GL_E_IO, "bad member name");
	struct archive *a = gl_ar_reader_open(fd, f);
	if (!a)
		return GL_E_UNSAFE_ARCHIVE;
	enum gl_code rc = GL_E_OK;
	struct gl_buf b = {0};
	int found = 0;
	uint64_t index = 0, declared = 0;
	struct archive_entry *e;
	for (;;) {
		/* The same bounds as extraction: skipping data decompresses it. */
		if (index++ >= lim.max_entries) {
			rc = gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "more than %llu entries",
					 (unsigned long long)lim.max_entries);
			break;
		}
		int r = gl_ar_next_header(a, &e, index, f);
		if (r <= 0) {
			rc = r < 0 ? GL_E_UNSAFE_ARCHIVE : GL_E_OK;
			break;
		}
		uint64_t size = archive_entry_size_is_set(e) ? (uint64_t)archive_entry_size(e) : 0;
		if (size > lim.max_bytes - declared) {
			rc = gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "more than %llu bytes",
					 (unsigned long long)lim.max_bytes);
			break;
		}
		declared += size;
		const char *raw = archive_entry_pathname(e);
		if (!raw || gl_ar_normalise(raw, path) || strcmp(path, want))
			continue;
		if (found++) {
			rc = gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "%s: duplicate entries", name);
			break;
		}
		if (archive_entry_hardlink(e) || archive_entry_filetype(e) != AE_IFREG) {
			rc = gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "%s: not a regular file", name);
			break;
		}
		if (size > cap) {
			rc = gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "%s: larger than %zu bytes", name,
					 cap);
			break;
		}
		for (;;) {
			gl_buf_reserve(&b, 65536);
			la_ssize_t n = archive_read_data(a, b.data + b.len, 65536);
			if (n == 0)
				break;
			if (n < 0 || (b.len += (size_t)n) > cap) {
				rc = gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "%s: %s", name,
						 n < 0 ? "malformed data" : "larger than its cap");
				break;
			}
		}
		if (rc != GL_E_OK)
			break;
	}
	archive_read_free(a);
	if (rc == GL_E_OK && !found)
		rc = gl_fail_set(f, GL_E_UNSAFE_ARCHIVE, "%s: not in the archive", name);
	if (rc != GL_E_OK) {
		gl_buf_free(&b);
		return rc;
	}
	gl_buf_reserve(&b, 0);
	b.data[b.len] = 0;
	*out = b.data;
	*len = b.len;
	return GL_E_OK;
}

enum gl_code gl_archive_read_member(int fd, const char *name, size_t cap, char **out, size_t *len,
				    struct gl_fail *f)
{
	struct gl_ar_locale s = gl_ar_utf8_enter();
	enum gl_code rc = read_member(fd, name, cap, out, len, f);
	gl_ar_utf8_leave(&s);
	return rc;
}
