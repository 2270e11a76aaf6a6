/* cancel.c — cancelling the running call; see cancel.h. */
#define _GNU_SOURCE
#include "core/cancel.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static void kill_fd(int pidfd)
{
	(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
}

void gl_cancel_init(struct gl_cancel *c)
{
	pthread_mutex_init(&c->mu, NULL);
	c->requested = false;
	c->n = 0;
}

void gl_cancel_reset(struct gl_cancel *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->requested = false;
	c->n = 0;
	pthread_mutex_unlock(&c->mu);
}

void gl_cancel_arm(struct gl_cancel *c, int pidfd)
{
	if (!c || pidfd < 0)
		return;
	pthread_mutex_lock(&c->mu);
	if (c->requested)
		kill_fd(pidfd);
	else if (c->n < GL_CANCEL_COPIES)
		c->pidfd[c->n++] = pidfd;
	pthread_mutex_unlock(&c->mu);
}

void gl_cancel_disarm(struct gl_cancel *c, int pidfd)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	for (unsigned i = 0; i < c->n; i++)
		if (c->pidfd[i] == pidfd) {
			c->pidfd[i] = c->pidfd[--c->n];
			break;
		}
	pthread_mutex_unlock(&c->mu);
}

bool gl_cancel_requested(struct gl_cancel *c)
{
	if (!c)
		return false;
	pthread_mutex_lock(&c->mu);
	bool r = c->requested;
	pthread_mutex_unlock(&c->mu);
	return r;
}

void gl_cancel_fire(struct gl_cancel *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->requested = true;
	for (unsigned i = 0; i < c->n; i++)
		kill_fd(c->pidfd[i]);
	pthread_mutex_unlock(&c->mu);
}
