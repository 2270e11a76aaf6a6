/* sandbox.h — the kernel restrictions of germlines and copies: Landlock
 * (ABI detected once, rights the kernel lacks cleared), libseccomp filters,
 * capabilities and descriptor hygiene (paper §VI "Germline and copies",
 * Table XIII A1; SPEC §9, §10). docs/sandbox.md lists every restriction and
 * the obligation or assumption it serves.
 *
 * Everything that runs between fork and exec (the launch child) or between
 * clone and the first Python code (a copy) is async-signal-safe: rulesets
 * and BPF programs are built before the fork, the child only makes
 * syscalls. Functions return 0 or -1 with errno set unless said otherwise. */
#ifndef GL_SANDBOX_H
#define GL_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fail.h"

/* The lowest Landlock ABI the profile accepts: 6 scopes abstract unix
 * sockets and signals (A1). Below it a launch fails closed. */
#define GL_LANDLOCK_ABI_REQUIRED 6
/* The highest ABI whose rights this file knows; a newer kernel is used at
 * this level (its extra rights are not requested). */
#define GL_LANDLOCK_ABI_KNOWN 7

/* The Landlock ABI of the running kernel (at most GL_LANDLOCK_ABI_KNOWN),
 * or -1 with errno ENOSYS / EOPNOTSUPP (not built, or not enabled at boot).
 * A build with GL_TESTING honours GL_TEST_LANDLOCK_ABI=N to lower it. */
int gl_landlock_abi(void);

/* The germline's ruleset (A1, A2: initialisation reads only the allowlist,
 * writes nothing): every filesystem right of the ABI is handled, and each
 * path of paths[0..n) gets EXECUTE|READ_FILE (|READ_DIR for directories)
 * and nothing else; TCP bind/connect handled and never granted (ABI >= 4);
 * abstract unix sockets and signals scoped (ABI >= 6). Paths that do not
 * exist are skipped. extra_fd, if >= 0, is a file (the retained
 * interpreter) given the same read/execute rule by its inode, so the rule
 * follows the retained bytes even if the path is swapped. Returns the
 * ruleset descriptor (close-on-exec) or -1 with errno and *bad naming the
 * path that failed. */
int gl_landlock_germline_ruleset(int abi, const char *const *paths, size_t n, int extra_fd,
				 const char **bad);
/* The copy's extra layer: every write right handled with no rule (no
 * writable path), TCP bind/connect denied, abstract sockets and signals
 * scoped to the copy's own domain. */
int gl_landlock_copy_ruleset(int abi);
/* An exec copy's ruleset (lib/runtime/exec_launch.c): like the germline's (read and
 * execute on paths[0..n) and on the files extra_fds[0..nfd)), plus every
 * right but EXECUTE beneath write_dir when it is not NULL (the copy's
 * scratch directory), read and write on /dev/null, and TCP connect to the
 * ports[0..nport) only (none: no connect) where the ABI handles TCP (>= 4).
 * Returns the ruleset or -1 with errno and *bad. */
int gl_landlock_exec_ruleset(int abi, const char *const *paths, size_t n, const int *extra_fds,
			     size_t nfd, const char *write_dir, const int *ports, size_t nport,
			     const char **bad);
/* An item of an exec copy's view (lib/runtime/exec_launch.c): READ_FILE on the file fd,
 * or READ_FILE|READ_DIR beneath the directory fd (dir). Nothing else: no
 * execute, no write. 0, or -1 with errno. */
int gl_landlock_allow_item(int ruleset_fd, int fd, bool dir);
/* landlock_restrict_self(ruleset, 0). Async-signal-safe. */
int gl_landlock_restrict(int ruleset_fd);

/* The system paths every germline and exec copy reads (A1, A2: public code
 * and data, no user data), in this order: the directory of the running
 * system's C library (its multiarch directory, found from the loaded libc,
 * not spelled), /lib64 (the loader), /etc/ld.so.cache, /etc/localtime,
 * /usr/share/zoneinfo, then the library alternatives: each versioned
 * shared library of that directory that is a symlink to
 * /etc/alternatives/NAME (Debian's update-alternatives, e.g. libblas.so.3
 * for numpy) whose final file lies in that directory again, as the link
 * /etc/alternatives/NAME (at most GL_SYSPATHS_ALT; the rest dangle, as
 * before). The first is skipped if it cannot be found (a launch then fails
 * closed: nothing can load). list[0..n) borrows from *sp and static
 * storage; n returned (at most 5 + GL_SYSPATHS_ALT). lib/sandbox/landlock.c. */
#define GL_SYSPATHS_ALT 6
struct gl_syspaths {
	char libdir[4096];
	char alt[GL_SYSPATHS_ALT][256];
};
size_t gl_landlock_system_paths(struct gl_syspaths *sp, const char **list, size_t cap);

/* A compiled seccomp program (struct sock_filter[]), built with libseccomp
 * before the fork and installed in the child with one prctl. */
