/* Unit test of the table gl-run's workers share (lib/sandbox/live.c;
 * gl-run --jobs, docs/design/run.md "Workers"): a worker SIGKILLed while it
 * holds the robust mutex blocks nobody; the main process, reaping a dead
 * worker, kills the copy it registered and nothing of another owner; a
 * cgroup slot claimed by one process is busy for another until released.
 *
 *   live_test
 *
 * Run by tests/lib.bats. Exit 0 when every check holds. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/live.h"
#include "core/util.h"
#include "check.h"

/* A child that only sleeps (a stand-in for a copy): its pid. */
static pid_t sleeper(void)
{
	pid_t p = fork();
	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

/* A worker that registers c's pidfd, tells the parent on w, and waits to
 * be killed: its pid. */
static pid_t worker(pid_t c, int w)
{
	pid_t p = fork();
	if (p == 0) {
		int fd = (int)syscall(SYS_pidfd_open, c, 0);
		char r = fd >= 0 && gl_live_add(fd) == 0 ? 'y' : 'n';
		if (write(w, &r, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	return p;
}

static bool killed_by(pid_t p, int sig)
{
	int ws = 0;
	return waitpid(p, &ws, 0) == p && WIFSIGNALED(ws) && WTERMSIG(ws) == sig;
}

int main(void)
{
	alarm(60); /* a mutex left locked would hang: fail instead */
	CHECK(!gl_live_on());
	CHECK(gl_live_reap(getpid()) == 0); /* no region: nothing */
	gl_live_open();
	CHECK(gl_live_on());

	/* robust: the holder dies inside; the next lock still returns */
	pid_t h = fork();
	if (h == 0) {
		gl_live_lock();
		raise(SIGKILL);
	}
	CHECK(killed_by(h, SIGKILL));
	gl_live_lock();
	gl_live_unlock();
	CHECK(true, "locked again after the holder's death");

	/* a dead worker's copy is killed at its reap; another owner's is not */
	int pp[2];
	CHECK(pipe(pp) == 0);
	pid_t c = sleeper(), other = sleeper();
	pid_t w = worker(c, pp[1]);
	char r = 0;
	CHECK(read(pp[0], &r, 1) == 1 && r == 'y', "the worker registered its copy");
	kill(w, SIGKILL);
	CHECK(killed_by(w, SIGKILL));
	CHECK(gl_live_reap(getpid()) == 0, "not this process's copy");
	CHECK(kill(c, 0) == 0, "alive until its worker is reaped");
	CHECK(gl_live_reap(w) == 1);
	CHECK(killed_by(c, SIGKILL));
	CHECK(gl_live_reap(w) == 0, "forgotten once killed");
	CHECK(kill(other, 0) == 0);
	kill(other, SIGKILL);
	CHECK(killed_by(other, SIGKILL));

	/* slot claims: one owner at a time; the owner claims again */
	CHECK(gl_live_slot_claim(3));
	CHECK(gl_live_slot_claim(3));
	CHECK(gl_live_slot_owned(3, getpid()));
	pid_t k = fork();
	if (k == 0)
		_exit(!gl_live_slot_claim(3) && gl_live_slot_claim(4) ? 0 : 1);
	int ws = 0;
	CHECK(waitpid(k, &ws, 0) == k && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	CHECK(gl_live_slot_owned(4, k));
	CHECK(!gl_live_slot_claim(4), "a dead process's claim stays until reclaimed");
	gl_live_slot_release(4);
	CHECK(gl_live_slot_claim(4));
	CHECK(!gl_live_slot_claim(GL_LIVE_SLOTS_MAX));
	gl_live_set_nslots(7);
	gl_live_set_nslots(5);
	CHECK(gl_live_nslots() == 7);
	return check_done();
}
