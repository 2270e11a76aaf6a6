/* germline.c — germline.node, the Node-API addon that runs inside a Node
 * germline (paper §VI "Germline and copies"; docs/exec.md "The Node
 * germline"): a shell around the fork server (hosts/common/fork_server.h)
 * with what Node needs of a fork.
 *
 *   stdio()            0 and 1 made two idle pipes (their other ends kept
 *                      open here), before the release's import, so that the
 *                      server's stdio transport binds to handles a copy can
 *                      point at its channel. Returns [stdin_w, stdout_r]
 *                      for the germline's own data-free warm-up exchange.
 *   serve(ctl, profile, copyUids, hostPath, stateDir)
 *                      never returns in the germline: it quiets it, records
 *                      the runtime's descriptors and serves fork requests.
 *                      Returns in a copy, confined and let go, whose stdin
 *                      and stdout are then its channel (MCP straight to
 *                      the broker); or, with hostPath (gl-exec-host), a
 *                      socket to that host, which the copy's first process
 *                      has become to speak the copy protocol on the
 *                      channel (split_for_host), with stateDir (or none)
 *                      as its workspace.
 *   reportError(ctl, text)  the import failed.
 *
 * In the germline, before ready (the release is imported, no data exists):
 *   - every signal handler is set to its default (the raw system call, for
 *     glibc's own too), so no code of the release's runs on any of Node's
 *     threads whatever signal arrives; the broker checks SigCgt is empty;
 *   - every mapping is marked MADV_DOFORK: Node builds V8 with
 *     v8_enable_private_mapping_fork_optimization, so V8's pages would not
 *     be copied into a copy (docs/performance.md);
 *   - its pipes, eventfds and epoll instances are recorded, to be made each
 *     copy's own (lib/sandbox/private_fds.h).
 * In a copy, after the broker's go: the handlers back, the at-fork child
 * handlers the C library would have run (hosts/node/atfork.c), the channel
 * on stdin and stdout, and uv_loop_fork (a new epoll instance, every
 * watcher registered again). */
#define _GNU_SOURCE
#include <node_api.h>
#include <uv.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/fork_server.h"
#include "sandbox/private_fds.h"

#define NSIG_RAW 64

/* the kernel's struct sigaction (rt_sigaction with an 8-byte mask) */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

typedef void (*handler)(void);
typedef size_t (*children_fn)(const handler **);

static struct ksigaction release_act[NSIG_RAW + 1];
static children_fn atfork_children; /* gl-atfork.so's */
static struct gl_private_fds keep;
static int stdio_keep[2] = {-1, -1};
static char host_path[4096]; /* gl-exec-host, for the copy protocol; "": none */
static char state_dir[4096]; /* its workspace (gl-exec-host's STATE_DIR); "": none */

static napi_value throw_err(napi_env env, const char *what)
{
	napi_throw_error(env, NULL, what);
	return NULL;
}

/* Every handler to its default, the release's kept for its copies. */
static int handlers_off(void)
{
	for (int sig = 1; sig <= NSIG_RAW; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (syscall(SYS_rt_sigaction, sig, NULL, &release_act[sig], 8) < 0)
			return -1;
		void *h = release_act[sig].handler;
		if (h == (void *)SIG_DFL || h == (void *)SIG_IGN)
			continue;
		struct ksigaction dfl = {.handler = (void *)SIG_DFL};
		if (syscall(SYS_rt_sigaction, sig, &dfl, NULL, 8) < 0)
			return -1;
	}
	return 0;
}

static void handlers_back(void)
{
	for (int sig = 1; sig <= NSIG_RAW; sig++) {
		void *h = release_act[sig].handler;
		if (sig != SIGKILL && sig != SIGSTOP && h != (void *)SIG_DFL && h != (void *)SIG_IGN)
			syscall(SYS_rt_sigaction, sig, &release_act[sig], NULL, 8);
	}
}

/* MADV_DOFORK on every mapping of [lo, hi). The germline has no /proc to
 * list them: madvise walks every mapping of a range and stops only at one
 * it refuses (VM_IO, e.g. [vvar]), so a refused range is halved until the
 * refusing page is alone. */
static void dofork_range(uintptr_t lo, uintptr_t hi)
{
	if (madvise((void *)lo, hi - lo, MADV_DOFORK) == 0 || errno != EINVAL)
		return; /* ENOMEM: holes in the range, every mapping done */
	if (hi - lo <= 4096)
		return;
	uintptr_t mid = lo + ((hi - lo) / 2 & ~(uintptr_t)4095);
	dofork_range(lo, mid);
	dofork_range(mid, hi);
}

static napi_value stdio(napi_env env, napi_callback_info info)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return throw_err(env, "germline: pipe2");
	if (pipe2(out, O_CLOEXEC) < 0 || dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
		return throw_err(env, "germline: the stdio pipes");
	close(in[0]);
	close(out[1]);
	stdio_keep[0] = in[1];
	stdio_keep[1] = out[0];
	napi_value arr, v;
	napi_create_array_with_length(env, 2, &arr);
	for (uint32_t i = 0; i < 2; i++) {
		napi_create_int32(env, stdio_keep[i], &v);
		napi_set_element(env, arr, i, v);
	}
	return arr;
}