struct gl_bpf {
	void *insns;
	size_t len; /* bytes */
};
enum gl_filter {
	GL_FILTER_GERMLINE, /* the copy's rules, but clone may create pid/net/ipc namespaces */
	GL_FILTER_COPY,
	/* An exec copy (lib/runtime/exec.c): the copy's rules, but socket() may
	 * create AF_INET stream sockets (never AF_UNIX ones: no pathname
	 * socket can be reached) and connect() is allowed, for the HTTP
	 * relay on 127.0.0.1:80 of its own network namespace; Landlock
	 * allows TCP connect to port 80 only. socketpair stays AF_UNIX. */
	GL_FILTER_EXEC,
};
/* Build a filter; 0, or -1 with f (bootstrap_failed: seccomp, a restriction
 * not installed; SPEC §9). */
int gl_seccomp_build(enum gl_filter which, struct gl_bpf *out, struct gl_fail *f);
void gl_bpf_free(struct gl_bpf *b);
/* SHA-256 of the exported program (what receipts call seccomp_filter_sha256). */
void gl_bpf_sha256(const struct gl_bpf *b, char out[65]);
/* prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER). Needs no_new_privs (or
 * CAP_SYS_ADMIN in the user namespace). Async-signal-safe. */
int gl_seccomp_install(const struct gl_bpf *b);

/* Drop every capability (effective, permitted, inheritable, ambient) of
 * the calling thread. Async-signal-safe. */
int gl_caps_drop_all(void);

/* A copy's number in its germline's PID namespace, the same for every copy
 * (init 1, germline 2): hosts/common/fork_server.c clones with set_tid, the
 * broker checks it (lib/runtime/germline_fork.c). */
#define GL_COPY_PID 3
#define GL_COPY_LANES 64 /* = GL_JOBS_MAX: copy numbers GL_COPY_PID + lane (gl-run --jobs) */

/* Confinement of a freshly cloned copy (Algorithm 1 line 9), in order.
 * Each step that fails is named so the child can die with a reason. */
enum gl_confine_step {
	GL_CONFINE_OK = 0,
	GL_CONFINE_PDEATHSIG,
	GL_CONFINE_CHANNEL,   /* channel to fd 3 */
	GL_CONFINE_LANDLOCK,
	GL_CONFINE_NO_NEW_PRIVS,
	GL_CONFINE_CAPS,
	GL_CONFINE_SECCOMP,
	GL_CONFINE_DESCRIPTORS, /* close_range(4, ~0U) */
	GL_CONFINE_DEVNULL,     /* a /dev/null of its own on 0-2 */
	GL_CONFINE_UID,         /* its lane's uid and gid (lib/sandbox/uids.h) */
};
/* Test-only switches (compiled in only where GL_TESTING is defined: the
 * test build of the extension, never build/host/_germline.so). */
enum {
	GL_OFF_LANDLOCK = 1u << 0,
	GL_OFF_SECCOMP = 1u << 1,
	GL_OFF_FDCLOSE = 1u << 2,
	GL_OFF_NEWPID = 1u << 3,
	GL_OFF_NEWNET = 1u << 4,
	GL_OFF_NEWIPC = 1u << 5,
	/* the germline's containment (lib/runtime/germline.c, hosts/common/fork_server.c) */
	GL_OFF_PIDNS = 1u << 6,   /* germline: no PID namespace and init of its own */
	GL_OFF_ROOT = 1u << 7,    /* germline: the host's filesystem, not the minimal root */
	GL_OFF_PARENT = 1u << 8,  /* copy: the germline's child (no CLONE_PARENT) */
	GL_OFF_SIGNALS = 1u << 9, /* copy: the germline's signals unblocked while it runs */
	GL_OFF_ATFORK = 1u << 10, /* copy: the release's before/after_in_parent hooks run */
	GL_OFF_DEVNULL = 1u << 11, /* copy: keeps the germline's /dev/null on 0-2 (shared open files) */
	GL_OFF_PIDFIX = 1u << 12, /* copy: the next pid of the germline's namespace, not GL_COPY_PID */
};
struct gl_copy_confine {
	int channel;              /* the copy's end of its socketpair */
	int landlock_abi;         /* gl_landlock_abi(), checked by the caller */
	const struct gl_bpf *bpf; /* GL_FILTER_COPY */
	int sync_fd;              /* closed last: EOF tells the germline "confined"; or -1 */
	unsigned off;             /* 0 except in GL_TESTING builds */
	long uid;                 /* its uid and gid inside the germline's namespace (1 + lane,
				   * lib/sandbox/uids.h), or -1: the germline's */
	/* The runtime's own descriptors, each made the copy's own in place
	 * (lib/sandbox/private_fds.h: a Node germline's event loops); every
	 * other one from 4 up is closed. NULL: all from 4 up are closed. */
	const struct gl_private_fds *keep;
};
struct gl_private_fds;
enum gl_confine_step gl_confine_copy(const struct gl_copy_confine *c);
const char *gl_confine_step_name(enum gl_confine_step s);

#endif
