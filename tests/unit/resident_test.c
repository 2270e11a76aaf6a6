/* Unit test of gl-run's --max-resident room (lib/session/resident.c
 * gl_session_room; issue 19, docs/gl-run.md "--max-resident"): with K
 * releases resident, making room for one more stops the least recently
 * used idle one and no other; a busy one (a call in flight, gl-run --jobs)
 * is never stopped, and when every resident is busy the launch is refused
 * ("launch", naming --max-resident) rather than going over K. A resident
 * hit needs no room. The residents hold real processes (sleeping children,
 * as a sigpin session process is: an unconfined child reaped by
 * gl_session_stop); the off case is K = 256, where nothing is stopped.
 *
 *   resident_test
 *
 * Run by tests/lib.bats. Exit 0 when every check holds. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "session/session_impl.h"
#include "check.h"

/* r holds a real process: a child that sleeps until it is killed. */
static void hold(struct gl_resident *r, uint64_t used)
{
	memset(r, 0, sizeof *r);
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	r->sp = (struct gl_session_proc){
	    .pid = pid, .pidfd = (int)syscall(SYS_pidfd_open, pid, 0), .sock = -1, .up = true};
	r->used = used;
	r->g.pid = r->g.pidfd = r->g.ctl = -1;
	r->manifest = jv_null();
}

static bool alive(const struct gl_resident *r)
{
	return r->sp.up && kill(r->sp.pid, 0) == 0;
}

int main(void)
{
	struct gl_session s = {0};
	struct gl_resident res[4];
	s.res = res;
	s.nres = 4;
	/* three residents: res[1] the least recently used, res[0] next */
	hold(&res[0], 20);
	hold(&res[1], 10);
	hold(&res[2], 30);
	memset(&res[3], 0, sizeof res[3]); /* the release about to launch */
	res[3].sp = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
	struct gl_fail f = {0};

	/* off: K = 256 (0 = the default), nothing is stopped */
	CHECK(gl_session_room(&s, &res[3], &f) == 0);
	CHECK(alive(&res[0]) && alive(&res[1]) && alive(&res[2]));
	/* a resident hit needs no room, whatever K is */
	s.max_resident = 1;
	CHECK(gl_session_room(&s, &res[2], &f) == 0);
	CHECK(alive(&res[0]) && alive(&res[1]) && alive(&res[2]));

	/* on: K = 3, the LRU (res[1]) is busy: the next idle one, res[0], goes */
	s.max_resident = 3;
	res[1].busy = 1;
	pid_t was = res[0].sp.pid;
	CHECK(gl_session_room(&s, &res[3], &f) == 0);
	CHECK(!res[0].sp.up && alive(&res[1]) && alive(&res[2]));
	CHECK(kill(was, 0) < 0, "the evicted process %d is still there", (int)was);
	CHECK(!gl_session_is_resident(&res[0]));

	/* K = 2 with res[1] and res[2] both busy: refused, nothing stopped */
	s.max_resident = 2;
	res[2].busy = 1;
	CHECK(gl_session_room(&s, &res[3], &f) == -1);
	CHECK(f.code == GL_E_LAUNCH);
	CHECK(f.detail && strstr(f.detail, "--max-resident 2"), "detail: %s", gl_fail_detail(&f));
	CHECK(alive(&res[1]) && alive(&res[2]));
	gl_fail_clear(&f);

	/* one of them idle again: it is stopped */
	res[2].busy = 0;
	CHECK(gl_session_room(&s, &res[3], &f) == 0);
	CHECK(alive(&res[1]) && !res[2].sp.up);

	res[1].busy = 0;
	gl_session_stop(&res[1].sp);
	CHECK(!res[1].sp.up);
	return check_done();
}