/* The copy protocol (docs/design/run.md) on the channel: the copy splits
 * in two. This process (PID 1 of the copy's namespace) becomes
 * gl-exec-host, which adopts the other, the server, as its target
 * (hosts/exec/gl-exec-host.c --adopt); the server goes on with a socket to
 * the host on its stdin and stdout. Returns in the server only, with that
 * socket in *fd. */
static void split_for_host(int *fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		_exit(70);
	long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		_exit(70);
	if (pid == 0) { /* the server: it dies with its host */
		close(sv[1]);
		close(3);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != 1)
			_exit(70);
		*fd = sv[0];
		return;
	}
	char p[24];
	snprintf(p, sizeof p, "%ld", pid);
	if (dup3(sv[1], 5, 0) < 0 || syscall(SYS_close_range, 6u, ~0u, 0u) < 0)
		_exit(70);
	close(4);
	char *argv[] = {"gl-exec-host", "mcp-stdio", state_dir[0] ? state_dir : "-", "--", "--adopt", p,
			NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
	execve(host_path, argv, envp);
	_exit(71);
}

/* In a copy, let go: what fork() and Node would have done in a child. */
static napi_value become_copy(napi_env env)
{
	handlers_back();
	const handler *list = NULL;
	size_t n = atfork_children(&list);
	for (size_t i = 0; i < n; i++)
		list[i]();
	int chan = 3;
	if (host_path[0])
		split_for_host(&chan);
	uv_loop_t *loop;
	if (dup2(chan, 0) < 0 || dup2(chan, 1) < 0 || napi_get_uv_event_loop(env, &loop) != napi_ok ||
	    uv_loop_fork(loop) != 0)
		_exit(70);
	if (chan != 3)
		close(chan);
	napi_value three;
	napi_create_int32(env, 3, &three);
	return three;
}

/* A string argument into buf ("" when it is not a string). 0, or -1. */
static int string_arg(napi_env env, napi_value v, char *buf, size_t cap)
{
	napi_valuetype t;
	size_t n = 0;
	buf[0] = 0;
	if (napi_typeof(env, v, &t) != napi_ok)
		return -1;
	if (t != napi_string)
		return 0;
	if (napi_get_value_string_utf8(env, v, buf, cap, &n) != napi_ok || n + 1 >= cap)
		return -1;
	return 0;
}

/* serve(ctl, profile, copyUids, hostPath, stateDir) — see the top of the file. */
static napi_value serve(napi_env env, napi_callback_info info)
{
	size_t argc = 5;
	napi_value argv[5];
	int32_t ctl = -1;
	bool uids = false;
	char prof[32] = "";
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 5 ||
	    napi_get_value_int32(env, argv[0], &ctl) != napi_ok || ctl < 0 ||
	    napi_get_value_bool(env, argv[2], &uids) != napi_ok ||
	    string_arg(env, argv[1], prof, sizeof prof) < 0 ||
	    string_arg(env, argv[3], host_path, sizeof host_path) < 0 ||
	    string_arg(env, argv[4], state_dir, sizeof state_dir) < 0)
		return throw_err(env, "serve(ctl, profile, copyUids, hostPath, stateDir)");
	atfork_children = (children_fn)dlsym(RTLD_DEFAULT, "gl_atfork_children");
	const handler *list;
	if (!atfork_children || atfork_children(&list) == (size_t)-1)
		return throw_err(env, "germline: gl-atfork.so is not preloaded, or overflowed");
	struct gl_fork_server g = {.ctl = ctl, .copy_uids = uids, .keep = &keep};
	char err[256];
	if (gl_fork_server_setup(&g, *prof ? prof : NULL, err, sizeof err) < 0)
		return throw_err(env, err);
	if (handlers_off() < 0)
		return throw_err(env, "germline: rt_sigaction");
	/* the germline's ends of the stdio pipes, done with: nothing reading
	 * or writing them in a copy can block on them */
	for (int i = 0; i < 2; i++)
		if (stdio_keep[i] >= 0)
			fcntl(stdio_keep[i], F_SETFL, fcntl(stdio_keep[i], F_GETFL) | O_NONBLOCK);
	dofork_range(4096, (uintptr_t)1 << 47);
	if (gl_private_fds_take(&keep, 4, ctl, err, sizeof err) < 0)
		return throw_err(env, err);
	gl_fork_server_ready(&g);
	for (;;)
		if (gl_fork_serve_one(&g))
			return become_copy(env);
}

static napi_value report_error(napi_env env, napi_callback_info info)
{
	size_t argc = 2, n = 0;
	napi_value argv[2];
	int32_t fd;
	char text[4096];
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
	    napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
	    napi_get_value_string_utf8(env, argv[1], text, sizeof text, &n) != napi_ok)
		return throw_err(env, "reportError(ctl, text)");
	gl_fork_send_error(fd, text, n);
	return NULL;
}

/* NAPI_MODULE_INIT defines this one without a declaration first */
NAPI_MODULE_EXPORT int32_t NODE_API_MODULE_GET_API_VERSION(void);

NAPI_MODULE_INIT()
{
	static const struct {
		const char *name;
		napi_callback fn;
	} fns[] = {{"stdio", stdio}, {"serve", serve}, {"reportError", report_error}};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		napi_value f;
		if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) !=
			napi_ok ||
		    napi_set_named_property(env, exports, fns[i].name, f) != napi_ok)
			return NULL;
	}
	return exports;
}
