/* live.h — what the processes of one gl-run share (issue 19; gl-run --jobs,
 * docs/design/run.md "Workers"): one anonymous MAP_SHARED region, made in
 * the main process before any worker is forked, holding a robust
 * process-shared mutex, the table of the copies that are alive (the
 * worker that forked or launched each, its pid and its start time, so a
 * number reused by another process is never mistaken for it) and the
 * claims of the per-copy cgroup slots (lib/sandbox/cgroup.h).
 *
 * A worker killed by SIGKILL blocks nobody: the mutex is robust
 * (EOWNERDEAD is made consistent by the next locker), and the main
 * process, on reaping a worker that died, kills every copy the worker
 * registered (gl_live_reap) and drains its slots (gl_cg_reclaim).
 * Without gl_live_open (gl-run --jobs 1, the other tools) every call here
 * does nothing and cgroup slots are the process's own, as before. */
#ifndef GL_LIVE_H
#define GL_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define GL_LIVE_COPIES_MAX 512 /* copies alive at once across the workers */
#define GL_LIVE_SLOTS_MAX 256  /* = GL_CG_SLOTS_MAX */

/* Make the region (once; later calls do nothing). Out of memory: exits. */
void gl_live_open(void);
/* Is there a region (gl-run --jobs N > 1)? */
bool gl_live_on(void);

/* Register the copy whose pidfd is given, as the calling process's: 0, or
 * -1 when the table is full or the copy is already gone (the caller then
 * refuses the copy: a copy nobody could kill never runs). */
int gl_live_add(int pidfd);
/* The copy of this pidfd is gone (killed and awaited). */
void gl_live_remove(int pidfd);
/* The same by the pid gl_live_pid gave while the pidfd was open (a
 * pidfd the caller closes before the copy is awaited). */
pid_t gl_live_pid(int pidfd);
void gl_live_remove_pid(pid_t pid);
/* Kill every copy owner registered that is still the same process (start
 * time), wait for each (bounded), and forget them: the count killed. */
unsigned gl_live_reap(pid_t owner);

/* Claim cgroup slot i for the calling process: true when it was free or
 * already this process's. */
bool gl_live_slot_claim(unsigned i);
/* Slot i is free again (its copy gone, the slot drained). */
void gl_live_slot_release(unsigned i);
/* Is slot i claimed by owner? */
bool gl_live_slot_owned(unsigned i, pid_t owner);
/* The slots made, shared (0 without a region); set it to n under the lock
 * when n is larger (a worker made one more). */
unsigned gl_live_nslots(void);
void gl_live_set_nslots(unsigned n);
void gl_live_lock(void);
void gl_live_unlock(void);

/* Is pid a copy in the table that is still the process registered (its
 * start time)? G1 (lib/sandbox/proc.c) takes such a copy, and only such,
 * as a live child of a germline's init that is not the germline's own:
 * a copy of another call of the same release running beside this one. */
bool gl_live_known(pid_t pid);

/* The fork lock: one germline fork at a time across the workers, from G1–G3
 * to the copy's registration (lib/runtime/germline_fork.c), so that no
 * check ever sees a copy forked but not yet in the table, and no two
 * workers talk on one germline's control socket or its scratch mounter
 * at once. Robust: a worker killed inside leaves it free (what it left
 * half-said on a control socket fails the next fork closed). Nothing
 * without a region. */
void gl_live_fork_lock(void);
void gl_live_fork_unlock(void);

#endif
