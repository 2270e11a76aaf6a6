/* private_fds.h — a runtime's own descriptors made each copy's own
 * (docs/exec.md "The Node germline"; paper §IV-D, A1, O1).
 *
 * Node keeps the kernel objects of its event loops open for its whole
 * life: pipes (libuv's signal lock, its loops' wake-ups), eventfds and
 * epoll instances. A copy forked from a Node germline would share each
 * with the germline and with every other copy, and a pipe outlives the
 * copy that wrote into it: one copy writes a secret into a pipe, a later
 * copy reads it. So the germline records them once, before it says ready,
 * with what each holds then (gl_private_fds_take: the germline is still
 * data-free, A2); each copy replaces every one of them in place by a new
 * object of its own holding the same (gl_private_fds_apply) and closes
 * every other descriptor above 3 (gl_private_fds_close_rest). The broker
 * checks from outside that a copy holds no open file of the germline's
 * (lib/sandbox/proc.c), so nothing here is trusted alone.
 *
 * apply and close_rest run in the clone child: syscalls only, no
 * allocation. */
#ifndef GL_PRIVATE_FDS_H
#define GL_PRIVATE_FDS_H

#include <stddef.h>
#include <stdint.h>

#define GL_PRIVATE_FDS_MAX 128   /* descriptors kept; a germline holding more is refused */
#define GL_PRIVATE_BYTES_MAX 4096 /* bytes buffered in all its pipes together, at ready */

enum gl_private_kind { GL_PFD_NULL = 1, GL_PFD_PIPE_R, GL_PFD_PIPE_W, GL_PFD_EVENTFD, GL_PFD_EPOLL };

struct gl_private_fd {
	int fd;
	uint8_t kind;     /* enum gl_private_kind */
	uint8_t cloexec;
	int flags;        /* its status flags (F_GETFL) */
	uint32_t pipe;    /* a pipe's number among the germline's pipes (its inode's) */
	uint64_t count;   /* an eventfd's counter */
};

struct gl_private_pipe {
	uint64_t ino;      /* the germline's pipe (0 once taken) */
	uint32_t off, len; /* what it held at ready, in buf */
};

struct gl_private_fds {
	size_t n, npipe, nbuf;
	struct gl_private_fd fd[GL_PRIVATE_FDS_MAX];    /* ascending by fd */
	struct gl_private_pipe pipe[GL_PRIVATE_FDS_MAX];
	unsigned char buf[GL_PRIVATE_BYTES_MAX];
};

/* In the germline, before ready: every descriptor from lo up that is
 * /dev/null, a pipe, an eventfd or an epoll instance, with its flags and
 * what it holds (a pipe's bytes are read and written back; an eventfd's
 * counter likewise). skip (the control socket) and anything else are
 * left out, hence closed in every copy. 0, or -1 with the reason in err
 * (a pipe holding bytes whose write end it lacks, too many, too much). */
int gl_private_fds_take(struct gl_private_fds *p, int lo, int skip, char *err, size_t cap);

/* In a copy: each recorded descriptor replaced in place by a new object of
 * the copy's own of the same kind, flags and content. 0, or -1 with errno. */
int gl_private_fds_apply(const struct gl_private_fds *p);

/* In a copy: every descriptor from 4 up closed but the recorded ones.
 * 0, or -1 with errno. */
int gl_private_fds_close_rest(const struct gl_private_fds *p);

#endif
