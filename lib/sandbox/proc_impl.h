/* proc_impl.h — what proc.c and proc_fds.c share (proc.h). */
#ifndef GL_PROC_IMPL_H
#define GL_PROC_IMPL_H

#include <dirent.h>
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
/* The same rule for descriptor fd alone (one that is not open passes). */
int gl_proc_fd_check(pid_t pid, int fd, uint64_t sock_ino, const char *check, struct gl_fail *f);
/* The stat of pid's descriptor fd: 0, or -1 with errno. */
int gl_proc_fd_stat(pid_t pid, int fd, struct stat *st);

#endif
