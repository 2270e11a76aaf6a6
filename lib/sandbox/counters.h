/* counters.h — the per-user kernel counters a copy could move, and the
 * hard limits that keep every germline and copy far from their shared
 * levels (docs/sandbox.md "What the kernel counts per user").
 *
 * The kernel charges queued signals, POSIX message-queue bytes and locked
 * memory to the task's uid at every level of its user namespace chain
 * (ucounts): the copy's own uid first, then the namespace owner's — for
 * every germline of one user, that user's host uid. A host uid per copy
 * (lib/sandbox/uids.h) makes the first level the copy's own; the levels
 * above stay shared by every germline and copy of the user, and a copy
 * reaches them only by charging towards the namespace's whole limit.
 * These limits keep each process's charge small (A1: copies are isolated;
 * A2: nothing a copy does reaches the germline or a later copy), and the
 * seccomp rules of lib/sandbox/sandbox.c deny the calls that charge
 * without a limit check by the caller's own bound (real-time and
 * user-queued signals, POSIX timers, F_SETSIG) or that raise a limit. */
#ifndef GL_SANDBOX_COUNTERS_H
#define GL_SANDBOX_COUNTERS_H

#include <stdbool.h>
#include <sys/types.h>

/* soft = hard limits (a lower one the broker's process already has is
 * kept: an operator's `ulimit` binds too) */
#define GL_COUNTER_SIGPENDING 16u /* queued signals: ucounts, per uid per namespace */
#define GL_COUNTER_MSGQUEUE 0u    /* mqueue bytes: ucounts (mq_open is denied as well) */
#define GL_COUNTER_MEMLOCK 0u     /* locked memory: ucounts for SHM_LOCK and hugetlb memfds */
#define GL_COUNTER_NOFILE 1024u   /* open files: the host's file table (fs.file-nr) */

/* GL_TESTING, GL_TEST_COUNTERS_OFF=1: neither the limits nor the seccomp
 * rules (the damage, shown by tests/host-uids.bats). Always false in a
 * release build. */
bool gl_counters_off(void);

/* Set the limits above on pid (0: the caller). Inherited by a germline's
 * copies at fork and by an exec copy's target at exec; the copy cannot
 * raise them (no CAP_SYS_RESOURCE of the initial namespace; setrlimit is
 * denied too). Async-signal-safe. 0, or -1 with errno. */
int gl_counters_bound(pid_t pid);

#endif
