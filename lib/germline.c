/* germline.c — verified launch of a germline, fork requests, kill and stop
 * (paper §IV-D, §VI "Germline and copies"; SPEC §9, §10). See germline.h,
 * docs/design/run.md and docs/sandbox.md. */
#define _GNU_SOURCE
#include "germline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "germline_impl.h"
#include "json.h"
#include "proc.h"
#include "sandbox.h"
#include "util.h"

#define LAUNCH_TIMEOUT_MS 30000 /* exec observed and "ready" received */

const char *gl_launch_step_name(enum gl_launch_step s)
{
	switch (s) {
	case GL_LAUNCH_OK: return "ok";
	case GL_LAUNCH_OPEN_INTERPRETER: return "open_interpreter";
	case GL_LAUNCH_SOCKET: return "socket";
	case GL_LAUNCH_FORK: return "fork";
	case GL_LAUNCH_USERNS: return "userns";
	case GL_LAUNCH_NAMESPACES: return "namespaces";
	case GL_LAUNCH_DESCRIPTORS: return "descriptors";
	case GL_LAUNCH_LANDLOCK: return "landlock";
	case GL_LAUNCH_SECCOMP: return "seccomp";
	case GL_LAUNCH_NO_NEW_PRIVS: return "no_new_privs";
	case GL_LAUNCH_EXEC: return "exec";
	case GL_LAUNCH_HANDSHAKE: return "handshake";
	}
	return "?";
}

/* What the child writes on the status pipe before _exit (SPEC §9). */
struct launch_status {
	int32_t step, err, what;
};
enum { W_NONE, W_SETGROUPS, W_UID_MAP, W_GID_MAP, W_CHDIR, W_PDEATHSIG, W_PARENT_GONE };
static const char *const what_name[] = {"", "setgroups", "uid_map", "gid_map", "chdir",
					"PR_SET_PDEATHSIG", "the broker exited"};

/* Everything the child needs, prepared before fork: the child only makes
 * syscalls (the broker may have threads; malloc after fork is unsafe). */
struct launch_prep {
	int interp, ctl_child, devnull, status_w, ruleset;
	pid_t parent;
	const char *release_dir;
	char uid_map[64], gid_map[64];
	char *argv[7];
	char *envp[12];
	struct gl_bpf bpf;
	unsigned off; /* GL_TESTING only */
	unsigned sim; /* GL_TESTING only: SIM_* kernel features pretended missing */
};
enum { SIM_NO_USERNS = 1u << 0, SIM_NO_NETNS = 1u << 1 };

GL_NORETURN static void child_fail(int sfd, enum gl_launch_step step, int what)
{
	struct launch_status m = {(int32_t)step, errno, what};
	ssize_t r;
	do
		r = write(sfd, &m, sizeof m);
	while (r < 0 && errno == EINTR);
	_exit(127);
}

