/* util.c — see util.h. */
#define _GNU_SOURCE
#include "core/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "core/sha.h"

const char *gl_prog = "gl";

/* One line "prog: message[: strerror]\n" on stderr, written whole: a
 * worker process and gl-run's main loop may warn at the same instant on the
 * same pipe, and three writes of theirs would interleave into lines that
 * belong to neither. A message too long for the buffer goes out in pieces. */
GL_PRINTF(2, 0) static void vwarn(int errnum, const char *fmt, va_list ap)
{
	char line[2048];
	va_list aq;
	va_copy(aq, ap);
	int p = snprintf(line, sizeof line, "%s: ", gl_prog);
	int m = p >= 0 && (size_t)p < sizeof line ? vsnprintf(line + p, sizeof line - (size_t)p, fmt, aq)
						   : -1;
	va_end(aq);
	size_t n = m >= 0 ? (size_t)p + (size_t)m : sizeof line;
	if (n < sizeof line && errnum)
		n += (size_t)snprintf(line + n, sizeof line - n, ": %s", strerror(errnum));
	if (n + 1 < sizeof line) {
		line[n++] = '\n';
		fwrite(line, 1, n, stderr); /* stderr is unbuffered: one write(2) */
		return;
	}
	fprintf(stderr, "%s: ", gl_prog);
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
}

void gl_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(0, fmt, ap);
	va_end(ap);
}

void gl_warn_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vwarn(e, fmt, ap);
	va_end(ap);
}

void gl_die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(0, fmt, ap);
	va_end(ap);
	exit(code);
}

void gl_die_errno(int code, const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vwarn(e, fmt, ap);
	va_end(ap);
	exit(code);
}

void *gl_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		gl_die(GL_EXIT_USAGE, "out of memory");
	return p;
}

void *gl_xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		gl_die(GL_EXIT_USAGE, "out of memory");
	return p;
}

void *gl_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		gl_die(GL_EXIT_USAGE, "out of memory");
	return p;
}

char *gl_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		gl_die(GL_EXIT_USAGE, "out of memory");
	return p;
}

char *gl_xasprintf(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	return s;
}

void gl_buf_reserve(struct gl_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1) {
		if (cap > SIZE_MAX / 2)
			gl_die(GL_EXIT_USAGE, "out of memory");
		cap *= 2;
	}
	b->data = gl_xrealloc(b->data, cap);
	b->cap = cap;
}

