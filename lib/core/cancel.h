/* cancel.h — cancelling the call that is running (gl-run --serve-mcp and
 * MCP's notifications/cancelled; issue 17; docs/mcp.md "Cancellation").
 *
 * The broker arms the control with each copy's pidfd while the copy runs
 * (lib/broker/broker_copy.c) and checks it before each group's fork
 * (lib/broker/broker.c); another thread (lib/session/mcp_serve.c's stdin reader) fires
 * it. Firing kills the armed copy with SIGKILL: the broker's read of the
 * copy's channel then ends (the copy "crashed"), line 27 of Algorithm 1
 * removes its descendants as for every copy (A1), and no later group is
 * forked. The pidfd is used only under the mutex and disarmed before the
 * broker closes it, so a signal never reaches a reused descriptor. A NULL
 * control is no control (every function does nothing). */
#ifndef GL_CANCEL_H
#define GL_CANCEL_H

#include <pthread.h>
#include <stdbool.h>

#define GL_CANCEL_COPIES 4 /* copies armed at once (the broker runs one) */

struct gl_cancel {
	pthread_mutex_t mu;
	bool requested;
	int pidfd[GL_CANCEL_COPIES];
	unsigned n;
};

void gl_cancel_init(struct gl_cancel *c);
/* A new call: not requested, nothing armed. */
void gl_cancel_reset(struct gl_cancel *c);
/* The copy with this pidfd runs (killed at once if the call is cancelled). */
void gl_cancel_arm(struct gl_cancel *c, int pidfd);
/* It is about to be ended and its pidfd closed. */
void gl_cancel_disarm(struct gl_cancel *c, int pidfd);
bool gl_cancel_requested(struct gl_cancel *c);
/* From any thread: mark the call cancelled and kill its armed copies. */
void gl_cancel_fire(struct gl_cancel *c);

#endif
