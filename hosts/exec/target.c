/* target.c — gl-exec-host's target: the release's entry[0], retained by
 * the broker on fd 5 and started from it (execveat AT_EMPTY_PATH) with a
 * socketpair on its stdin/stdout and a pipe on its stderr; its twin inputs
 * (docs/exec.md "Twin inputs"); and the loop that reads its output while
 * serving the relay. It is hostile code: what it writes is kept within
 * OUT_MAX bytes, its stderr within a fixed tail. */
#define _GNU_SOURCE
#include "host_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/json.h"
#include "json/msg.h"
#include "release/manifest.h"

#define OUT_MAX (32u << 20)      /* bytes of the target's output kept */

pid_t target = -1;
/* Adopted (a Node germline's copy, gl-exec-host ... -- --adopt PID): the
 * target is already running, its stdin and stdout the socket on fd 5, and
 * there is no relay (fds 4 and 6 are not polled). */
bool adopted;
static int errfd = -1;        /* the target's stderr (a pipe), or -1 */
static char errtail[1024];    /* its last bytes, for a failure's detail */
static size_t errlen;

/* Read what the target wrote on its stderr so far, keeping the last
 * sizeof errtail bytes. */
static void drain_stderr(void)
{
	char tmp[4096];
	ssize_t n;
	while (errfd >= 0 && (n = read(errfd, tmp, sizeof tmp)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				close(errfd), errfd = -1;
			return;
		}
		size_t k = (size_t)n > sizeof errtail ? sizeof errtail : (size_t)n;
		if (errlen + k > sizeof errtail) {
			size_t drop = errlen + k - sizeof errtail;
			memmove(errtail, errtail + drop, errlen - drop);
			errlen -= drop;
		}
		memcpy(errtail + errlen, tmp + (size_t)n - k, k);
		errlen += k;
	}
	if (errfd >= 0 && n == 0)
		close(errfd), errfd = -1;
}

char *stderr_note(void)
{
	drain_stderr();
	if (!errlen)
		return gl_xstrdup("");
	autofree char *tail = gl_sanitize(errtail, errlen);
	return gl_xasprintf("; stderr: %s", tail);
}

/* "${GL_STATE_DIR}" in s replaced by dir (malloc'd). */
static char *subst(const char *s, const char *dir)
{
	const char *tok = "${GL_STATE_DIR}";
	struct gl_buf b = {0};
	const char *p;
	while ((p = strstr(s, tok))) {
		gl_buf_add(&b, s, (size_t)(p - s));
		gl_buf_adds(&b, dir);
		s = p + strlen(tok);
	}
	gl_buf_adds(&b, s);
	gl_buf_addc(&b, 0);
	return b.data;
}

/* The call's twin inputs for the target (hosts/exec/twin.cjs reads them,
 * loaded through the NODE_OPTIONS lib/runtime/exec.c sets; paper §IV-F, A4):
 * "GL_TWIN_TIME=…" and "GL_TWIN_SEED=…", or NULL (a session: real clocks). */
static char *twin_env[2];

void twin_from(jv call)
{
	if (twin_env[0])
		return; /* taken once, for every target this host starts */
	jv tw = gl_json_get(call, "twin");
	jv tm = gl_json_get(tw, "time");
	const char *seed = gl_json_get_str(tw, "seed");
	if (jv_get_kind(tm) == JV_KIND_NUMBER && isfinite(jv_number_value(tm)) && seed &&
	    gl_sha256_hex_ok(seed, strlen(seed))) {
		twin_env[0] = gl_xasprintf("GL_TWIN_TIME=%.6f", jv_number_value(tm));
		twin_env[1] = gl_xasprintf("GL_TWIN_SEED=%s", seed);
	}
	jv_free(tm);
	jv_free(tw);
}

