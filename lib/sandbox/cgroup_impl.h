/* cgroup_impl.h — helpers shared by lib/sandbox/cgroup.c, cgroup_reached.c and cgroup_germline.c
 * (not an interface: see cgroup.h). */
#ifndef GL_CGROUP_IMPL_H
#define GL_CGROUP_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define NPROC_BASE 2 /* the germline's init and the one-thread germline (G1) */

/* dir/file := s (or the number v): 0, or -1 with errno */
int gl_cg_put(const char *dir, const char *file, const char *s);
int gl_cg_put_u64(const char *dir, const char *file, uint64_t v);
/* The number after "key " in a "key value" file, or 0. */
uint64_t gl_cg_get_key(const char *dir, const char *file, const char *key);
/* Pids in dir/cgroup.procs: -1 unreadable, else how many (SIGKILLed with kill_them). */
int gl_cg_procs(const char *dir, bool kill_them);
/* The real uid of pid as the host sees it, or -1. */
long gl_cg_host_uid(pid_t pid);
/* Is the broker in the initial user namespace? */
bool gl_cg_initial_userns(void);
/* soft = hard = v, or pid's lower hard limit (an operator's ulimit). */
int gl_cg_set_rlimit(pid_t pid, int res, uint64_t v);
/* Slot i's directory under base (malloc'd). */
char *gl_cg_slot_dir(const char *base, int i);
/* A "\nVmXxx:" field of /proc/PID/status in bytes, or 0. */
uint64_t gl_cg_vm_field(pid_t pid, const char *field);

#endif
