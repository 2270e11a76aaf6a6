/* runtime.c — the runtime seam (runtime.h): the one choice between the
 * python germline and exec, the host directory both start from, and the
 * old entry points that took a struct gl_germline for either runtime, now
 * thin wrappers over the seam (issue 18). */
#define _GNU_SOURCE
#include "runtime/runtime.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/exec.h"
#include "runtime/germline.h"
#include "core/util.h"

const struct gl_runtime_ops *gl_runtime_ops_for(enum gl_runtime_kind kind)
{
	switch (kind) {
	case GL_RT_PYTHON:
		return &gl_germline_ops;
	case GL_RT_EXEC:
		return &gl_exec_ops;
	default:
		return NULL;
	}
}

bool gl_runtime_forks(const struct gl_runtime *rt)
{
	return rt->ops == &gl_germline_ops;
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
#ifdef GL_SAN_HOST_DIR
	/* the sanitizer build (make asan): its own host directory, whose
	 * gl-exec-host is built with the sanitizers too (Makefile ASAN_HOST) */
	return gl_xstrdup(GL_SAN_HOST_DIR);
#else
	return gl_xstrdup(GL_BUILD_HOST_DIR);
#endif
}

void gl_copy_kill(int copy_pidfd)
{
	if (copy_pidfd < 0)
		return;
	if (syscall(SYS_pidfd_send_signal, copy_pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
		gl_warn_errno("cannot kill a copy");
	/* A copy is PID 1 of its own PID namespace (A1, O3). When it dies the
	 * kernel kills every other process of the namespace and makes the
	 * init's exit visible (the pidfd readable) only after the namespace is
	 * empty (zap_pid_ns_processes waits for them all). So once this poll
	 * returns, the copy and every descendant are gone, and the next copy
	 * may start ("each ending with its descendants before the next starts"). */
	for (;;) {
		struct pollfd pf = {.fd = copy_pidfd, .events = POLLIN};
		int r = poll(&pf, 1, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			gl_warn_errno("waiting for a copy");
		break;
	}
}

/* ---- struct gl_germline, which stands for either runtime ------------------- */

struct gl_runtime *gl_germline_runtime(struct gl_germline *g)
{
	if (g->exec)
		return &g->exec->rt; /* set by gl_exec_open */
	g->rt.ops = &gl_germline_ops; /* also for a handle never launched (stop after a failure) */
	return &g->rt;
}

int gl_germline_check(const struct gl_germline *g, struct gl_fail *f)
{
	return gl_runtime_check(gl_germline_runtime((struct gl_germline *)g), f);
}

void gl_germline_stop(struct gl_germline *g)
{
	gl_runtime_stop(gl_germline_runtime(g));
	if (g->exec) { /* its memory was the handle's */
		free(g->exec);
		g->exec = NULL;
	}
}
