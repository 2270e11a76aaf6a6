/* germline_impl.h — internals shared by lib/runtime/germline.c (launch),
 * lib/runtime/germline_fork.c (fork requests, kill, stop) and
 * lib/runtime/germline_pool.c (the pool); not an interface. */
#ifndef GL_GERMLINE_IMPL_H
#define GL_GERMLINE_IMPL_H

#include <jv.h>
#include <sys/types.h>
#include <time.h>

#include "sandbox/sandbox.h"

#define GL_CTL_MSG_MAX 65536 /* largest control message read from a germline */

void gl_ctl_deadline_in(struct timespec *d, int ms);
int gl_ctl_ms_left(const struct timespec *deadline);
/* poll one descriptor for input until deadline: 1 ready, 0 timeout, -1 error. */
int gl_ctl_wait_readable(int fd, const struct timespec *deadline);
/* One control message (SOCK_SEQPACKET) within the deadline, into buf
 * (NUL-terminated; cap includes the NUL); the descriptors attached go to
 * fds[0..maxfds). More descriptors than that, or a truncated message, is an
 * error and closes them all. Returns the length, 0 on EOF, -1 with f
 * (germline; the caller names the step). */
ssize_t gl_ctl_recv(int ctl, char *buf, size_t cap, int *fds, int maxfds, int *nfds,
		    const struct timespec *deadline, struct gl_fail *f);
/* A pooled copy nobody took, killed and closed (lib/runtime/germline_pool.c). */
struct gl_germline;
void gl_germline_pool_drop(struct gl_germline *g);
/* Parse a control message: an object (else jv_invalid()); *op its "op" string or NULL. */
jv gl_ctl_parse(const char *buf, size_t n, const char **op);
/* The "detail" of an {"op":"error"} message, sanitized and capped (malloc'd). Borrows v. */
char *gl_ctl_detail(jv v);

/* Paths the germline may read and execute (A2: initialisation sees only
 * these; none holds user data): the interpreter, its standard library and
 * site directories, the system paths (lib/sandbox/landlock.c
 * gl_landlock_system_paths), the host dir, the release, read_paths. n
 * returned; list[] borrows from spec and *b. lib/runtime/germline_allow.c. */
struct gl_path_bufs {
	char stdlib[64], local[96], etc[64];
	struct gl_syspaths sys;
};
struct gl_launch_spec;
size_t gl_germline_allowlist(const struct gl_launch_spec *spec, const char *interp_real,
			     struct gl_path_bufs *b, const char **list, size_t cap);

#ifdef GL_TESTING
/* Test-only switches, compiled into tests/unit/germline_drive.c alone (it
 * includes the lib/ sources with GL_TESTING defined); libgermline.a, hence
 * gl-run, has none of this. */
struct gl_launch_test {
	unsigned off;      /* GL_OFF_LANDLOCK, GL_OFF_SECCOMP: the germline's own */
	int no_copy_check; /* skip gl_proc_check_copy after a fork */
	unsigned copy_off; /* sent in the fork request; honoured by a GL_TESTING extension only */
	void (*after_open)(const char *interpreter); /* swap the file after it was opened */
};
extern struct gl_launch_test gl_launch_test;
#endif

#endif
