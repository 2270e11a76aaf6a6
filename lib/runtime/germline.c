/* germline.c — the verified launch of a germline (paper §IV-D, §VI
 * "Germline and copies"; SPEC §9, §10): prepared, cloned, bounded, the exec
 * observed, the handshake. Fork requests, kill and stop are
 * lib/runtime/germline_fork.c's. See germline.h, docs/design/run.md and
 * docs/sandbox.md. */
#define _GNU_SOURCE
#include "runtime/germline.h"

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

#include "release/bounds.h"
#include "runtime/germline_child.h"
#include "runtime/germline_impl.h"
#include "json/json.h"
#include "sandbox/counters.h"
#include "sandbox/proc.h"
#include "sandbox/root.h"
#include "sandbox/sandbox.h"
#include "sandbox/scratch.h"
#include "core/util.h"

#define LAUNCH_TIMEOUT_MS 30000 /* exec observed and "ready" received */
#define NODE_SETTLE_MS 5000     /* a Node germline's threads back to waiting (node_settle) */

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
	case GL_LAUNCH_ROOT: return "minimal_root";
	case GL_LAUNCH_LIMITS: return "limits";
	case GL_LAUNCH_UIDS: return "host_uids";
	}
	return "?";
}

static const char *const what_name[] = {"", "setgroups", "uid_map", "gid_map", "chdir",
					"PR_SET_PDEATHSIG", "the broker exited", ""};

/* ---- parent side ------------------------------------------------------- */

/* The init exits with the germline's code, or 128 + the signal that
 * killed it (mirror_status): back to a wait status of the germline. */
static int germline_status(int st, bool init)
{
	if (init && WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + 65)
		return WEXITSTATUS(st) - 128; /* as if killed by that signal */
	return st;
}

static int reap(pid_t pid, bool init)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return germline_status(st, init);
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
	if (step == GL_LAUNCH_ROOT && (e == EPERM || e == ENOSYS || e == EINVAL))
		return " (mount namespaces or the new mount API (open_tree, move_mount, "
		       "mount_setattr: Linux 5.12) are unavailable)";
	return "";
}

/* Read the status pipe: 0 = exec observed (EOF, no bytes), else the failed step. */
static enum gl_launch_step read_status(int fd, const struct timespec *deadline,
				       const struct gl_root *root, struct gl_fail *f)
{
	struct launch_status m;
	size_t got = 0;
	while (got < sizeof m) {
		int r = gl_ctl_wait_readable(fd, deadline);
		if (r <= 0) {
			gl_fail(f, GL_E_BOOTSTRAP_FAILED,
				"launch: no exec observed within the time limit");
			return GL_LAUNCH_EXEC;
		}
		ssize_t n = read(fd, (char *)&m + got, sizeof m - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "launch: status pipe");
			return GL_LAUNCH_EXEC;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == 0)
		return GL_LAUNCH_OK;
	if (got != sizeof m || m.step <= GL_LAUNCH_OK || m.step > GL_LAUNCH_ROOT || m.what < 0 ||
	    m.what > W_ROOT + GL_ROOT_READONLY || m.bad < -1 || m.bad >= (int32_t)root->n) {
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "launch: malformed status from the launch child");
		return GL_LAUNCH_EXEC;
	}
	enum gl_launch_step step = (enum gl_launch_step)m.step;
	const char *what = m.what >= W_ROOT ? gl_root_step_name((enum gl_root_step)(m.what - W_ROOT))
					     : what_name[m.what];
	gl_fail(f, GL_E_BOOTSTRAP_FAILED, "launch failed at %s%s%s%s%s: %s%s",
		gl_launch_step_name(step), *what ? " " : "", what, m.bad >= 0 ? " " : "",
		m.bad >= 0 ? root->e[m.bad].path : "", strerror(m.err), launch_hint(step, m.err));
	return step;
}

static void launch_cleanup(struct launch_prep *p)
{
	int *fds[] = {&p->interp, &p->ctl_child, &p->devnull, &p->status_w, &p->ruleset,
		      &p->parent_pidfd, &p->go_r, &p->go_w};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	gl_bpf_free(&p->bpf);
}

/* SPEC §9: a restriction not installed before the exec is bootstrap_failed;
 * after it (the release's own import failed) the launch failed: f's code is
 * set here, whatever the failed step filled. */