void gl_buf_add(struct gl_buf *b, const void *p, size_t n)
{
	gl_buf_reserve(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void gl_buf_addc(struct gl_buf *b, char c) { gl_buf_add(b, &c, 1); }

void gl_buf_adds(struct gl_buf *b, const char *s) { gl_buf_add(b, s, strlen(s)); }

void gl_buf_printf(struct gl_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	gl_buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void gl_buf_free(struct gl_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int gl_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t gl_read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int gl_read_fd_capped(int fd, size_t cap, char **out, size_t *len)
{
	struct gl_buf b = {0};
	for (;;) {
		gl_buf_reserve(&b, 65536);
		size_t room = b.cap - b.len - 1;
		if (room > cap + 1 - b.len)
			room = cap + 1 - b.len;
		ssize_t r = read(fd, b.data + b.len, room);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			gl_buf_free(&b);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		b.len += (size_t)r;
		if (b.len > cap) {
			gl_buf_free(&b);
			errno = EFBIG;
			return -1;
		}
	}
	gl_buf_reserve(&b, 0);
	b.data[b.len] = 0;
	*out = b.data;
	*len = b.len;
	return 0;
}

int gl_read_file_capped(const char *path, size_t cap, char **out, size_t *len)
{
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if ((uint64_t)st.st_size > cap) {
		errno = EFBIG;
		return -1;
	}
	return gl_read_fd_capped(fd, cap, out, len);
}

int gl_open_no_symlinks(const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_NO_SYMLINKS};
	long fd;
	do
		fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	while (fd < 0 && errno == EINTR);
	return (int)fd;
}

static int fsync_dir_of(const char *path)
{
	autofree char *dir = gl_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	return fsync(dfd);
}

void gl_atomic_write_stale(const char *path)
{
	autofree char *dir = gl_xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? path + (slash - dir) + 1 : path; /* not in dir: cut below */
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	autofree char *prefix = gl_xasprintf("%s.tmp.", base);
	size_t plen = strlen(prefix);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, plen) && strlen(de->d_name) == plen + 6)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

int gl_atomic_write(const char *path, const void *data, size_t len, mode_t mode)
{
	autofree char *tmp = gl_xasprintf("%s.tmp.XXXXXX", path);
	autoclose int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fchmod(fd, mode) < 0 || gl_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	if (close(gl_steal_fd(&fd)) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return fsync_dir_of(path);
}

int gl_mkdir_p(const char *path, mode_t mode)
{
	autofree char *p = gl_xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(p, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

static int rm_rf_at(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	if (!(st.st_mode & S_IWUSR))
		(void)!fchmodat(dfd, name, st.st_mode | S_IRWXU, 0);
	int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return -1;
	DIR *d = fdopendir(sub);
	if (!d) {
		close(sub);
		return -1;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (rm_rf_at(dirfd(d), e->d_name) < 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int gl_rm_rf(const char *path) { return rm_rf_at(AT_FDCWD, path); }

char *gl_home(void)
{
	const char *h = getenv("GL_HOME");
	if (h && *h)
		return gl_xstrdup(h);
	const char *x = getenv("XDG_STATE_HOME");
	if (x && *x)
		return gl_xasprintf("%s/germline", x);
	const char *home = getenv("HOME");
	if (!home || !*home)
		gl_die(GL_EXIT_USAGE, "neither GL_HOME nor HOME is set");
	return gl_xasprintf("%s/.local/state/germline", home);
}

void gl_hex(const unsigned char *in, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int gl_unhex(const char *in, size_t inlen, unsigned char *out, size_t n)
{
	if (inlen != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(in[2 * i]), lo = hexval(in[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int gl_time_parse(const char *s, int64_t *out)
{
	/* Exactly YYYY-MM-DDTHH:MM:SSZ. */
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	if (strlen(s) != sizeof shape - 1)
		return -1;
	for (size_t i = 0; i < sizeof shape - 1; i++) {
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return -1;
	}
#define NUM2(p) ((s[p] - '0') * 10 + (s[p + 1] - '0'))
	int y = NUM2(0) * 100 + NUM2(2), mo = NUM2(5), d = NUM2(8);
	int h = NUM2(11), mi = NUM2(14), se = NUM2(17);
#undef NUM2
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59)
		return -1;
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return -1;
	*out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se;
	return 0;
}

void gl_time_format(int64_t t, char out[21])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t gl_now(void) { return (int64_t)time(NULL); }

char *gl_sanitize(const char *s, size_t len)
{
	struct gl_buf b = {0};
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			gl_buf_addc(&b, (char)c);
		else if (c == '\\')
			gl_buf_adds(&b, "\\\\");
		else
			gl_buf_printf(&b, "\\x%02x", c);
	}
	gl_buf_reserve(&b, 0);
	b.data[b.len] = 0;
	return b.data;
}

void gl_stdio_init(const char *prog)
{
	gl_prog = prog;
	signal(SIGPIPE, SIG_IGN);
}

void gl_std_flags(int argc, char **argv, const char *usage)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			exit(GL_EXIT_OK);
		}
		if (!strcmp(argv[i], "--version")) {
			printf("%s %s\n", gl_prog, GL_VERSION);
			exit(GL_EXIT_OK);
		}
	}
}

const char *gl_flag_value(int argc, char **argv, int *i, const char *name, const char *usage)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n])
		return NULL;
	if (++*i >= argc) {
		gl_warn("%s needs a value", name);
		fputs(usage, stderr);
		exit(GL_EXIT_USAGE);
	}
	return argv[*i];
}

int gl_sha256_fd_hex(int fd, char out[65])
{
	struct gl_sha256 st;
	gl_sha256_init(&st);
	unsigned char buf[65536];
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof buf, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		gl_sha256_update(&st, buf, (size_t)n);
		off += n;
	}
	unsigned char h[GL_SHA256_BYTES];
	gl_sha256_final(&st, h);
	gl_hex(h, sizeof h, out);
	return 0;
}

int gl_write_file_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(s);
	ssize_t w;
	do
		w = write(fd, s, n);
	while (w < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)n ? 0 : -1;
}

char *gl_quote(const char *s, size_t len)
{
	size_t n = len > 64 ? 64 : len;
	char *safe = gl_sanitize(s, n);
	char *out = gl_xasprintf("\"%s\"%s", safe, n < len ? "…" : "");
	free(safe);
	return out;
}

bool gl_sha256_hex_ok(const char *s, size_t len)
{
	if (len != 64)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] >= '0' && s[i] <= '9') && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return true;
}

void gl_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
