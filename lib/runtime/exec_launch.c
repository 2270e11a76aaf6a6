/* exec_launch.c — runtime "exec": the launch of one copy (SPEC §5, §9;
 * seed 002). Everything is prepared here before the clone — the copy's
 * scratch directory, its environment, its Landlock rules and minimal root
 * — then the launch child (lib/runtime/exec_child.c) runs, and the copy is
 * observed (its exec, its /proc) before it gets its call. Opening the
 * release for a session is lib/runtime/exec.c. See exec.h, docs/exec.md. */
#define _GNU_SOURCE
#include "runtime/exec.h"
#include "runtime/exec_child.h"
#include "runtime/exec_scratch.h"
#include "runtime/exec_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json/msg.h"
#include "sandbox/proc.h"
#include "sandbox/root.h"
#include "sandbox/scratch.h"
#include "core/util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#define EXEC_TIMEOUT_MS 30000 /* exec observed */
#define INSIDE_UID 1000       /* not 0: the exec of gl-exec-host drops every capability */

/* ---- one copy ---------------------------------------------------------------- */

/* Landlock rules for the items of a copy's view, each added from a
 * descriptor opened with no symlink in its path, as the broker read it
 * (lib/broker/broker.c read_path_item): a file item READ_FILE on the file, a
 * directory item (its path ends in '/') READ_FILE|READ_DIR beneath it.
 * 0, or -1 with *f. */
static int allow_items(int rs, const struct gl_exec_item *items, size_t nitem, struct gl_fail *f)
{
	for (size_t i = 0; i < nitem; i++)
		if (gl_landlock_allow_item(rs, items[i].fd, items[i].dir) < 0)
			return gl_fail_errno(f, GL_E_LAUNCH, "exec copy: Landlock rule for item %zu of "
					     "its view", i + 1);
	return 0;
}

/* One launch's preparations, released by launch_undo. */
struct launch {
	struct gl_exec_prep p;
	struct gl_root root;
	char *dir;   /* the copy's scratch directory */
	char *state; /* its state (workspace) directory */
	char **argv; /* gl-exec-host's, strings borrowed from x->argv */
	char **envp; /* the TLS variables (owned, tls_env), then x->envp's (borrowed) */
};

static void launch_undo(struct launch *l, bool scratch_too)
{
	if (l->p.ruleset >= 0)
		close(l->p.ruleset);
	l->p.ruleset = -1;
	gl_root_free(&l->root);
	if (scratch_too)
		gl_exec_scratch_remove(l->dir);
	l->dir = NULL;
	free(l->state);
	free(l->argv);
	gl_exec_launch_env_free(l->envp);
	l->state = NULL;
	l->argv = NULL;
	l->envp = NULL;
}

/* The scratch directory (hosts file, state) and what the launch child is
 * given. 0, or -1 with *f. */
static int launch_prep(struct gl_exec *x, struct launch *l, int ch, const char *const *hosts,
		       size_t nhost, bool unconfined, struct gl_fail *f)
{
	x->fail_binding = "scratch";
	if (!(l->dir = gl_exec_scratch_make(x, hosts, nhost, f)))
		return -1;
	x->fail_binding = "landlock";
	l->p = (struct gl_exec_prep){.chan = ch, .devnull = -1, .status_w = -1, .ruleset = -1,
				     .target = x->target_fd, .host = x->host_fd, .parent = getpid(),
				     .release_dir = x->release_dir, .argv = x->argv, .envp = x->envp,
				     .bpf = &x->bpf, .off = x->off, .unconfined = unconfined};
	snprintf(l->p.uid_map, sizeof l->p.uid_map, "%d %u 1\n", INSIDE_UID, (unsigned)geteuid());
	snprintf(l->p.gid_map, sizeof l->p.gid_map, "%d %u 1\n", INSIDE_UID, (unsigned)getegid());
	snprintf(l->p.hosts, sizeof l->p.hosts, "%s/hosts", l->dir);
	/* a listener per stream destination's port (docs/streams.md); the
	 * manifest allows one destination per port in a function, and a
	 * session's union keeps the first */
	for (size_t i = 0; i < nhost && l->p.nstream < GL_STREAM_DESTS_MAX; i++) {
		int port = (int)gl_dest_port(hosts[i]);
		bool seen = false;
		for (size_t k = 0; k < l->p.nstream; k++)
			seen |= l->p.stream_port[k] == port;
		if (port && !seen)
			l->p.stream_port[l->p.nstream++] = port;
	}
	l->state = gl_xasprintf("%s/state", l->dir);
	size_t na = gl_exec_strv_len(x->argv);
	l->argv = gl_xcalloc(na + 1, sizeof *l->argv);
	memcpy(l->argv, x->argv, na * sizeof *l->argv);
	l->p.argv = l->argv;
	bool root = !unconfined && !(x->off & GL_OFF_ROOT);
	autofree char *tls = root ? NULL : gl_xasprintf("%s/tls", l->dir);
	l->envp = gl_exec_launch_env(x, root ? GL_EXEC_TLS_DIR : tls);
	l->p.envp = l->envp;
	if (!x->state_dir)
		return 0;
	l->argv[2] = (char *)GL_WORKSPACE_DIR;
	if (snprintf(l->p.state, sizeof l->p.state, "%s", l->state) >= (int)sizeof l->p.state)
		return gl_fail(f, GL_E_LAUNCH, "exec copy: %s: path too long", l->state);
#ifdef GL_TESTING
	const char *bad = getenv("GL_TEST_WORKSPACE_SOURCE"); /* a failing bind */
	if (bad)
		snprintf(l->p.state, sizeof l->p.state, "%s", bad);
#endif
	return 0;
}

