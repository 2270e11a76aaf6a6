/* util.h — process-wide helpers shared by every gl-* command.
 *
 * Error reporting follows one convention (SPEC §2): human messages go to
 * stderr prefixed "gl-NAME: ", exit codes mean one thing each. */
#ifndef GL_UTIL_H
#define GL_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Exit codes (SPEC §2), the same in every command. */
enum gl_exit {
	GL_EXIT_OK = 0,
	GL_EXIT_REFUSED = 1, /* verification / security refusal */
	GL_EXIT_USAGE = 2,   /* usage or I/O error */
};

/* Set once in main(): "gl-sign", "gl-verify", ... */
extern const char *gl_prog;

#define GL_NORETURN __attribute__((noreturn))
#define GL_PRINTF(a, b) __attribute__((format(printf, a, b)))

void gl_warn(const char *fmt, ...) GL_PRINTF(1, 2);
void gl_warn_errno(const char *fmt, ...) GL_PRINTF(1, 2);
GL_NORETURN void gl_die(int code, const char *fmt, ...) GL_PRINTF(2, 3);
GL_NORETURN void gl_die_errno(int code, const char *fmt, ...) GL_PRINTF(2, 3);

void *gl_xmalloc(size_t n);
void *gl_xcalloc(size_t n, size_t m);
void *gl_xrealloc(void *p, size_t n);
char *gl_xstrdup(const char *s);
char *gl_xasprintf(const char *fmt, ...) GL_PRINTF(1, 2);

/* __attribute__((cleanup)) helpers: early returns leak nothing. */
static inline void gl_freep(void *p) { free(*(void **)p); }
static inline void gl_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
static inline void gl_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
#define autofree __attribute__((cleanup(gl_freep)))
#define autoclose __attribute__((cleanup(gl_closep)))
#define autofclose __attribute__((cleanup(gl_fclosep)))
static inline void *gl_steal_ptr(void *pp)
{
	void **p = pp, *v = *p;
	*p = NULL;
	return v;
}
#define steal_pointer(pp) gl_steal_ptr(pp)
static inline int gl_steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

/* A growable byte buffer. */
struct gl_buf {
	char *data;
	size_t len, cap;
};
void gl_buf_reserve(struct gl_buf *b, size_t extra);
void gl_buf_add(struct gl_buf *b, const void *p, size_t n);
void gl_buf_addc(struct gl_buf *b, char c);
void gl_buf_adds(struct gl_buf *b, const char *s);
void gl_buf_printf(struct gl_buf *b, const char *fmt, ...) GL_PRINTF(2, 3);
void gl_buf_free(struct gl_buf *b);

/* Free a NULL-terminated array of malloc'd strings and the array (NULL: nothing). */
void gl_strv_free(char **v);
static inline void gl_buf_freep(struct gl_buf *b) { gl_buf_free(b); }
#define autobuf __attribute__((cleanup(gl_buf_freep)))

/* I/O, retrying on EINTR. Return 0 on success, -1 with errno set. */
int gl_write_all(int fd, const void *p, size_t n);
ssize_t gl_read_full(int fd, void *p, size_t n);
/* Read a whole file/descriptor, refusing more than cap bytes (errno EFBIG).
 * The buffer is NUL-terminated (not counted in *len). */
int gl_read_fd_capped(int fd, size_t cap, char **out, size_t *len);
int gl_read_file_capped(const char *path, size_t cap, char **out, size_t *len);
/* open(2) of path (flags, O_CLOEXEC added) resolving no symlink in any of
 * its components (openat2 RESOLVE_NO_SYMLINKS): an item is labelled by its
 * path, so it must be what that path names (docs/exec.md "Directory
 * items"). The descriptor, or -1 with errno (ELOOP: a symlink). */
int gl_open_no_symlinks(const char *path, int flags);

/* SHA-256 of a regular file's whole contents, read from fd with pread (the
 * offset is untouched), as 64 lowercase hex digits. 0, or -1 (errno). */
