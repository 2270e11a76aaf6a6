/* exec_scratch.h — internals of the exec runtime shared by lib/runtime/exec.c
 * (the launch) and lib/runtime/exec_scratch.c (a copy's scratch and end);
 * not an interface. */
#ifndef GL_EXEC_SCRATCH_H
#define GL_EXEC_SCRATCH_H

#include "runtime/exec.h"

/* A copy's scratch directory GL_HOME/scratch/copy.XXXXXX with its hosts
 * file (every name of hosts resolves to the relay), tls/ (ca.pem and
 * relay.pem: exec_tls.h) and an empty state directory. malloc'd, or NULL with f (launch). */
char *gl_exec_scratch_make(const struct gl_exec *x, const char *const *hosts, size_t nhost,
			   struct gl_fail *f);

#endif
