/* live.c — the region the processes of one gl-run share; see live.h. */
#define _GNU_SOURCE
#include "sandbox/live.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"

struct live_copy {
	pid_t owner; /* 0: a free entry */
	pid_t pid;
	uint64_t start; /* /proc/PID/stat field 22 */
};

struct live_region {
	pthread_mutex_t mu; /* PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST */
	pthread_mutex_t fork_mu; /* the same kind: gl_live_fork_lock */
	struct live_copy copy[GL_LIVE_COPIES_MAX];
	_Atomic pid_t slot[GL_LIVE_SLOTS_MAX]; /* 0: free; else the claimer */
	unsigned nslots;
};

static struct live_region *region;

void gl_live_open(void)
{
	if (region)
		return;
	void *p = mmap(NULL, sizeof *region, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED)
		gl_die(GL_EXIT_USAGE, "out of memory: the workers' shared table: %s", strerror(errno));
	struct live_region *r = p;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&r->mu, &a);
	pthread_mutex_init(&r->fork_mu, &a);
	pthread_mutexattr_destroy(&a);
	region = r;
}

bool gl_live_on(void)
{
	return region != NULL;
}

void gl_live_lock(void)
{
	if (!region)
		return;
	int rc = pthread_mutex_lock(&region->mu);
	/* its holder was killed inside: every update below is a single store
	 * of a whole entry's owner last, so the table is consistent as it is */
	if (rc == EOWNERDEAD)
		pthread_mutex_consistent(&region->mu);
}

void gl_live_unlock(void)
{
	if (region)
		pthread_mutex_unlock(&region->mu);
}

/* pid's start time (field 22 of /proc/PID/stat), or 0. */
static uint64_t start_time(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	autofree char *st = NULL;
	size_t len;
	if (gl_read_file_capped(path, 4096, &st, &len) < 0)
		return 0;
	const char *p = strrchr(st, ')'); /* comm may hold anything */
	if (!p || p[1] != ' ')
		return 0;
	p += 2; /* field 3, the state */
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	unsigned long long v = 0;
	return p && sscanf(p, "%llu", &v) == 1 ? (uint64_t)v : 0;
}

/* The pid a pidfd refers to (its fdinfo), or -1. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
	autofree char *info = NULL;
	size_t len;
	if (gl_read_file_capped(path, 64 * 1024, &info, &len) < 0)
		return -1;
	const char *p = strstr(info, "\nPid:");
	long pid = p ? strtol(p + 5, NULL, 10) : -1;
	return pid > 0 && pid <= INT32_MAX ? (pid_t)pid : -1;
}

/* Is the process of pidfd still running (its pidfd not readable)? */
static bool pidfd_alive(int pidfd)
{
	struct pollfd pf = {.fd = pidfd, .events = POLLIN};
	return poll(&pf, 1, 0) == 0;
}

int gl_live_add(int pidfd)
{
	if (!region)
		return 0;
	pid_t pid = pidfd_pid(pidfd);
	uint64_t start = pid > 0 ? start_time(pid) : 0;
	/* read after the pidfd pinned it, then still alive: pid's identity */
	if (pid <= 0 || !start || !pidfd_alive(pidfd))
		return -1;
	int rc = -1;
	gl_live_lock();
	for (size_t i = 0; i < GL_LIVE_COPIES_MAX; i++)
		if (!region->copy[i].owner) {
			region->copy[i].pid = pid;
			region->copy[i].start = start;
			region->copy[i].owner = getpid();
			rc = 0;
			break;
		}
	gl_live_unlock();
	return rc;
}

void gl_live_remove(int pidfd)
{
	if (region && pidfd >= 0)
		gl_live_remove_pid(pidfd_pid(pidfd));
}

pid_t gl_live_pid(int pidfd)
{
	return region && pidfd >= 0 ? pidfd_pid(pidfd) : -1;
}

void gl_live_remove_pid(pid_t pid)
{
	if (!region || pid <= 0)
		return;
	pid_t me = getpid();
	gl_live_lock();
	for (size_t i = 0; i < GL_LIVE_COPIES_MAX; i++)
		if (region->copy[i].owner == me && region->copy[i].pid == pid)
			region->copy[i].owner = 0;
	gl_live_unlock();
}

/* SIGKILL the process pid if it is still the one that started at start;
 * wait up to 5 s for it to be gone (a copy's pidfd is readable once its
 * PID namespace is empty). true when it was killed. */
static bool kill_same(pid_t pid, uint64_t start)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return false; /* gone */
	bool same = start_time(pid) == start;
	if (same) {
		syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		while (poll(&pf, 1, 5000) < 0 && errno == EINTR)
			;
	}
	close(fd);
	return same;
}

unsigned gl_live_reap(pid_t owner)
{
	if (!region || owner <= 0)
		return 0;
	unsigned n = 0;
	for (size_t i = 0; i < GL_LIVE_COPIES_MAX; i++) {
		gl_live_lock();
		struct live_copy c = region->copy[i];
		if (c.owner == owner)
			region->copy[i].owner = 0;
		gl_live_unlock();
		if (c.owner == owner && kill_same(c.pid, c.start))
			n++;
	}
	return n;
}

bool gl_live_slot_claim(unsigned i)
{
	if (!region)
		return true;
	if (i >= GL_LIVE_SLOTS_MAX)
		return false;
	pid_t me = getpid(), free_ = 0;
	return atomic_compare_exchange_strong(&region->slot[i], &free_, me) || free_ == me;
}

void gl_live_slot_release(unsigned i)
{
	if (region && i < GL_LIVE_SLOTS_MAX)
		atomic_store(&region->slot[i], 0);
}

bool gl_live_slot_owned(unsigned i, pid_t owner)
{
	return region && i < GL_LIVE_SLOTS_MAX && atomic_load(&region->slot[i]) == owner;
}

unsigned gl_live_nslots(void)
{
	return region ? region->nslots : 0;
}

void gl_live_set_nslots(unsigned n)
{
	if (region && n > region->nslots)
		region->nslots = n;
}

bool gl_live_known(pid_t pid)
{
	if (!region || pid <= 0)
		return false;
	uint64_t start = start_time(pid);
	bool known = false;
	gl_live_lock();
	for (size_t i = 0; i < GL_LIVE_COPIES_MAX && !known; i++)
		known = region->copy[i].owner && region->copy[i].pid == pid &&
			region->copy[i].start == start;
	gl_live_unlock();
	return known && start;
}

void gl_live_fork_lock(void)
{
	if (region && pthread_mutex_lock(&region->fork_mu) == EOWNERDEAD)
		pthread_mutex_consistent(&region->fork_mu);
}

void gl_live_fork_unlock(void)
{
	if (region)
		pthread_mutex_unlock(&region->fork_mu);
}
