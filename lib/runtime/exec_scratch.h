/* exec_scratch.h — internals of the exec runtime shared by lib/runtime/exec.c
 * (opening a release), lib/runtime/exec_launch.c (the launch) and
 * lib/runtime/exec_scratch.c (a copy's scratch and end); not an interface. */
#ifndef GL_EXEC_SCRATCH_H
#define GL_EXEC_SCRATCH_H

#include "runtime/exec.h"

/* A copy's scratch directory GL_HOME/scratch/copy.XXXXXX with its hosts
 * file (every name of hosts resolves to the relay), tls/ (ca.pem and
 * relay.pem: exec_tls.h) and an empty state directory. malloc'd, or NULL with f (launch). */
char *gl_exec_scratch_make(const struct gl_exec *x, const char *const *hosts, size_t nhost,
			   struct gl_fail *f);

/* The strings of a NULL-terminated vector (NULL: none). */
size_t gl_exec_strv_len(char *const *v);

/* A launch's environment (free with gl_exec_launch_env_free): the
 * variables that point its TLS clients at the session's authority and
 * gl-exec-host at the relay's certificate, for the directory dir as the
 * copy sees it (its scratch tls/: GL_EXEC_TLS_DIR in the minimal root),
 * then the session's (x->envp, borrowed). */
char **gl_exec_launch_env(const struct gl_exec *x, const char *dir);
void gl_exec_launch_env_free(char **e);

#endif
