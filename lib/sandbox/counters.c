/* counters.c — hard limits on the per-user kernel counters; see counters.h. */
#define _GNU_SOURCE
#include "sandbox/counters.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

bool gl_counters_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_COUNTERS_OFF");
}

int gl_counters_bound(pid_t pid)
{
	static const struct {
		int res;
		rlim_t v;
	} lim[] = {
	    {RLIMIT_SIGPENDING, GL_COUNTER_SIGPENDING},
	    {RLIMIT_MSGQUEUE, GL_COUNTER_MSGQUEUE},
	    {RLIMIT_MEMLOCK, GL_COUNTER_MEMLOCK},
	    {RLIMIT_NOFILE, GL_COUNTER_NOFILE},
	};
	for (size_t i = 0; i < sizeof lim / sizeof *lim; i++) {
		struct rlimit cur;
		if (prlimit(pid, lim[i].res, NULL, &cur) < 0)
			return -1;
		rlim_t v = cur.rlim_max != RLIM_INFINITY && cur.rlim_max < lim[i].v ? cur.rlim_max
										  : lim[i].v;
		struct rlimit r = {v, v};
		if (prlimit(pid, lim[i].res, &r, NULL) < 0)
			return -1;
	}
	return 0;
}