/* The launch child, between fork and execveat (SPEC §9 verified launch). */
GL_NORETURN static void launch_child(const struct launch_prep *p)
{
	int sfd = p->status_w;
	/* A broker holding a secret (gl-run --host-key) is not dumpable, which
	 * makes /proc/self/{setgroups,uid_map} root's and unwritable for an
	 * unprivileged broker. The child holds no secret (the key's pages are
	 * MADV_WIPEONFORK: lib/receipt.c) and execs next; exec resets it anyway. */
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (p->sim & SIM_NO_USERNS) { /* GL_TESTING builds only: p->sim is 0 otherwise */
		errno = EPERM;
		child_fail(sfd, GL_LAUNCH_USERNS, W_NONE);
	}
	/* Own user namespace (root inside, our uid outside): works for root and
	 * for an unprivileged broker alike. */
	if (unshare(CLONE_NEWUSER) < 0)
		child_fail(sfd, GL_LAUNCH_USERNS, W_NONE);
	if (gl_write_file_str("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		child_fail(sfd, GL_LAUNCH_USERNS, W_SETGROUPS);
	if (gl_write_file_str("/proc/self/uid_map", p->uid_map) < 0)
		child_fail(sfd, GL_LAUNCH_USERNS, W_UID_MAP);
	if (gl_write_file_str("/proc/self/gid_map", p->gid_map) < 0)
		child_fail(sfd, GL_LAUNCH_USERNS, W_GID_MAP);
	/* No network, no System V / POSIX IPC shared with anything (A1). */
	int ns = CLONE_NEWNET | CLONE_NEWIPC;
	if (p->off & GL_OFF_NEWNET)
		ns &= ~CLONE_NEWNET; /* GL_TESTING builds only: p->off is 0 otherwise */
	if (p->sim & SIM_NO_NETNS)
		errno = EPERM;
	if ((p->sim & SIM_NO_NETNS) || unshare(ns) < 0)
		child_fail(sfd, GL_LAUNCH_NAMESPACES, W_NONE);

	/* Descriptors (O1): first every keeper above 10, then /dev/null on 0-2,
	 * the control socket on 3, the retained interpreter on 4, the status
	 * pipe on 5 and the ruleset on 6 (all three close-on-exec), then close
	 * everything else. */
	int keep[5] = {p->devnull, p->ctl_child, p->interp, p->status_w, p->ruleset};
	for (int i = 0; i < 5; i++) {
		if (keep[i] < 0)
			continue;
		keep[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, 10);
		if (keep[i] < 0)
			child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_NONE);
		if (i == 3)
			sfd = keep[3];
	}
	if (dup2(keep[0], 0) < 0 || dup2(keep[0], 1) < 0 || dup2(keep[0], 2) < 0 ||
	    dup2(keep[1], 3) < 0 || dup3(keep[2], 4, O_CLOEXEC) < 0)
		child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_NONE);
	if (dup3(keep[3], 5, O_CLOEXEC) < 0)
		child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_NONE);
	sfd = 5;
	if (keep[4] >= 0 && dup3(keep[4], 6, O_CLOEXEC) < 0)
		child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_NONE);
	if (syscall(SYS_close_range, 7u, ~0u, 0u) < 0)
		child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_NONE);
	if (chdir(p->release_dir) < 0)
		child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_CHDIR);

	/* The germline dies with the broker (the thread that launched it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_PDEATHSIG);
	if (getppid() != p->parent) {
		errno = ESRCH;
		child_fail(sfd, GL_LAUNCH_FORK, W_PARENT_GONE);
	}
	/* Read-only allowlist, TCP denied, scoped (A1, A2). Allowed without
	 * no_new_privs: we hold CAP_SYS_ADMIN in the new user namespace. */
	if (p->ruleset >= 0) {
		if (gl_landlock_restrict(6) < 0)
			child_fail(sfd, GL_LAUNCH_LANDLOCK, W_NONE);
		close(6);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(sfd, GL_LAUNCH_NO_NEW_PRIVS, W_NONE);
	if (p->bpf.len && gl_seccomp_install(&p->bpf) < 0)
		child_fail(sfd, GL_LAUNCH_SECCOMP, W_NONE);
	/* The retained descriptor, never the path (SPEC §9): a file swapped
	 * after it was hashed never runs. */
	syscall(SYS_execveat, 4, "", p->argv, p->envp, AT_EMPTY_PATH);
	child_fail(sfd, GL_LAUNCH_EXEC, W_NONE);
}

/* ---- parent side ------------------------------------------------------- */

/* "python3.11" -> "3.11", from the interpreter's real name; NULL if not. */
static const char *py_version(const char *real)
{
	const char *b = strrchr(real, '/');
	b = b ? b + 1 : real;
	if (strncmp(b, "python3.", 8) || !b[8] || strspn(b + 8, "0123456789") != strlen(b + 8))
		return NULL;
	return b + 6;
}

