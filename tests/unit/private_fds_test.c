/* Unit tests of lib/sandbox/private_fds.c: what a Node germline's copy does
 * with the runtime's own descriptors. A process holding a pipe with bytes
 * in it, an eventfd with a count, an epoll instance and /dev/null records
 * them; a child (standing for a copy) makes them its own: the same numbers,
 * kinds, flags and contents, but none of them the parent's open file
 * (kcmp), and whatever the child then writes never reaches the parent.
 * Every other descriptor from 4 up is closed. A pipe holding bytes whose
 * write end is not open, and more bytes than a copy is given, are refused.
 * Run by tests/lib.bats under the plain and the sanitizer build. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/private_fds.h"

#include "check.h"

static struct gl_private_fds p;

static int same_file(pid_t a, int fa, pid_t b, int fb)
{
	return (int)syscall(SYS_kcmp, a, b, 0 /* KCMP_FILE */, (unsigned long)fa, (unsigned long)fb) == 0;
}

/* In the child: apply, close the rest, then report on what it holds. The
 * exit status is the number of failed expectations (its CHECKs are the
 * parent's to count). */
static int child(int pr, int pw, int efd, int ep, int nul, int extra)
{
	int bad = 0;
	if (gl_private_fds_apply(&p) < 0 || gl_private_fds_close_rest(&p) < 0)
		return 100;
	pid_t parent = getppid();
	int kept[] = {pr, pw, efd, ep, nul};
	for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
		bad += fcntl(kept[i], F_GETFD) < 0 || same_file(getpid(), kept[i], parent, kept[i]);
	bad += fcntl(extra, F_GETFD) >= 0; /* closed */
	char buf[16] = "";
	bad += read(pr, buf, sizeof buf) != 5 || memcmp(buf, "hello", 5) != 0;
	bad += !(fcntl(pr, F_GETFL) & O_NONBLOCK); /* the flags came along */
	uint64_t c = 0;
	bad += read(efd, &c, sizeof c) != sizeof c || c != 7;
	struct epoll_event ev;
	bad += epoll_wait(ep, &ev, 1, 0) != 0; /* a new, empty instance */
	/* what the copy writes stays its own */
	bad += write(pw, "secret", 6) != 6;
	c = 99;
	bad += write(efd, &c, sizeof c) != sizeof c;
	return bad;
}

int main(void)
{
	/* whatever the test runner passed down is not the test's (a germline
	 * holds only what the launch gave it) */
	syscall(SYS_close_range, 3u, ~0u, 0u);
	int pp[2];
	CHECK(pipe2(pp, O_CLOEXEC | O_NONBLOCK) == 0);
	CHECK(write(pp[1], "hello", 5) == 5);
	int efd = eventfd(7, EFD_CLOEXEC | EFD_NONBLOCK), ep = epoll_create1(EPOLL_CLOEXEC);
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(efd >= 0 && ep >= 0 && nul >= 0);
	char err[256] = "";
	int lo = pp[0];
	CHECK(gl_private_fds_take(&p, lo, -1, err, sizeof err) == 0, "%s", err);
	int extra = open("/etc/hostname", O_RDONLY | O_CLOEXEC); /* not recorded: closed in the child */
	CHECK(extra >= 0);
	CHECK(p.n == 5, "%zu recorded", p.n);
	CHECK(p.npipe == 1 && p.nbuf == 5 && !memcmp(p.buf, "hello", 5));
	/* taking read the pipe and the eventfd and wrote them back */
	uint64_t c = 0;
	CHECK(read(efd, &c, sizeof c) == sizeof c && c == 7);
	c = 7;
	CHECK(write(efd, &c, sizeof c) == sizeof c);

	pid_t k = fork();
	if (k == 0)
		_exit(child(pp[0], pp[1], efd, ep, nul, extra));
	int st = 0;
	CHECK(waitpid(k, &st, 0) == k && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the child found %d wrong", WEXITSTATUS(st));
	/* the parent's objects are as they were: the child's writes are not here */
	char buf[16] = "";
	CHECK(read(pp[0], buf, sizeof buf) == 5 && !memcmp(buf, "hello", 5));
	CHECK(read(efd, &c, sizeof c) == sizeof c && c == 7, "count %llu", (unsigned long long)c);

	/* refused: bytes in a pipe whose write end is not open */
	int q[2];
	CHECK(pipe2(q, O_CLOEXEC) == 0 && write(q[1], "x", 1) == 1);
	close(q[1]);
	CHECK(gl_private_fds_take(&p, lo, -1, err, sizeof err) < 0 &&
	      strstr(err, "write end is not open"), "%s", err);
	close(q[0]);
	/* refused: more than a copy is given */
	CHECK(pipe2(q, O_CLOEXEC) == 0);
	static char big[GL_PRIVATE_BYTES_MAX + 1];
	CHECK(write(q[1], big, sizeof big) == (ssize_t)sizeof big);
	CHECK(gl_private_fds_take(&p, lo, -1, err, sizeof err) < 0 && strstr(err, "more bytes"), "%s", err);
	return check_done();
}