static enum gl_launch_step launch_fail(struct gl_germline *g, struct launch_prep *p,
				       enum gl_launch_step step, struct gl_fail *f)
{
	launch_cleanup(p);
	gl_root_free(&p->root);
	if (g->has_init && g->exec_observed && g->pidfd >= 0) {
		/* A germline that exited by itself (its import failed) takes its
		 * init with it a moment later: let the init report its code
		 * rather than the SIGKILL below (bounded: it may also hang). */
		struct pollfd pf = {.fd = g->pidfd, .events = POLLIN};
		while (poll(&pf, 1, 200) < 0 && errno == EINTR)
			;
	}
	if (g->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, g->pidfd, SIGKILL, NULL, 0);
	else if (g->pid > 0)
		kill(g->pid, SIGKILL);
	if (g->pid > 0) {
		g->wait_status = reap(g->pid, g->has_init);
		g->reaped = true;
	}
	if (g->pidfd >= 0)
		close(g->pidfd);
	if (g->ctl >= 0)
		close(g->ctl);
	g->pid = -1;
	g->pidfd = g->ctl = -1;
	gl_uids_release(&g->uids); /* the init reaped: nothing of the namespace is left */
	if (g->mounter.pid > 0)
		gl_scratch_stop(&g->mounter);
	for (size_t i = 0; g->scratch_under && g->scratch_under[i]; i++)
		free(g->scratch_under[i]);
	free(g->scratch_under);
	g->scratch_under = NULL;
	if (g->launch_cg) {
		/* which bound the import reached, if a group counted it */
		const char *r = gl_cg_launch_reached(g->launch_cg, g->launch_cg_pid);
		if (r) {
			autofree char *d = gl_fail_steal(f);
			gl_fail_set(f, GL_E_LAUNCH, "%s (the germline reached its %s bound)", d, r);
		}
		gl_cg_germline_end(g->launch_cg, g->launch_cg_pid);
		g->launch_cg = NULL;
	}
	f->code = g->exec_observed ? GL_E_LAUNCH : GL_E_BOOTSTRAP_FAILED;
	return step;
}

/* Bound the launch child before it goes on (gl_cg_bound_launch), then the
 * go byte for which it waits (lib/runtime/germline_child.c). 0, or -1 with *f. */
static int bound_launch(const struct gl_launch_spec *spec, struct gl_germline *g,
			struct launch_prep *p, struct gl_fail *f)
{
	close(p->go_r);
	p->go_r = -1;
	if (spec->cg) {
		bool grouped = false;
		int rc = gl_cg_bound_launch(spec->cg, spec->limits, g->pid, &grouped, f);
		if (grouped) {
			g->launch_cg = spec->cg;
			g->launch_cg_pid = g->pid;
		}
		if (rc < 0)
			return -1;
	}
	/* the per-user counters' bounds (lib/sandbox/counters.h), before the
	 * release's import: the germline's and every copy's */
	if (!gl_counters_off() && gl_counters_bound(g->pid) < 0)
		return gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "limits: the per-user counters' rlimits");
	/* a delegated block: its maps, before the child takes inside 0 */
	if (p->parent_maps && gl_uids_map(spec->uids, &g->uids, g->pid, f) < 0)
		return -1;
	ssize_t w;
	do
		w = write(p->go_w, "g", 1);
	while (w < 0 && errno == EINTR);
	if (w != 1)
		return gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "go byte");
	close(p->go_w);
	p->go_w = -1;
	return 0;
}

/* The minimal root's /tmp: a tmpfs of the germline's own, bounded by
 * tmp_mb, writable under Landlock (lib/sandbox/scratch.h). With GL_TEST_SCRATCH_OFF
 * it is unbounded and shared by every copy. */
