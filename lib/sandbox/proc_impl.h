/* proc_impl.h — what proc.c and proc_fds.c share (proc.h). */
#ifndef GL_PROC_IMPL_H
#define GL_PROC_IMPL_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/fail.h"
#include "core/util.h"

static inline void gl_proc_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define autoclosedir __attribute__((cleanup(gl_proc_closedirp)))

static inline int read_small(const char *path, char **out, size_t cap)
{
	size_t len;
	return gl_read_file_capped(path, cap, out, &len);
}

/* G2 (proc_fds.c): every descriptor of pid is /dev/null on 0–2, the socket
 * whose inode is sock_ino (0: none at 4 and above) or a regular file open
 * read-only; check names the check in *f (GL_E_GERMLINE_CHECK). */
int gl_proc_fds_check(pid_t pid, uint64_t sock_ino, const char *check, struct gl_fail *f);
/* GL_FDS_RUNTIME: a Node germline's or copy's own pipes, eventfds and
 * epoll instances pass too (proc_fds.c judge_runtime). */
#define GL_FDS_RUNTIME 1u
int gl_proc_fds_check_mode(pid_t pid, uint64_t sock_ino, unsigned mode, const char *check,
			   struct gl_fail *f);
/* The same rule for descriptor fd alone (one that is not open passes). */
int gl_proc_fd_check(pid_t pid, int fd, uint64_t sock_ino, const char *check, struct gl_fail *f);
/* Shared by proc.c and proc_node.c (the Node germline's checks). */
int gl_proc_check_one_thread(pid_t pid, const char *what, struct gl_fail *f);
/* The threads of pid (/proc/P/task): their number, counted up to max + 1
 * (more were not counted), the first cap of them in tids; or -1 with f
 * naming check. */
int gl_proc_tasks(pid_t pid, long *tids, int cap, int max, const char *check, struct gl_fail *f);
/* The signal mask field ("SigBlk", "SigCgt") of /proc/P/status into *mask.
 * 0, or -1 with f naming check. */
int gl_proc_sig_mask(pid_t pid, const char *field, unsigned long long *mask, const char *check,
		     struct gl_fail *f);
int gl_proc_check_signals(pid_t pid, const char *check, struct gl_fail *f);
int gl_proc_check_maps(pid_t pid, const char *check, struct gl_fail *f);
/* No live child of task tid of pid but allow (copies: a live copy of the
 * shared table passes; lib/sandbox/live.h); what names the finding. */
int gl_proc_check_children(pid_t pid, pid_t tid, pid_t allow, bool copies, const char *what,
			   struct gl_fail *f);
/* Is fd fa of a the open file fb of b (kcmp)? 1, 0, -1 with errno. */
int gl_proc_same_file(pid_t a, int fa, pid_t b, int fb);
/* The copy check (proc.h gl_proc_check_copy); runtime: its descriptors
 * are judged with GL_FDS_RUNTIME. */
int gl_proc_copy_checks(pid_t copy, pid_t germline, pid_t init, uint64_t chan_ino, long uid,
			long gid, bool runtime, struct gl_fail *f);
/* pid's descriptor table size (/proc/P/status FDSize): >= 0, or -1. */
long gl_proc_fd_table_size(pid_t pid);
/* The stat of pid's descriptor fd: 0, or -1 with errno. */
int gl_proc_fd_stat(pid_t pid, int fd, struct stat *st);

#endif