static int reap(pid_t pid)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static const char *launch_hint(enum gl_launch_step step, int e)
{
	if (step == GL_LAUNCH_USERNS && (e == EPERM || e == ENOSPC || e == EACCES))
		return " (user namespaces are disabled or exhausted: kernel.unprivileged_userns_clone, "
		       "user.max_user_namespaces, or an LSM such as AppArmor's "
		       "restrict_unprivileged_userns)";
	if (step == GL_LAUNCH_USERNS && e == EINVAL)
		return " (the broker is in a chroot or the uid/gid is not mapped)";
	if (step == GL_LAUNCH_NAMESPACES && (e == EPERM || e == ENOSPC))
		return " (network or IPC namespaces are disabled or exhausted)";
	if (step == GL_LAUNCH_LANDLOCK && (e == ENOSYS || e == EOPNOTSUPP))
		return " (Landlock is not built into this kernel or not enabled: add landlock to lsm= "
		       "on the kernel command line)";
	if (step == GL_LAUNCH_SECCOMP && e == EINVAL)
		return " (the kernel lacks seccomp filters: CONFIG_SECCOMP_FILTER)";
	if (step == GL_LAUNCH_EXEC && e == EACCES)
		return " (the interpreter is not executable, or Landlock denied its execution)";
	return "";
}