static int root_scratch(const struct gl_launch_spec *spec, struct gl_germline *g,
			struct launch_prep *p, int abi, struct gl_fail *f)
{
	g->tmp_mb = spec->tmp_mb ? spec->tmp_mb : GL_LIMITS_DEFAULT.tmp_mb;
	g->scratch = !gl_scratch_off();
	char opts[96] = "mode=0700";
	if (g->scratch)
		gl_scratch_options(opts, sizeof opts, g->tmp_mb);
	p->scratch_abi = p->ruleset >= 0 ? abi : 0;
	if (gl_root_add_tmpfs(&p->root, GL_SCRATCH_DIR, opts, f) < 0)
		return -1;
	/* binds beneath /tmp (a GL_HOME there), the outermost ones: each
	 * copy's tmpfs would hide them (gl_scratch_mount binds them again) */
	g->scratch_under = gl_xcalloc(GL_SCRATCH_NESTED_MAX + 1, sizeof *g->scratch_under);
	size_t k = 0;
	const char *last = NULL;
	for (size_t i = 0; i < p->root.n; i++) {
		const struct gl_root_entry *e = &p->root.e[i];
		size_t ll = last ? strlen(last) : 0;
		if (strncmp(e->path, GL_SCRATCH_DIR "/", sizeof GL_SCRATCH_DIR) ||
		    (last && !strncmp(e->path, last, ll) && e->path[ll] == '/'))
			continue;
		if (e->kind != GL_ROOT_BIND && e->kind != GL_ROOT_BIND_RW && e->kind != GL_ROOT_DEV)
			return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "minimal root: %s beneath /tmp is "
				       "not a bind mount", e->path);
		if (k == GL_SCRATCH_NESTED_MAX)
			return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "minimal root: more than %d mounts "
				       "beneath /tmp", GL_SCRATCH_NESTED_MAX);
		g->scratch_under[k++] = gl_xstrdup(last = e->path);
	}
	return 0;
}

/* The interpreter resolved, opened and hashed once: what is hashed is
 * what runs (SPEC §9, seed 002), executed from p->interp. */
static enum gl_launch_step open_interpreter(const struct gl_launch_spec *spec,
					    struct gl_germline *g, struct launch_prep *p,
					    char *interp_real, struct gl_fail *f)
{
	if (!realpath(spec->interpreter, interp_real)) {
		gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "interpreter %s", spec->interpreter);
		return GL_LAUNCH_OPEN_INTERPRETER;
	}
	p->interp = open(interp_real, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (p->interp < 0 || fstat(p->interp, &st) < 0 || !S_ISREG(st.st_mode) ||
	    gl_sha256_fd_hex(p->interp, g->interpreter_sha256) < 0) {
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "interpreter %s: %s", interp_real,
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
		gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "GL_TEST_SWAP_INTERPRETER");
		return GL_LAUNCH_OPEN_INTERPRETER;
	}
	p->sim = (getenv("GL_TEST_NO_USERNS") ? SIM_NO_USERNS : 0) |
		 (getenv("GL_TEST_NO_NETNS") ? SIM_NO_NETNS : 0);
	p->off = gl_launch_test.off;
#else
	p->off = 0;
#endif
	return GL_LAUNCH_OK;
}

/* Landlock (A2: initialisation reads only list[0..*n), none of it user
 * data): the ABI detected once, fail closed below the profile's, then the
 * germline's ruleset. list borrows from *bufs. */
static enum gl_launch_step prepare_landlock(const struct gl_launch_spec *spec,
					    struct gl_germline *g, struct launch_prep *p,
					    const char *interp_real, struct gl_path_bufs *bufs,
					    const char **list, size_t *n, struct gl_fail *f)
{
	int abi = gl_landlock_abi();
	int required = spec->min_landlock_abi > 0 ? spec->min_landlock_abi : GL_LANDLOCK_ABI_REQUIRED;
	g->enf.landlock_abi = abi > 0 ? abi : 0;
	if (abi < 0) {
		int e = errno;
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "Landlock unavailable: %s%s", strerror(e),
			launch_hint(GL_LAUNCH_LANDLOCK, e));
		return GL_LAUNCH_LANDLOCK;
	}
	if (abi < required) {
		gl_fail(f, GL_E_BOOTSTRAP_FAILED,
			"Landlock ABI %d is below the required %d (%s); refusing to run "
			"with less",
			abi, required,
			abi < 4 ? "TCP bind and connect cannot be denied"
				: "abstract unix sockets and signals cannot be scoped");
		return GL_LAUNCH_LANDLOCK;
	}
	g->enf.landlock_abi = abi;
	*n = gl_germline_allowlist(spec, interp_real, bufs, list, 64);
	if (p->off & GL_OFF_LANDLOCK)
		return GL_LAUNCH_OK;
	const char *bad;
	p->ruleset = gl_landlock_germline_ruleset(abi, list, *n, p->interp, &bad);
	if (p->ruleset < 0) {
		int e = errno;
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "Landlock ruleset (%s): %s%s",
			bad ? bad : "create", strerror(e), launch_hint(GL_LAUNCH_LANDLOCK, e));
		return GL_LAUNCH_LANDLOCK;
	}
	g->enf.fs_enforced = true;
	g->enf.net_enforced = abi >= 4;
	g->enf.scoped_enforced = abi >= 6;
	return GL_LAUNCH_OK;
}

