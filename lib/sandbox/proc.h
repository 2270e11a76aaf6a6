/* proc.h — what the broker reads in /proc to check that a germline is
 * data-free before every fork (G1–G3, paper §IV-D, assumption A2,
 * obligations O1 and O2 of Table XII) and that a copy it forked is confined
 * before it receives any data (Algorithm 1 line 9, A1).
 *
 * gl_germline_check (runtime/germline.c) calls these. Every read is
 * bounded; a process that would need more is refused, not truncated.
 * Functions return 0, or -1 with *f (struct gl_fail, core/fail.h) naming the check. */
#ifndef GL_PROC_H
#define GL_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "core/fail.h"

/* Most descriptors, threads or children looked at before refusing. */
#define GL_PROC_MAX_FDS 1024
/* Largest /proc/P/maps or /proc/P/smaps read. */
#define GL_PROC_MAX_MAPS (16u << 20)

/* The checks of a germline P whose control socket has inode ctl_ino, PID 2
 * of a namespace whose init is INIT (INIT == P: no init, GL_TESTING's
 * GL_OFF_PIDNS): G1 one thread and no live process in the namespace but
 * the two (init's children: the germline and zombies), every blockable
 * signal blocked; G2 descriptors (0-2 the host's /dev/null); G3 mappings.
 * 0, or -1 with f (germline_check) naming the check and what it found. */
int gl_proc_check_germline(pid_t init, pid_t pid, uint64_t ctl_ino, struct gl_fail *f);

/* After a fork, while the copy waits for its 'g': the germline is still at
 * rest (every blockable signal blocked). 0, or -1 with f (germline: the
 * fork is refused). */
int gl_proc_check_quiet(pid_t germline, struct gl_fail *f);

/* The first child of P (the germline of an init), or -1. */
pid_t gl_proc_first_child(pid_t pid);

/* A freshly forked copy C of germline G, whose channel has inode chan_ino:
 * its own pid, net and ipc namespaces (the germline's user namespace),
 * no_new_privs, the germline's and its own seccomp filters, no capability,
 * descriptors 0–2 its own /dev/null (not the germline's open files: kcmp)
 * and 3 the channel, no other, no shared writable mapping; the child of
 * INIT (CLONE_PARENT), not of the germline; with uid and gid >= 0, every
 * one of its uids and gids that host id (lib/sandbox/uids.h). 0, or -1
 * with f (germline: the fork is refused). */
int gl_proc_check_copy(pid_t copy, pid_t germline, pid_t init, uint64_t chan_ino, long uid,
		       long gid, struct gl_fail *f);

/* A freshly launched exec copy (lib/runtime/exec_launch.c), after its exec and before it
 * receives anything: its own pid, net, ipc, mount and user namespaces (not
 * the broker's), no_new_privs, a seccomp filter, no capability, descriptors
 * 0–2 /dev/null, 3 the channel (inode chan_ino), 4 the relay's listening
 * socket (listen_ino; 0: any socket, it was made inside), 5 the retained target (read-only),
 * 6 the TLS relay's, 10 to 10 + nstream - 1 the stream listeners (sockets),
 * no other, no shared writable mapping. 0, or -1 with f (launch: the copy
 * is refused). */
int gl_proc_check_exec(pid_t copy, uint64_t chan_ino, uint64_t listen_ino, size_t nstream,
		       struct gl_fail *f);

/* The same for a Node germline (proc_node.c; docs/exec.md "The Node
 * germline"): G1 lets the runtime's own threads be, each waiting for good
 * (a private futex or an epoll instance, no time limit), with no signal
 * handler at all; G2 lets its pipes, eventfds and epoll instances be (none
 * watching the control socket); G3 as for Python. 0, or -1 with f
 * (germline_check). */
int gl_proc_check_node_germline(pid_t init, pid_t pid, uint64_t ctl_ino, struct gl_fail *f);
/* A copy of a Node germline: gl_proc_check_copy's checks, its own pipes,
 * eventfds and epoll instances let be, and none of its descriptors an
 * open file of the germline's (kcmp). 0, or -1 with f (germline). */
int gl_proc_check_node_copy(pid_t copy, pid_t germline, pid_t init, uint64_t chan_ino, long uid,
			    long gid, struct gl_fail *f);
/* The inode of a socket descriptor, or 0. */
uint64_t gl_proc_socket_ino(int fd);

#endif