int gl_sha256_fd_hex(int fd, char out[65]);

/* Write s to an existing file (open O_WRONLY, one write, close): for
 * /proc/self/{uid_map,gid_map,setgroups} in a launch child between fork
 * and exec (no allocation). 0, or -1 with errno. */
int gl_write_file_str(const char *path, const char *s);

/* Atomic replacement (SPEC §2): write a temporary file in the same directory,
 * fsync it, rename over path, fsync the directory. A crash at any instant
 * leaves the previous or the new contents, never a torn file. */
int gl_atomic_write(const char *path, const void *data, size_t len, mode_t mode);
/* Remove the "PATH.tmp.XXXXXX" temporaries a writer killed inside
 * gl_atomic_write left beside path. Only for a caller that holds the lock
 * every writer of path holds while its temporary exists (then any such file
 * is stale). */
void gl_atomic_write_stale(const char *path);

/* mkdir -p with the given mode for created components. */
int gl_mkdir_p(const char *path, mode_t mode);
/* rm -rf that never follows symlinks; makes read-only directories writable
 * first so a read-only release tree can be removed. */
int gl_rm_rf(const char *path);

/* GL_HOME (SPEC §2): $GL_HOME, else ${XDG_STATE_HOME:-$HOME/.local/state}/germline.
 * Returned string is owned by the caller. */
char *gl_home(void);

/* Lowercase hex. out must hold 2n+1 bytes. */
void gl_hex(const unsigned char *in, size_t n, char *out);
/* Strict lowercase/uppercase hex decode of exactly 2n chars; 0 or -1. */
int gl_unhex(const char *in, size_t inlen, unsigned char *out, size_t n);

/* RFC 3339 UTC "YYYY-MM-DDTHH:MM:SSZ" <-> time_t. Parsing is strict. */
int gl_time_parse(const char *s, int64_t *out);
void gl_time_format(int64_t t, char out[21]);
/* Seconds since the epoch, UTC. */
int64_t gl_now(void);

/* Make a string safe to print: control bytes and invalid UTF-8 escaped.
 * For anything that came from a release or a metadata file. */
char *gl_sanitize(const char *s, size_t len);

/* Ignore SIGPIPE so a closed downstream becomes EPIPE, and make stdout line-friendly. */
void gl_stdio_init(const char *prog);



#define GL_VERSION "0.1.0"
/* A flag's value: "--name VALUE" or "--name=VALUE" at argv[*i] (advancing
 * *i past VALUE). NULL if argv[*i] is not that flag; a missing VALUE prints
 * the message and usage to stderr and exits GL_EXIT_USAGE. */
const char *gl_flag_value(int argc, char **argv, int *i, const char *name, const char *usage);

/* If argv[1] is --help or --version, print usage/version to stdout and exit 0. */
void gl_std_flags(int argc, char **argv, const char *usage);
/* A name from untrusted input, for a message: quoted, cut at 64 bytes and
 * made printable (malloc'd). */
char *gl_quote(const char *s, size_t len);

/* A release hash as it may appear in a path: exactly 64 of [0-9a-f]. */
bool gl_sha256_hex_ok(const char *s, size_t len);

/* A test build's switch: true when the environment variable name is "1".
 * Outside GL_TESTING builds it is the constant false and the name is never
 * compiled in, so bin/ holds no test switch (tests/receipts.bats). */
#ifdef GL_TESTING
#include <stdlib.h>
#include <string.h>
/* inline: a unit test that builds lib/ sources with GL_TESTING links them
 * against the production library (tests/unit/germline_drive.c) */
static inline bool gl_test_switch(const char *name)
{
	const char *v = getenv(name);
	return v && !strcmp(v, "1");
}
#define GL_TEST_SWITCH(name) gl_test_switch(name)
#else
#define GL_TEST_SWITCH(name) false
#endif

#endif
