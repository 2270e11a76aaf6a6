/* fork_server.h — the fork server that runs inside a germline, whatever
 * its runtime (paper §VI "Germline and copies"; docs/design/run.md "Fork
 * protocol"). The Python extension (hosts/python/_germline.c) and the
 * Node-API addon (hosts/node/germline.c) are thin shells around it: each
 * sends {"op":"ready"} once the release is imported and then only serves
 * fork requests on the control socket. Each request clones a copy as PID 1
 * of fresh PID, network, IPC and mount namespaces (Algorithm 1 line 9),
 * confines it with lib/sandbox/sandbox.c before any of the release's code
 * runs in it, and answers the broker with the copy's pid and pidfd.
 *
 * Everything here is the germline's own code, and the release's
 * initialisation ran in the same process before it: the broker therefore
 * re-checks every copy from outside (lib/sandbox/proc.c) and never relies
 * on this file alone. Messages are tiny and fixed, so they are matched
 * byte for byte rather than parsed. */
#ifndef GL_FORK_SERVER_H
#define GL_FORK_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/sandbox.h"

struct gl_fork_server {
	int ctl;               /* the control socket */
	bool copy_uids;        /* each copy takes inside uid 1 + lane (lib/sandbox/uids.h) */
	int abi;               /* the kernel's Landlock ABI, every copy's rules */
	struct gl_bpf bpf;     /* the copy's seccomp filter, compiled once */
	uint64_t release_mask; /* the release's signal mask, a copy's again */
	/* The runtime's own descriptors, made the copy's own in place rather
	 * than closed (a Node germline's event loops: lib/sandbox/sandbox.h
	 * struct gl_private_fds); NULL: a copy keeps 0-3 only. */
	const struct gl_private_fds *keep;
	/* GL_TESTING's GL_OFF_ATFORK only: the runtime's own at-fork calls
	 * around the clone, in the germline (the damage the switch shows). */
	void (*test_before_fork)(void);
	void (*test_after_fork_parent)(void);
};

/* The floor and the quiet state before ready: the Landlock ABI (the named
 * profile "no-scope" accepts 4-5), the copy's filter compiled, every
 * signal blocked and the interval timers disarmed. 0, or -1 with the
 * reason in err. */
int gl_fork_server_setup(struct gl_fork_server *s, const char *prof, char *err, size_t cap);

/* {"op":"ready"}; a germline that cannot say it exits. */
void gl_fork_server_ready(const struct gl_fork_server *s);

/* One fork request served. true only in the new copy, confined, let go by
 * the broker's 'g' and with the release's signal mask back (its channel
 * is fd 3); false in the germline, whatever became of the request. The
 * germline exits when the broker closes the control socket. */
bool gl_fork_serve_one(struct gl_fork_server *s);

/* {"op":"error","detail":TEXT}: JSON-escaped, capped at a UTF-8 boundary. */
int gl_fork_send_error(int fd, const char *text, size_t n);

#endif
