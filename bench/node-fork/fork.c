/* fork.c — the measuring tool of bench/node-fork.sh: a Node-API addon that
 * turns a warm Node process into a fork server, to measure what a Node
 * germline (issue 33) could give at best. Not part of germline: no
 * confinement, no checks, no broker; a bench's instrument only.
 *
 *   serve(ctl)  blocks the germline on descriptor ctl: each message carries
 *               one descriptor (SCM_RIGHTS), the copy's channel. The
 *               germline forks; the parent sends the child's pid back and
 *               waits for the next; the child puts the channel on its
 *               stdin and stdout, re-arms libuv's loop (uv_loop_fork: a new
 *               epoll instance, its watchers registered again) and
 *               returns to JavaScript, where the server's stdio transport
 *               goes on reading fd 0.
 *
 * Node builds V8 with v8_enable_private_mapping_fork_optimization: every
 * page V8 allocates is MADV_DONTFORK (a child of spawn() execs at once,
 * so the heap need not be copied), and a forked child that returns to
 * JavaScript faults on its first heap access. Before each fork every
 * mapping is marked MADV_DOFORK again. */
#define _GNU_SOURCE
#include <node_api.h>
#include <uv.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static int recv_fd(int ctl)
{
	char b;
	struct iovec io = {&b, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = c.buf,
			   .msg_controllen = sizeof c.buf};
	if (recvmsg(ctl, &m, MSG_CMSG_CLOEXEC) <= 0)
		return -1;
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
	    h->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(h), sizeof fd);
	return fd;
}

/* Every mapping copied into a child again (see the top of the file). */
static void dofork_all(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx", &a, &b) == 2)
			(void)madvise((void *)a, b - a, MADV_DOFORK); /* EINVAL on [vsyscall]: fine */
	}
	if (f)
		fclose(f);
}

static napi_value serve(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1], out;
	int32_t ctl = -1;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1 ||
	    napi_get_value_int32(env, argv[0], &ctl) != napi_ok || ctl < 0) {
		napi_throw_type_error(env, NULL, "serve(ctl): a descriptor");
		return NULL;
	}
	signal(SIGCHLD, SIG_IGN); /* copies are reaped by the kernel */
	for (;;) {
		int fd = recv_fd(ctl);
		if (fd < 0)
			_exit(0); /* the bench closed the control socket */
		dofork_all();
		pid_t pid = fork();
		if (pid == 0) {
			uv_loop_t *loop;
			signal(SIGCHLD, SIG_DFL);
			if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 ||
			    napi_get_uv_event_loop(env, &loop) != napi_ok || uv_loop_fork(loop) != 0)
				_exit(70);
			close(fd);
			close(ctl);
			napi_create_int32(env, 0, &out);
			return out;
		}
		close(fd);
		int32_t p = (int32_t)pid;
		if (write(ctl, &p, sizeof p) != sizeof p)
			_exit(0);
	}
}

NAPI_MODULE_INIT()
{
	napi_value f;
	if (napi_create_function(env, "serve", NAPI_AUTO_LENGTH, serve, NULL, &f) != napi_ok ||
	    napi_set_named_property(env, exports, "serve", f) != napi_ok)
		return NULL;
	return exports;
}