/* Landlock: the allowlist, the hosts file, the relay's TLS files (the
 * target reads the authority, gl-exec-host the relay's key: exec_tls.h says
 * why the key may be the copy's), TCP connect to the relay's two ports
 * only, exactly the view's item files
 * and directories, and the scratch state directory writable when kept.
 * 0, or -1 with *f. */
static int launch_rules(struct gl_exec *x, struct launch *l, const struct gl_exec_item *items,
			size_t nitem, struct gl_fail *f)
{
	const char **list = gl_xcalloc(x->npaths + 2, sizeof *list);
	size_t n = 0;
	for (size_t i = 0; i < x->npaths; i++)
		list[n++] = x->paths[i];
	list[n++] = l->p.hosts;
	autofree char *tls = gl_xasprintf("%s/tls", l->dir);
	list[n++] = tls;
	int fds[2] = {x->target_fd, x->host_fd};
	const char *bad = NULL;
	/* with the minimal root the workspace is a tmpfs, its rule added in
	 * the child (lib/sandbox/scratch.h) */
	bool root = !(x->off & GL_OFF_ROOT);
	l->p.scratch_abi = root ? x->enf.landlock_abi : 0;
	int ports[2 + GL_STREAM_DESTS_MAX] = {GL_EXEC_RELAY_PORT, GL_EXEC_RELAY_TLS_PORT};
	for (size_t i = 0; i < l->p.nstream; i++)
		ports[2 + i] = l->p.stream_port[i];
	l->p.ruleset = gl_landlock_exec_ruleset(x->enf.landlock_abi, list, n, fds, 2,
						x->state_dir && !root ? l->state : NULL, ports,
						2 + l->p.nstream, &bad);
	free(list);
	if (l->p.ruleset < 0)
		return gl_fail_errno(f, GL_E_LAUNCH, "exec copy: Landlock ruleset (%s)",
				     bad ? bad : "create");
	return allow_items(l->p.ruleset, items, nitem, f);
}

/* After the clone: the tree re-checked, the exec observed, the copy
 * checked through /proc. 0, or -1 with f (the copy is then ended). */