void twin_free(void)
{
	free(twin_env[0]);
	free(twin_env[1]);
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int start_target(char **targv, const char *dir, int *tfd, struct end *e)
{
	int sv[2], ep[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fail(e, "host: socketpair failed", jv_invalid());
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(sv[0]);
		close(sv[1]);
		return fail(e, "host: socketpair failed", jv_invalid());
	}
	extern char **environ;
	size_t ne = 0;
	while (environ[ne])
		ne++;
	char **envp = gl_xcalloc(ne + 3, sizeof *envp);
	for (size_t i = 0; i < ne; i++)
		envp[i] = subst(environ[i], dir);
	size_t nsub = ne; /* envp[0..nsub) are ours; twin_env's stay */
	for (size_t i = 0; i < 2 && twin_env[i]; i++)
		envp[ne++] = twin_env[i];
	size_t na = 0;
	while (targv[na])
		na++;
	char **av = gl_xcalloc(na + 1, sizeof *av);
	for (size_t i = 0; i < na; i++)
		av[i] = subst(targv[i], dir);
	target = fork();
	if (target == 0) {
		if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0 || dup2(ep[1], 2) < 0)
			_exit(127);
		close(CHAN);
		close(RELAY);
		close(RELAY_TLS);
		syscall(SYS_execveat, TARGET, "", av, envp, AT_EMPTY_PATH);
		_exit(127);
	}
	free_strv(envp, nsub);
	free_strv(av, na);
	close(sv[1]);
	close(ep[1]);
	if (target < 0) {
		close(sv[0]);
		close(ep[0]);
		return fail(e, "host: fork failed", jv_invalid());
	}
	if (errfd >= 0)
		close(errfd);
	errfd = ep[0];
	errlen = 0;
	fcntl(errfd, F_SETFL, O_NONBLOCK);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	*tfd = sv[0];
	return 0;
}

int adopt_target(const char *pid, int *tfd)
{
	char *end;
	long v = strtol(pid, &end, 10);
	struct stat st;
	if (*end || v <= 1 || v > INT32_MAX || fstat(TARGET, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -1;
	target = (pid_t)v;
	adopted = true;
	fcntl(TARGET, F_SETFL, O_NONBLOCK);
	*tfd = TARGET;
	return 0;
}

void stop_target(void)
{
	if (target <= 0)
		return;
	kill(target, SIGKILL);
	while (waitpid(target, NULL, 0) < 0 && errno == EINTR)
		;
	target = -1;
}

/* ---- the loop: the target's output and the relay ----------------------------- */

int pump(struct io *io, bool want_line, struct end *e)
{
	for (;;) {
		if (want_line && io->out.len && memchr(io->out.data, '\n', io->out.len))
			return 0;
		if (io->eof)
			return 0;
		struct pollfd p[4 + GL_STREAM_DESTS_MAX + GL_MSG_STREAM_CONNS_MAX] = {
		    {.fd = io->tfd, .events = POLLIN},
		    {.fd = adopted ? -1 : RELAY, .events = POLLIN},
		    {.fd = errfd, .events = POLLIN},
		    {.fd = adopted ? -1 : RELAY_TLS, .events = POLLIN}};
		size_t ns = stream_pollfds(p + 4);
		int r = poll(p, 4 + ns, stream_timeout());
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail(e, "host: poll failed", jv_invalid());
		stream_handle(p + 4, ns);
		if (p[2].revents)
			drain_stderr();
		if (p[1].revents & POLLIN) {
			int c = accept4(RELAY, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				relay_one(c);
		}
		if (p[3].revents & POLLIN) {
			int c = accept4(RELAY_TLS, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				relay_one_tls(c);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char tmp[65536];
			ssize_t n = read(io->tfd, tmp, sizeof tmp);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				io->eof = true;
				continue;
			}
			if (io->out.len + (size_t)n > OUT_MAX)
				return fail(e, "host: the server's output is too large", jv_invalid());
			gl_buf_add(&io->out, tmp, (size_t)n);
		}
	}
}