/* Read the status pipe: 0 = exec observed (EOF, no bytes), else the failed step. */
static enum gl_launch_step read_status(int fd, const struct timespec *deadline, char **err)
{
	struct launch_status m;
	size_t got = 0;
	while (got < sizeof m) {
		int r = gl_ctl_wait_readable(fd, deadline);
		if (r <= 0) {
			*err = gl_xstrdup("launch: no exec observed within the time limit");
			return GL_LAUNCH_EXEC;
		}
		ssize_t n = read(fd, (char *)&m + got, sizeof m - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*err = gl_xasprintf("launch: status pipe: %s", strerror(errno));
			return GL_LAUNCH_EXEC;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == 0)
		return GL_LAUNCH_OK;
	if (got != sizeof m || m.step <= GL_LAUNCH_OK || m.step > GL_LAUNCH_HANDSHAKE ||
	    m.what < 0 || m.what > W_PARENT_GONE) {
		*err = gl_xstrdup("launch: malformed status from the launch child");
		return GL_LAUNCH_EXEC;
	}
	enum gl_launch_step step = (enum gl_launch_step)m.step;
	*err = gl_xasprintf("launch failed at %s%s%s: %s%s", gl_launch_step_name(step),
			    m.what ? " " : "", what_name[m.what], strerror(m.err),
			    launch_hint(step, m.err));
	return step;
}

/* Paths the germline may read and execute (A2: initialisation sees only
 * these; none holds user data). n returned; list[] borrows strings from
 * spec and from the static buffers of *bufs. */
struct path_bufs {
	char stdlib[64], local[96], etc[64];
};
static size_t allowlist(const struct gl_launch_spec *spec, const char *interp_real,
			struct path_bufs *b, const char **list, size_t cap)
{
	size_t n = 0;
#define ADD(p)                          \
	do {                            \
		if (n < cap)            \
			list[n++] = (p); \
	} while (0)
	ADD(interp_real);
	const char *ver = py_version(interp_real);
	if (ver) {
		snprintf(b->stdlib, sizeof b->stdlib, "/usr/lib/python%s", ver);
		snprintf(b->local, sizeof b->local, "/usr/local/lib/python%s/dist-packages", ver);
		snprintf(b->etc, sizeof b->etc, "/etc/python%s", ver); /* sitecustomize */
		ADD(b->stdlib);
		ADD(b->local);
		ADD(b->etc);
	}
	ADD("/usr/lib/python3/dist-packages");
	ADD("/usr/lib/x86_64-linux-gnu");
	ADD("/lib64");
	ADD("/etc/ld.so.cache");
	ADD("/etc/localtime");
	ADD("/usr/share/zoneinfo");
	ADD(spec->host_dir);
	ADD(spec->release_dir);
	for (size_t i = 0; spec->read_paths && spec->read_paths[i]; i++)
		ADD(spec->read_paths[i]);
#undef ADD
	return n;
}

static void launch_cleanup(struct launch_prep *p)
{
	int *fds[] = {&p->interp, &p->ctl_child, &p->devnull, &p->status_w, &p->ruleset};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	gl_bpf_free(&p->bpf);
}

static enum gl_launch_step launch_fail(struct gl_germline *g, struct launch_prep *p,
				       enum gl_launch_step step, char **err, char *msg)
{
	launch_cleanup(p);
	if (g->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
	else if (g->pid > 0)
		kill(g->pid, SIGKILL);
	if (g->pid > 0) {
		g->wait_status = reap(g->pid);
		g->reaped = true;
	}
	if (g->pidfd >= 0)
		close(g->pidfd);
	if (g->ctl >= 0)
		close(g->ctl);
	g->pid = -1;
	g->pidfd = g->ctl = -1;
	*err = msg;
	return step;
}

/* Prepare everything before the fork; GL_LAUNCH_OK or the failed step. */
static enum gl_launch_step launch_prepare(const struct gl_launch_spec *spec, struct gl_germline *g,
					  struct launch_prep *p, char *interp_real, char **err)
{
	if (!realpath(spec->interpreter, interp_real)) {
		*err = gl_xasprintf("interpreter %s: %s", spec->interpreter, strerror(errno));
		return GL_LAUNCH_OPEN_INTERPRETER;
	}
	p->interp = open(interp_real, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (p->interp < 0 || fstat(p->interp, &st) < 0 || !S_ISREG(st.st_mode) ||
	    gl_sha256_fd_hex(p->interp, g->interpreter_sha256) < 0) {
		*err = gl_xasprintf("interpreter %s: %s", interp_real,
				    p->interp < 0 || errno ? strerror(errno) : "not a regular file");
		return GL_LAUNCH_OPEN_INTERPRETER;
	}
#ifdef GL_TESTING
	if (gl_launch_test.after_open)
		gl_launch_test.after_open(interp_real); /* the swap test */
	/* The test build of gl-run (build/testing/bin, never bin/): swap the
	 * interpreter after it was opened, pretend kernel features missing. */
	const char *swap = getenv("GL_TEST_SWAP_INTERPRETER");
	if (swap && *swap && rename(swap, interp_real) < 0) {
		*err = gl_xasprintf("GL_TEST_SWAP_INTERPRETER: %s", strerror(errno));
		return GL_LAUNCH_OPEN_INTERPRETER;
	}
	p->sim = (getenv("GL_TEST_NO_USERNS") ? SIM_NO_USERNS : 0) |
		 (getenv("GL_TEST_NO_NETNS") ? SIM_NO_NETNS : 0);
	unsigned off = gl_launch_test.off;
#else
	const unsigned off = 0;
#endif
	p->off = off;

	/* Landlock: detected once; fail closed below the profile's ABI. */
	int abi = gl_landlock_abi();
	int required = spec->min_landlock_abi > 0 ? spec->min_landlock_abi : GL_LANDLOCK_ABI_REQUIRED;
	g->enf.landlock_abi = abi > 0 ? abi : 0;
	if (abi < 0) {
		int e = errno;
		*err = gl_xasprintf("Landlock unavailable: %s%s", strerror(e), launch_hint(GL_LAUNCH_LANDLOCK, e));
		return GL_LAUNCH_LANDLOCK;
	}
	if (abi < required) {
		*err = gl_xasprintf("Landlock ABI %d is below the required %d (%s); refusing to run "
				    "with less",
				    abi, required,
				    abi < 4 ? "TCP bind and connect cannot be denied"
					    : "abstract unix sockets and signals cannot be scoped");
		return GL_LAUNCH_LANDLOCK;
	}
	g->enf.landlock_abi = abi;
	if (!(off & GL_OFF_LANDLOCK)) {
		struct path_bufs bufs;
		const char *list[64];
		size_t n = allowlist(spec, interp_real, &bufs, list, 64);
		const char *bad;
		p->ruleset = gl_landlock_germline_ruleset(abi, list, n, p->interp, &bad);
		if (p->ruleset < 0) {
			int e = errno;
			*err = gl_xasprintf("Landlock ruleset (%s): %s%s", bad ? bad : "create", strerror(e),
					    launch_hint(GL_LAUNCH_LANDLOCK, e));
			return GL_LAUNCH_LANDLOCK;
		}
		g->enf.fs_enforced = true;
		g->enf.net_enforced = abi >= 4;
		g->enf.scoped_enforced = abi >= 6;
	}

	/* seccomp: the germline's program, and the hash of the copies'. */
	char *serr = NULL;
#ifdef GL_TESTING
	if (getenv("GL_TEST_NO_SECCOMP")) {
		*err = gl_xstrdup("seccomp filters unavailable (GL_TEST_NO_SECCOMP: the kernel lacks "
				  "CONFIG_SECCOMP_FILTER)");
		return GL_LAUNCH_SECCOMP;
	}
#endif
	if (!(off & GL_OFF_SECCOMP)) {
		if (gl_seccomp_build(GL_FILTER_GERMLINE, &p->bpf, &serr) < 0) {
			*err = serr;
			return GL_LAUNCH_SECCOMP;
		}
		struct gl_bpf copy;
		if (gl_seccomp_build(GL_FILTER_COPY, &copy, &serr) < 0) {
			*err = serr;
			return GL_LAUNCH_SECCOMP;
		}
		gl_bpf_sha256(&copy, g->enf.seccomp_filter_sha256);
		gl_bpf_free(&copy);
		g->enf.seccomp_enforced = true;
	}

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		*err = gl_xasprintf("control socketpair: %s", strerror(errno));
		return GL_LAUNCH_SOCKET;
	}
	g->ctl = sv[0];
	p->ctl_child = sv[1];
	g->ctl_ino = gl_proc_socket_ino(sv[1]);
	return GL_LAUNCH_OK;
}

enum gl_launch_step gl_germline_launch(const struct gl_launch_spec *spec, struct gl_germline *g,
				       char **err)
{
	*err = NULL;
	memset(g, 0, sizeof *g);
	g->pid = -1;
	g->pidfd = g->ctl = -1;
	static const char *const ns[] = {"ipc", "net", "pid", "user", NULL};
	memcpy(g->enf.namespaces, ns, sizeof ns);

	struct launch_prep p = {.interp = -1, .ctl_child = -1, .devnull = -1, .status_w = -1,
				.ruleset = -1, .parent = getpid()};
	/* Absolute, resolved once: the germline runs in the release dir. */
	char interp_real[PATH_MAX], release_real[PATH_MAX], host_real[PATH_MAX];
	if (!realpath(spec->release_dir, release_real) || !realpath(spec->host_dir, host_real))
		return launch_fail(g, &p, GL_LAUNCH_OPEN_INTERPRETER, err,
				   gl_xasprintf("release or host directory: %s", strerror(errno)));
	struct gl_launch_spec rs = *spec;
#ifdef GL_TESTING
	const char *ti = getenv("GL_TEST_INTERPRETER");
	if (ti && *ti)
		rs.interpreter = ti;
#endif
	rs.release_dir = p.release_dir = release_real;
	rs.host_dir = host_real;
	spec = &rs;
	char *msg = NULL;
	enum gl_launch_step step = launch_prepare(spec, g, &p, interp_real, &msg);
	if (step != GL_LAUNCH_OK)
		return launch_fail(g, &p, step, err, msg);

	int status[2];
	if (pipe2(status, O_CLOEXEC) < 0 || (p.devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return launch_fail(g, &p, GL_LAUNCH_DESCRIPTORS, err,
				   gl_xasprintf("status pipe or /dev/null: %s", strerror(errno)));
	autoclose int status_r = status[0];
	p.status_w = status[1];
	snprintf(p.uid_map, sizeof p.uid_map, "0 %u 1\n", (unsigned)geteuid());
	snprintf(p.gid_map, sizeof p.gid_map, "0 %u 1\n", (unsigned)getegid());
	autofree char *script = gl_xasprintf("%s/germline_host.py", spec->host_dir);
	char *argv[] = {"python3", "-I", "-B", script, (char *)spec->release_dir, (char *)spec->entry, NULL};
	memcpy(p.argv, argv, sizeof argv);
	/* Numeric libraries pinned to one thread: G1 (A2) needs a one-thread germline. */
	autofree char *prof = spec->profile ? gl_xasprintf("GL_PROFILE=%s", spec->profile) : NULL;
	char *envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/nonexistent",
			"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1",
			"NUMEXPR_NUM_THREADS=1", "VECLIB_MAXIMUM_THREADS=1", prof, NULL};
	memcpy(p.envp, envp, sizeof envp);

	g->pid = fork();
	if (g->pid < 0)
		return launch_fail(g, &p, GL_LAUNCH_FORK, err, gl_xasprintf("fork: %s", strerror(errno)));
	if (g->pid == 0)
		launch_child(&p);
	launch_cleanup(&p); /* our copies of the child's descriptors */
	g->pidfd = (int)syscall(SYS_pidfd_open, g->pid, 0);
	if (g->pidfd < 0)
		return launch_fail(g, &p, GL_LAUNCH_FORK, err, gl_xasprintf("pidfd_open: %s", strerror(errno)));

	struct timespec deadline;
	gl_ctl_deadline_in(&deadline, LAUNCH_TIMEOUT_MS);
	step = read_status(status_r, &deadline, &msg);
	if (step != GL_LAUNCH_OK)
		return launch_fail(g, &p, step, err, msg);
	g->exec_observed = true; /* SPEC §9: every restriction installed, the exec seen */

	/* Exec observed. Now the host's handshake: the entry module imported. */
	autofree char *buf = gl_xmalloc(GL_CTL_MSG_MAX);
	int fds[1], nfds;
	ssize_t n = gl_ctl_recv(g->ctl, buf, GL_CTL_MSG_MAX, fds, 0, &nfds, &deadline, &msg);
	if (n < 0) {
		char *m = gl_xasprintf("handshake: %s", msg);
		free(msg);
		return launch_fail(g, &p, GL_LAUNCH_HANDSHAKE, err, m);
	}
	if (n == 0)
		return launch_fail(g, &p, GL_LAUNCH_HANDSHAKE, err,
				   gl_xstrdup("handshake: the germline exited before it was ready"));
	const char *op;
	jv v = gl_ctl_parse(buf, (size_t)n, &op);
	if (op && !strcmp(op, "ready") && jv_object_length(jv_copy(v)) == 1) {
		jv_free(v);
		return GL_LAUNCH_OK;
	}
	if (op && !strcmp(op, "error")) {
		autofree char *d = gl_ctl_detail(v);
		jv_free(v);
		return launch_fail(g, &p, GL_LAUNCH_HANDSHAKE, err,
				   gl_xasprintf("the release's entry module failed to import: %s", d));
	}
	jv_free(v);
	return launch_fail(g, &p, GL_LAUNCH_HANDSHAKE, err,
			   gl_xstrdup("handshake: malformed message from the germline"));
}

void gl_germline_end(struct gl_germline *g, int *code, bool *stopped)
{
	*code = 0;
	*stopped = false;
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (g->pidfd >= 0) {
		/* Already gone? Look without reaping (WNOWAIT). */
		if (waitid(P_PIDFD, (id_t)g->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == 0) {
			syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
			*stopped = true;
			while (waitid(P_PIDFD, (id_t)g->pidfd, &si, WEXITED | WNOWAIT) < 0 &&
			       errno == EINTR)
				;
		}
		*code = si.si_code == CLD_EXITED ? si.si_status : -si.si_status;
	}
	gl_germline_stop(g);
}

char *gl_host_dir(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			char *dir = gl_xasprintf("%s/../lib/germline", exe);
			autofree char *probe = gl_xasprintf("%s/germline_host.py", dir);
			if (access(probe, R_OK) == 0)
				return dir;
			free(dir);
		}
	}
	return gl_xstrdup(GL_BUILD_HOST_DIR);
}