static int launch_observe(struct gl_exec *x, long pid, int pfd, int status_r, uint64_t chan_ino,
			  bool unconfined, size_t nstream, char *dir, struct gl_fail *f)
{
	/* The tree is re-checked while the child sets itself up on the other
	 * CPU: gl-exec-host starts the target only once it has the call
	 * message, which is sent only after this returns 0, so nothing of the
	 * release runs before the check has passed. */
	if (gl_exec_tree_unchanged(x, f) < 0) {
		gl_exec_copy_done(pfd, dir);
		close(pfd);
		x->fail_rejected = true; /* a file changed since it was verified */
		x->fail_binding = "tree";
		return -1;
	}
	int rc = gl_exec_child_status(status_r, gl_mono_ns() + (int64_t)EXEC_TIMEOUT_MS * 1000000,
				      &x->fail_binding, f);
	if (rc == 0)
		x->fail_binding = "proc_check"; /* the exec was observed */
	/* The check of a forked copy (lib/sandbox/proc.c), once the host is up: its
	 * dynamic loader may hold a library open for a moment after the exec,
	 * so a descriptor or mapping finding is re-read for up to 500 ms (the
	 * host runs only our code until it has the call message). */
	for (int tries = 0; rc == 0 && !unconfined; tries++) {
		if (gl_proc_check_exec((pid_t)pid, chan_ino, 0, nstream, f) == 0)
			break;
		const char *d = gl_fail_detail(f);
		if (tries >= 250 ||
		    !(strstr(d, "descriptor") || strstr(d, "fd ") || strstr(d, "mapping"))) {
			rc = -1;
			break;
		}
		gl_fail_clear(f);
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	if (rc < 0) {
		gl_exec_copy_done(pfd, dir);
		close(pfd);
		return -1;
	}
	return 0;
}

static int launch(struct gl_exec *x, const struct gl_exec_item *items, size_t nitem,
		  const char *const *hosts, size_t nhost, int chan, int *pidfd, char **scratch,
		  bool unconfined, struct gl_fail *f)
{
	*pidfd = -1;
	*scratch = NULL;
	autoclose int ch = chan;
	uint64_t chan_ino = gl_proc_socket_ino(ch);
	x->fail_rejected = false;
	x->fail_binding = "exec";
	if (x->target_fd < 0)
		return gl_fail(f, GL_E_LAUNCH, "exec copy: the release is not open");
	struct launch l = {.p = {.ruleset = -1}};
	if (launch_prep(x, &l, ch, hosts, nhost, unconfined, f) < 0 ||
	    (!(x->off & GL_OFF_LANDLOCK) && !unconfined && launch_rules(x, &l, items, nitem, f) < 0)) {
		launch_undo(&l, true);
		return -1;
	}
	if (!unconfined && !(x->off & GL_OFF_ROOT)) {
		x->fail_binding = "minimal_root";
		autofree char *tls = gl_xasprintf("%s/tls", l.dir);
		int rc = gl_exec_root(x, &l.root, l.p.hosts, tls, x->state_dir ? l.p.state : NULL,
				      items, nitem, f);
		if (rc < 0) {
			if (rc == -2)
				x->fail_binding = "workspace";
			launch_undo(&l, true);
			return -1;
		}
		l.p.root = &l.root;
	}
	int sp[2] = {-1, -1};
	x->fail_binding = "descriptors";
	if (pipe2(sp, O_CLOEXEC) < 0 || (l.p.devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		gl_fail_errno(f, GL_E_LAUNCH, "exec copy: status pipe");
		if (sp[0] >= 0)
			close(sp[0]), close(sp[1]);
		launch_undo(&l, true);
		return -1;
	}
	autoclose int status_r = sp[0];
	l.p.status_w = sp[1];
	int pfd = -1;
	struct clone_args ca = {
	    .flags = unconfined ? CLONE_PIDFD | CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS
				: CLONE_PIDFD | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
				      CLONE_NEWNS | CLONE_NEWUTS,
	    .pidfd = (uint64_t)(uintptr_t)&pfd,
	    .exit_signal = SIGCHLD,
	};
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0)
		gl_exec_child(&l.p);
	int e = errno;
	close(l.p.status_w);
	close(l.p.devnull);
	char *dir = l.dir;
	launch_undo(&l, pid < 0);
	if (pid < 0) {
		x->fail_binding = "user_namespace";
		return gl_fail(f, GL_E_LAUNCH, "exec copy: clone3: %s%s", strerror(e),
			       e == EPERM || e == ENOSPC ? " (user namespaces disabled or exhausted)" : "");
	}
	if (launch_observe(x, pid, pfd, status_r, chan_ino, unconfined, l.p.nstream, dir, f) < 0)
		return -1;
	*pidfd = pfd;
	*scratch = dir;
	x->fail_binding = NULL;
	return 0;
}

int gl_exec_copy(struct gl_exec *x, const struct gl_exec_item *items, size_t nitem,
		 const char *const *hosts, size_t nhost, int chan, int *pidfd, char **scratch,
		 struct gl_fail *f)
{
	if (launch(x, items, nitem, hosts, nhost, chan, pidfd, scratch, false, f) == 0)
		return 0;
	f->code = GL_E_LAUNCH; /* whatever code the failed step filled */
	return -1;
}

int gl_exec_launch_unconfined(struct gl_exec *x, const char *const *hosts, size_t nhost,
			      int chan, int *pidfd, char **scratch, struct gl_fail *f)
{
	if (launch(x, NULL, 0, hosts, nhost, chan, pidfd, scratch, true, f) == 0)
		return 0;
	f->code = GL_E_LAUNCH; /* whatever code the failed step filled */
	return -1;
}

int gl_exec_session_start(struct gl_exec *x, const char *const *hosts, size_t nhost,
			  struct gl_session_proc *p, struct gl_fail *f)
{
	*p = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return gl_fail_errno(f, GL_E_LAUNCH, "socketpair");
	/* the call's destinations and every one the manifest declares */
	size_t nd = gl_exec_strv_len(x->declared);
	const char **h = gl_xcalloc(nhost + nd + 1, sizeof *h);
	for (size_t i = 0; i < nhost; i++)
		h[i] = hosts[i];
	for (size_t i = 0; i < nd; i++)
		h[nhost + i] = x->declared[i];
	int rc = gl_exec_launch_unconfined(x, h, nhost + nd, sp[1], &p->pidfd, &p->scratch, f);
	free(h);
	if (rc < 0) {
		close(sp[0]);
		return -1;
	}
	p->sock = sp[0];
	fcntl(p->sock, F_SETFL, O_NONBLOCK);
	p->up = p->started = p->exec = true;
	return 0;
}
