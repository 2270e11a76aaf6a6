/* proc.h — what the broker reads in /proc to check that a germline is
 * data-free before every fork (G1–G3, paper §IV-D, assumption A2,
 * obligations O1 and O2 of Table XII) and that a copy it forked is confined
 * before it receives any data (Algorithm 1 line 9, A1).
 *
 * gl_germline_check (germline.h) is implemented here. Every read is
 * bounded; a process that would need more is refused, not truncated.
 * Functions return 0, or -1 with *err (malloc'd) naming the check. */
#ifndef GL_PROC_H
#define GL_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* Most descriptors, threads or children looked at before refusing. */
#define GL_PROC_MAX_FDS 1024
/* Largest /proc/P/maps or /proc/P/smaps read. */
#define GL_PROC_MAX_MAPS (16u << 20)

/* The checks of a germline P whose control socket has inode ctl_ino. */
int gl_proc_check_germline(pid_t pid, uint64_t ctl_ino, char **err);

/* A freshly forked copy C of germline G, whose channel has inode chan_ino:
 * its own pid, net and ipc namespaces (the germline's user namespace),
 * no_new_privs, the germline's and its own seccomp filters, no capability,
 * descriptors 0–2 /dev/null and 3 the channel (read-only regular files
 * tolerated, as for G2), no shared writable mapping. */
int gl_proc_check_copy(pid_t copy, pid_t germline, uint64_t chan_ino, char **err);

/* A freshly launched exec copy (lib/exec.c), after its exec and before it
 * receives anything: its own pid, net, ipc, mount and user namespaces (not
 * the broker's), no_new_privs, a seccomp filter, no capability, descriptors
 * 0–2 /dev/null, 3 the channel (inode chan_ino), 4 the relay's listening
 * socket (listen_ino; 0: any socket, it was made inside), 5 the retained target (read-only), no other, no
 * shared writable mapping. */
int gl_proc_check_exec(pid_t copy, uint64_t chan_ino, uint64_t listen_ino, char **err);

/* The inode of a socket descriptor, or 0. */
uint64_t gl_proc_socket_ino(int fd);

#endif