/* The minimal root holds the same paths (lib/sandbox/root.h): what Landlock
 * lets the germline open is all it can see. */
static enum gl_launch_step prepare_root(const struct gl_launch_spec *spec, struct gl_germline *g,
					struct launch_prep *p, const char *const *list, size_t n,
					struct gl_fail *f)
{
	if (p->off & GL_OFF_ROOT)
		return GL_LAUNCH_OK;
	int rc = gl_root_add_system(&p->root, f);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = gl_root_add_bind(&p->root, list[i], f);
	if (rc == 0)
		rc = gl_root_add_bind(&p->root, spec->interpreter, f);
	if (rc == 0)
		rc = gl_root_add_dev(&p->root, "/dev/null", f);
	if (rc == 0)
		rc = gl_root_add_dev(&p->root, "/dev/urandom", f);
	if (rc == 0)
		rc = root_scratch(spec, g, p, g->enf.landlock_abi, f);
	return rc < 0 ? GL_LAUNCH_ROOT : GL_LAUNCH_OK;
}

/* seccomp: the germline's program, and the hash of the copies'. */
static enum gl_launch_step prepare_seccomp(struct gl_germline *g, struct launch_prep *p,
					   struct gl_fail *f)
{
#ifdef GL_TESTING
	if (getenv("GL_TEST_NO_SECCOMP")) {
		gl_fail(f, GL_E_BOOTSTRAP_FAILED,
			"seccomp filters unavailable (GL_TEST_NO_SECCOMP: the kernel lacks "
			"CONFIG_SECCOMP_FILTER)");
		return GL_LAUNCH_SECCOMP;
	}
#endif
	if (p->off & GL_OFF_SECCOMP)
		return GL_LAUNCH_OK;
	struct gl_bpf copy;
	if (gl_seccomp_build(GL_FILTER_GERMLINE, &p->bpf, f) < 0 ||
	    gl_seccomp_build(GL_FILTER_COPY, &copy, f) < 0)
		return GL_LAUNCH_SECCOMP;
	gl_bpf_sha256(&copy, g->enf.seccomp_filter_sha256);
	gl_bpf_free(&copy);
	g->enf.seccomp_enforced = true;
	return GL_LAUNCH_OK;
}

/* Prepare everything before the fork, in this order: the interpreter,
 * Landlock, the minimal root, seccomp, the control socket. GL_LAUNCH_OK or
 * the failed step. */
static enum gl_launch_step launch_prepare(const struct gl_launch_spec *spec, struct gl_germline *g,
					  struct launch_prep *p, char *interp_real,
					  struct gl_fail *f)
{
	struct gl_path_bufs bufs;
	const char *list[64];
	size_t n = 0;
	enum gl_launch_step step = open_interpreter(spec, g, p, interp_real, f);
	if (step == GL_LAUNCH_OK)
		step = prepare_landlock(spec, g, p, interp_real, &bufs, list, &n, f);
	if (step == GL_LAUNCH_OK)
		step = prepare_root(spec, g, p, list, n, f);
	if (step == GL_LAUNCH_OK)
		step = prepare_seccomp(g, p, f);
	if (step != GL_LAUNCH_OK)
		return step;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "control socketpair");
		return GL_LAUNCH_SOCKET;
	}
	g->ctl = sv[0];
	p->ctl_child = sv[1];
	g->ctl_ino = gl_proc_socket_ino(sv[1]);
	return GL_LAUNCH_OK;
}

/* The status pipe (SPEC §9: "failed before exec" from "ran") and the go
 * pipe (bound_launch); *status_r is the parent's read end. 0, or -1 with *f. */
static int launch_pipes(struct launch_prep *p, int *status_r, struct gl_fail *f)
{
	int status[2], go[2];
	if (pipe2(status, O_CLOEXEC) < 0 || (p->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "status pipe or /dev/null");
	if (pipe2(go, O_CLOEXEC) < 0) {
		close(status[0]);
		close(status[1]);
		return gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "go pipe");
	}
	p->go_r = go[0];
	p->go_w = go[1];
	*status_r = status[0];
	p->status_w = status[1];
	return 0;
}

