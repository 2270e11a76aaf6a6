/* germline_child.c — a germline's launch child: the init of its PID
 * namespace and the germline between clone and execveat (SPEC §9 verified
 * launch, §10; docs/sandbox.md "The germline contained"). Everything here
 * runs after the broker's clone and only makes syscalls, into what
 * lib/runtime/germline.c prepared (struct launch_prep), except the last
 * part: the germline's command line, built before the clone. */
#define _GNU_SOURCE
#include "runtime/germline_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/germline.h"
#include "sandbox/scratch.h"

GL_NORETURN static void child_fail_at(int sfd, enum gl_launch_step step, int what, int bad)
{
	struct launch_status m = {(int32_t)step, errno, what, bad};
	ssize_t r;
	do
		r = write(sfd, &m, sizeof m);
	while (r < 0 && errno == EINTR);
	_exit(127);
}

GL_NORETURN static void child_fail(int sfd, enum gl_launch_step step, int what)
{
	child_fail_at(sfd, step, what, -1);
}

/* The germline, between its fork and execveat (SPEC §9 verified launch):
 * descriptors, Landlock, no_new_privs, seccomp, exec from the retained
 * interpreter. Its namespaces and root are already in place. */
GL_NORETURN static void germline_child(const struct launch_prep *p, pid_t parent)
{
	int sfd = p->status_w;
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

	/* The germline dies with its parent (the init, or without one the
	 * thread that launched it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(sfd, GL_LAUNCH_DESCRIPTORS, W_PDEATHSIG);
	if (getppid() != parent) {
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

/* User namespace maps (root inside, our uid outside: works for root and
 * for an unprivileged broker alike), then network, IPC and, for the
 * minimal root, mount namespaces, then the root itself. */
static void enter_namespaces(const struct launch_prep *p, int sfd)
{
	if (p->sim & SIM_NO_USERNS) { /* GL_TESTING builds only: p->sim is 0 otherwise */
		errno = EPERM;
		child_fail(sfd, GL_LAUNCH_USERNS, W_NONE);
	}
	if ((p->off & GL_OFF_PIDNS) && unshare(CLONE_NEWUSER) < 0)
		child_fail(sfd, GL_LAUNCH_USERNS, W_NONE);
	if (p->parent_maps) {
		/* The broker mapped a block of host ids (lib/sandbox/uids.h):
		 * inside 0 is its first, this init's and the germline's, taken
		 * once the minimal root's sources are open (the broker's uid
		 * opens them: gl_root_enter), or here without one. */
		if (!p->root.n &&
		    (syscall(SYS_setresgid, 0, 0, 0) < 0 || syscall(SYS_setresuid, 0, 0, 0) < 0 ||
		     prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
			child_fail(sfd, GL_LAUNCH_USERNS, W_UID_MAP);
	} else {
		if (gl_write_file_str("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
			child_fail(sfd, GL_LAUNCH_USERNS, W_SETGROUPS);
		if (gl_write_file_str("/proc/self/uid_map", p->uid_map) < 0)
			child_fail(sfd, GL_LAUNCH_USERNS, W_UID_MAP);
		if (gl_write_file_str("/proc/self/gid_map", p->gid_map) < 0)
			child_fail(sfd, GL_LAUNCH_USERNS, W_GID_MAP);
	}
	/* No network, no System V / POSIX IPC shared with anything (A1). */
	int ns = CLONE_NEWNET | CLONE_NEWIPC | (p->root.n ? CLONE_NEWNS : 0);
	if (p->off & GL_OFF_NEWNET)
		ns &= ~CLONE_NEWNET; /* GL_TESTING builds only: p->off is 0 otherwise */
	if (p->sim & SIM_NO_NETNS)
		errno = EPERM;
	if ((p->sim & SIM_NO_NETNS) || unshare(ns) < 0)
		child_fail(sfd, GL_LAUNCH_NAMESPACES, W_NONE);
	if (p->root.n) {
		int bad;
		enum gl_root_step st = gl_root_enter(&p->root, "/tmp", &bad);
		if (st != GL_ROOT_OK)
			child_fail_at(sfd, GL_LAUNCH_ROOT, W_ROOT + (int)st, bad);
		/* the root's /tmp and each copy's (SPEC §5; lib/sandbox/scratch.h) */
		if (p->scratch_abi > 0 && p->ruleset >= 0 &&
		    gl_scratch_allow(p->ruleset, p->scratch_abi, GL_SCRATCH_RULE_PATH) < 0)
			child_fail(sfd, GL_LAUNCH_LANDLOCK, W_NONE);
	}
}

/* A broker holding a secret (gl-run --host-key) is not dumpable, which
 * makes /proc/PID/{setgroups,uid_map} of this child root's: unwritable for
 * an unprivileged broker (the maps of a delegated block, before the go
 * byte) and for the child itself. The child holds no secret (the key's
 * pages are MADV_WIPEONFORK: lib/runtime/receipt.c) and execs next; exec
 * resets it anyway. Its first step. */
static void dumpable_again(void)
{
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* Wait for the broker's go byte: it bounds this child first (cgroup or
 * rlimits, lib/sandbox/cgroup.h gl_cg_bound_launch), so that the release's import
 * and everything it forks run bounded (issue 15; paper §III). EOF: the
 * broker refused the bound or is gone. */
static void wait_go(const struct launch_prep *p, int sfd)
{
	close(p->go_w);
	char c = 0;
	ssize_t r;
	do
		r = read(p->go_r, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1 || c != 'g') {
		errno = ESRCH;
		child_fail(sfd, GL_LAUNCH_LIMITS, W_NONE);
	}
	close(p->go_r);
}

/* exit status of the init: as the germline ended (128 + signal if killed). */
static int mirror_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 127;
}

/* A child that exits at once: its number, or -1. Its own function, so
 * that no variable of the caller lives across the vfork. */
static __attribute__((noinline)) pid_t exiting_child(void)
{
	pid_t c = vfork();
	if (c == 0)
		_exit(0);
	return c;
}

/* The germline's PID namespace numbers every process and thread of every
 * copy too (a copy's own PID namespace is its child). Copies take fixed
 * numbers there, GL_COPY_PID + lane (clone3's set_tid in
 * hosts/common/fork_server.c clone_copy), so a thread of one live copy must
 * never be given the number of another lane: with --jobs it would hold
 * that lane's fork at EEXIST for as long as its copy runs (an MCP server's
 * reader threads in tests/serve-mcp-jobs.bats). The namespace's counter is
 * moved past the lanes here, once, before the germline can fork: children
 * that exit at once (vfork: nothing is copied), each reaped before the
 * next. The init's memory is no copy's (copies are the germline's forks),
 * so what it sees here reaches none. Should the counter wrap (pid_max
 * numbers later; a release can force that by starting threads), a lane
 * held by a thread fails its fork closed: only that release's own calls,
 * as its germline serves no other release. */
static void skip_copy_numbers(void)
{
#ifdef GL_TESTING
	if (getenv("GL_TEST_COPY_NUMBERS_OFF")) /* the damage: threads take lanes' numbers */
		return;
#endif
	for (int i = 0; i <= GL_COPY_PID + GL_COPY_LANES; i++) {
		pid_t c = exiting_child();
		if (c < 0)
			return; /* the lanes' forks then fail closed as before */
		while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
			;
		if (c >= GL_COPY_PID + GL_COPY_LANES)
			return;
	}
}

/* The init of the germline's PID namespace (PID 1), made by clone with
 * CLONE_NEWUSER|CLONE_NEWPID: sets up the namespaces and the root, forks
 * the germline (PID 2), closes every descriptor and then only reaps —
 * the germline's copies too, which are its children (CLONE_PARENT), so
 * that how a copy ended never reaches the germline (A1). It runs no
 * release code and holds nothing a release could read: no descriptor,
 * and its memory is out of reach (no ptrace, no process_vm_*, no /proc
 * in the root). When the germline ends, the init exits as it did, and the
 * kernel kills whatever is left in the namespace (G1: nothing outlives it). */
void gl_launch_init(const struct launch_prep *p)
{
	int sfd = p->status_w;
	dumpable_again();
	wait_go(p, sfd);
	enter_namespaces(p, sfd);
	/* Die with the broker's thread; the broker may have gone before this
	 * prctl, which its pidfd (readable once it has exited) tells. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(sfd, GL_LAUNCH_FORK, W_PDEATHSIG);
	struct pollfd pf = {.fd = p->parent_pidfd, .events = POLLIN};
	if (poll(&pf, 1, 0) != 0) {
		errno = ESRCH;
		child_fail(sfd, GL_LAUNCH_FORK, W_PARENT_GONE);
	}
	long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		child_fail(sfd, GL_LAUNCH_FORK, W_NONE);
	if (pid == 0)
		germline_child(p, 1);
	skip_copy_numbers();
	syscall(SYS_close_range, 0u, ~0u, 0u);
	prctl(PR_SET_NAME, "gl-init", 0, 0, 0);
	for (;;) {
		int st;
		pid_t w = (pid_t)syscall(SYS_wait4, -1, &st, 0, NULL);
		if (w == (pid_t)pid)
			_exit(mirror_status(st));
		if (w < 0 && errno != EINTR)
			_exit(127);
	}
}

/* GL_OFF_PIDNS (test builds): the germline is the broker's child, in the
 * broker's PID namespace, as before issue 13. */
void gl_launch_child(const struct launch_prep *p)
{
	dumpable_again();
	wait_go(p, p->status_w);
	enter_namespaces(p, p->status_w);
	germline_child(p, p->parent);
}

/* ---- before the clone: the germline's command line (germline_child.h) ---- */

void gl_launch_import_args(const struct gl_launch_spec *spec, struct gl_germline *g,
			   struct import_args *a)
{
	g->import_twinned = !spec->import_real && !spec->node; /* Node: not yet (docs/exec.md) */
#ifdef GL_TESTING
	if (getenv("GL_TEST_IMPORT_TWIN_OFF")) /* the landed behaviour: real clock at import */
		g->import_twinned = false;
#endif
	if (!g->import_twinned) {
		memset(&g->import_twin, 0, sizeof g->import_twin);
		snprintf(a->flags, sizeof a->flags, "-I");
		return;
	}
	if (spec->import_twin)
		g->import_twin = *spec->import_twin;
	else
		gl_twin_new(&g->import_twin);
	/* -I without -E: PYTHONHASHSEED is read, from this environment only
	 * (envp is the broker's, never the user's). -P -s are -I's other parts. */
	snprintf(a->flags, sizeof a->flags, "-Ps");
	snprintf(a->sec, sizeof a->sec, "%lld", (long long)g->import_twin.sec);
	snprintf(a->usec, sizeof a->usec, "%lld", (long long)g->import_twin.usec);
	memcpy(a->seed, g->import_twin.seed, sizeof a->seed);
	unsigned long h = 0; /* the seed's first 32 bits (lowercase hex, checked by its reader) */
	for (int i = 0; i < 8; i++) {
		char c = g->import_twin.seed[i];
		h = h << 4 | (unsigned long)(c >= 'a' ? c - 'a' + 10 : c - '0');
	}
	snprintf(a->hashseed, sizeof a->hashseed, "PYTHONHASHSEED=%lu", h & 0xffffffffUL);
}

/* A Node germline's argv and envp (docs/exec.md "The Node germline"):
 * node --single-threaded (V8 posts no task to its worker threads, which
 * then only wait: G1), the host script, the release, the server's script
 * and arguments; at-fork handlers recorded by gl-atfork.so. */
static void node_args(const struct gl_launch_spec *spec, struct launch_prep *p, char *script,
		      char *prof)
{
	size_t a = 0;
	p->argv[a++] = "node";
	p->argv[a++] = "--single-threaded";
	p->argv[a++] = script;
	p->argv[a++] = (char *)spec->release_dir;
	p->argv[a++] = (char *)spec->entry;
	for (size_t i = 0; spec->entry_args && spec->entry_args[i] && i < GL_NODE_ARGS_MAX; i++)
		p->argv[a++] = (char *)spec->entry_args[i];
	p->argv[a] = NULL;
	snprintf(p->preload, sizeof p->preload, "LD_PRELOAD=%s/gl-atfork.so", spec->host_dir);
	size_t e = 0;
	static char *const fixed[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/nonexistent",
				      "TMPDIR=/tmp"};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		p->envp[e++] = fixed[i];
	p->envp[e++] = p->preload;
	if (spec->warm)
		p->envp[e++] = "GL_NODE_WARM=1";
	if (spec->exec_host)
		p->envp[e++] = "GL_NODE_EXEC_HOST=1";
	if (spec->exec_host && spec->state_dir) {
		snprintf(p->state_env, sizeof p->state_env, "GL_NODE_STATE_DIR=%s", spec->state_dir);
		p->envp[e++] = p->state_env;
	}
	for (size_t i = 0; spec->env && spec->env[i] && i < GL_NODE_ARGS_MAX; i++)
		p->envp[e++] = (char *)spec->env[i];
	if (prof)
		p->envp[e++] = prof;
	p->envp[e] = NULL;
}

/* A Python germline's argv and envp (the host script, the release, the
 * import twin, the root's flag). */
static void python_args(const struct gl_launch_spec *spec, const struct gl_germline *g,
			struct launch_prep *p, const struct import_args *ia, char *script,
			char *prof)
{
	/* The last argument: whether "/" is the minimal root (a tmpfs made at
	 * launch, whose times the host reports as the import twin's); only a
	 * GL_TESTING build runs without it (GL_OFF_ROOT), or with it but
	 * os.scandir's entries showing the real times ("2":
	 * GL_TEST_SCAN_TWIN_OFF, tests/witness-trust.bats). */
	const char *root = p->off & GL_OFF_ROOT ? "0" : "1";
#ifdef GL_TESTING
	if (!(p->off & GL_OFF_ROOT) && getenv("GL_TEST_SCAN_TWIN_OFF"))
		root = "2";
#endif
	char *argv[] = {"python3", (char *)ia->flags, "-B", script, (char *)spec->release_dir,
			(char *)spec->entry, (char *)ia->sec, (char *)ia->usec, (char *)ia->seed,
			(char *)root, NULL};
	if (!g->import_twinned)
		argv[6] = NULL;
	memcpy(p->argv, argv, sizeof argv);
	/* Numeric libraries pinned to one thread: G1 (A2) needs a one-thread germline. */
	char *envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/nonexistent", "TMPDIR=/tmp",
			"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1",
			"NUMEXPR_NUM_THREADS=1", "VECLIB_MAXIMUM_THREADS=1",
			g->import_twinned ? (char *)ia->hashseed : prof, g->import_twinned ? prof : NULL,
			NULL};
	memcpy(p->envp, envp, sizeof envp);
}

/* The germline's argv and envp into p (they borrow *ia, script and prof). */
void gl_launch_args(const struct gl_launch_spec *spec, const struct gl_germline *g,
		    struct launch_prep *p, const struct import_args *ia, char *script, char *prof)
{
	snprintf(p->uid_map, sizeof p->uid_map, "0 %u 1\n", (unsigned)geteuid());
	snprintf(p->gid_map, sizeof p->gid_map, "0 %u 1\n", (unsigned)getegid());
	if (spec->node)
		node_args(spec, p, script, prof);
	else
		python_args(spec, g, p, ia, script, prof);
	/* Each copy takes its lane's uid (hosts/common/fork_server.c; checked
	 * from outside, lib/sandbox/proc.c): set before the release runs. */
	size_t i = 0;
	while (p->envp[i])
		i++;
	if (p->parent_maps)
		p->envp[i++] = "GL_COPY_UIDS=1";
	/* the operator's public env and the secrets' placeholders: data-free
	 * (A2), so the germline may hold them; never a secret's value */
	for (size_t k = 0; spec->config && k < spec->config->ncopy_env; k++)
		p->envp[i++] = spec->config->copy_env[k];
	if (spec->config && spec->config->args_env)
		p->envp[i++] = spec->config->args_env;
	p->envp[i] = NULL;
}