/* The clone: the init of a new user and PID namespace, which makes the
 * germline its child (lib/runtime/germline_child.c). The child never
 * returns. GL_LAUNCH_OK in the parent, or the failed step with *f. */
static enum gl_launch_step launch_clone(struct gl_germline *g, struct launch_prep *p,
					struct gl_fail *f)
{
	if (p->off & GL_OFF_PIDNS) {
		g->pid = fork();
	} else {
		/* The init's PID namespace is owned by its new user namespace, so
		 * an unprivileged broker may create both in one clone. The raw
		 * syscall runs no at-fork handler: the child makes syscalls only. */
		p->parent_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		if (p->parent_pidfd < 0) {
			gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "pidfd_open");
			return GL_LAUNCH_FORK;
		}
		g->pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
		g->has_init = true;
	}
	if (g->pid < 0) {
		int e = errno;
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "clone: %s%s", strerror(e),
			launch_hint(GL_LAUNCH_USERNS, e));
		return g->has_init ? GL_LAUNCH_USERNS : GL_LAUNCH_FORK;
	}
	if (g->pid == 0) {
		if (p->off & GL_OFF_PIDNS)
			gl_launch_child(p);
		gl_launch_init(p);
	}
	g->pidfd = (int)syscall(SYS_pidfd_open, g->pid, 0);
	if (g->pidfd < 0) {
		gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "pidfd_open");
		return GL_LAUNCH_FORK;
	}
	return GL_LAUNCH_OK;
}

/* Exec observed. Now the host's handshake: the entry module imported,
 * then its scratch read-only before any copy (A1). */
static enum gl_launch_step handshake(struct gl_germline *g, const struct timespec *deadline,
				     struct gl_fail *f)
{
	autofree char *buf = gl_xmalloc(GL_CTL_MSG_MAX);
	int fds[1], nfds;
	autofail struct gl_fail rf = {0};
	ssize_t n = gl_ctl_recv(g->ctl, buf, GL_CTL_MSG_MAX, fds, 0, &nfds, deadline, &rf);
	if (n < 0) {
		gl_fail(f, GL_E_LAUNCH, "handshake: %s", gl_fail_detail(&rf));
		return GL_LAUNCH_HANDSHAKE;
	}
	if (n == 0) {
		gl_fail(f, GL_E_LAUNCH, "handshake: the germline exited before it was ready");
		return GL_LAUNCH_HANDSHAKE;
	}
	const char *op;
	jv v = gl_ctl_parse(buf, (size_t)n, &op);
	if (op && !strcmp(op, "ready") && jv_object_length(jv_copy(v)) == 1) {
		jv_free(v);
		if (g->scratch && gl_scratch_start(g->pidfd, (const char *const *)g->scratch_under,
						   &g->mounter, f) < 0)
			return GL_LAUNCH_ROOT;
		return GL_LAUNCH_OK;
	}
	if (op && !strcmp(op, "error")) {
		autofree char *d = gl_ctl_detail(v);
		jv_free(v);
		gl_fail(f, GL_E_LAUNCH, "the release's entry module failed to import: %s", d);
		return GL_LAUNCH_HANDSHAKE;
	}
	jv_free(v);
	gl_fail(f, GL_E_LAUNCH, "handshake: malformed message from the germline");
	return GL_LAUNCH_HANDSHAKE;
}

/* A Node germline's own threads may still be finishing what the import
 * or the warm-up gave them when it says ready (a thread-pool read, a
 * compile): wait, up to NODE_SETTLE_MS, until its G1–G3 pass. Once they
 * do nothing can wake its threads again (lib/sandbox/proc_node.c), so the
 * checks before each fork need no such wait; one that still fails here is
 * left to refuse the first fork, naming what it found. */
static void node_settle(const struct gl_germline *g)
{
	for (int ms = 0; ms < NODE_SETTLE_MS; ms += 2) {
		autofail struct gl_fail cf = {0};
		if (gl_proc_check_node_germline(g->pid, g->gpid, g->ctl_ino, &cf) == 0)
			return;
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
}

static void launch_init_handle(struct gl_germline *g)
{
	memset(g, 0, sizeof *g);
	g->rt.ops = &gl_germline_ops;
	g->pid = g->gpid = -1;
	g->pidfd = g->ctl = -1;
	g->uids.fd = -1;
	g->mounter = (struct gl_scratch){-1, -1};
	static const char *const ns[] = {"ipc", "mnt", "net", "pid", "user", NULL};
	memcpy(g->enf.namespaces, ns, sizeof ns);
}

/* The verified launch (paper §IV-D, §VI; SPEC §9), each step failing closed
 * through launch_fail: prepare, pipes and arguments, clone, bound, the
 * exec observed, the handshake. */
enum gl_launch_step gl_germline_launch(const struct gl_launch_spec *spec, struct gl_germline *g,
				       struct gl_fail *f)
{
	launch_init_handle(g);
	struct launch_prep p = {.interp = -1, .ctl_child = -1, .devnull = -1, .status_w = -1,
				.ruleset = -1, .parent_pidfd = -1, .go_r = -1, .go_w = -1,
				.parent = getpid()};
	/* Absolute, resolved once: the germline runs in the release dir. */
	char interp_real[PATH_MAX], release_real[PATH_MAX], host_real[PATH_MAX];
	if (!realpath(spec->release_dir, release_real) || !realpath(spec->host_dir, host_real)) {
		gl_fail_errno(f, GL_E_BOOTSTRAP_FAILED, "release or host directory");
		return launch_fail(g, &p, GL_LAUNCH_OPEN_INTERPRETER, f);
	}
	struct gl_launch_spec rs = *spec;
#ifdef GL_TESTING
	const char *ti = getenv("GL_TEST_INTERPRETER");
	if (ti && *ti)
		rs.interpreter = ti;
#endif
	rs.release_dir = p.release_dir = release_real;
	rs.host_dir = host_real;
	spec = &rs;
	enum gl_launch_step step = launch_prepare(spec, g, &p, interp_real, f);
	if (step != GL_LAUNCH_OK)
		return launch_fail(g, &p, step, f);
	autoclose int status_r = -1;
	if (launch_pipes(&p, &status_r, f) < 0)
		return launch_fail(g, &p, GL_LAUNCH_DESCRIPTORS, f);
	g->node = spec->node;
	autofree char *script = gl_xasprintf("%s/germline_host.%s", spec->host_dir,
					     spec->node ? "mjs" : "py");
	struct import_args ia = {0};
	gl_launch_import_args(spec, g, &ia);
	autofree char *prof = spec->profile ? gl_xasprintf("GL_PROFILE=%s", spec->profile) : NULL;
	/* A block of host uids of its own (lib/sandbox/uids.h), leased before
	 * the clone: the child learns there whether the broker maps it. A
	 * GL_TESTING build without a PID namespace (GL_OFF_PIDNS) makes its
	 * user namespace after the go byte, too late to be mapped from here. */
	if (spec->uids && spec->uids->on && !(p.off & GL_OFF_PIDNS)) {
		if (gl_uids_lease(spec->uids, &g->uids, f) < 0)
			return launch_fail(g, &p, GL_LAUNCH_UIDS, f);
		p.parent_maps = p.root.become_root = true;
		g->enf.uid = "per-copy";
	} else if (spec->uids && !spec->uids->off) {
		g->enf.uid = "serialized"; /* the caller runs each call alone */
	}
	gl_launch_args(spec, g, &p, &ia, script, prof);
	if ((step = launch_clone(g, &p, f)) != GL_LAUNCH_OK)
		return launch_fail(g, &p, step, f);
	/* Bounded before it runs the release's import (issue 15, paper §III) */
	if (bound_launch(spec, g, &p, f) < 0)
		return launch_fail(g, &p, GL_LAUNCH_LIMITS, f);
	launch_cleanup(&p); /* our copies of the child's descriptors */

	struct timespec deadline;
	gl_ctl_deadline_in(&deadline, LAUNCH_TIMEOUT_MS);
	step = read_status(status_r, &deadline, &p.root, f);
	if (step != GL_LAUNCH_OK)
		return launch_fail(g, &p, step, f);
	gl_root_free(&p.root);
	g->exec_observed = true; /* SPEC §9: every restriction installed, the exec seen */
	/* The status pipe's EOF came after the init closed its end, which it
	 * does right after forking the germline: the germline is its child. */
	g->gpid = g->has_init ? gl_proc_first_child(g->pid) : g->pid;
	if ((step = handshake(g, &deadline, f)) != GL_LAUNCH_OK)
		return launch_fail(g, &p, step, f);
	if (g->node)
		node_settle(g);
	return GL_LAUNCH_OK;
}
