/* atfork.c — gl-atfork.so, preloaded into a Node germline (LD_PRELOAD,
 * set by the broker's launch; docs/exec.md "The Node germline").
 *
 * A copy is cloned with the raw clone3 system call (its namespaces, its
 * fixed pid, CLONE_PARENT: hosts/common/fork_server.h), which runs none of
 * the at-fork handlers fork() would. Node's libuv needs its child handlers
 * in a copy: one re-arms its thread pool (else the copy's first file
 * operation waits for worker threads that were never copied) and one makes
 * its signal lock pipe anew. This library records every child handler
 * registered in the process, in order, while passing each registration on
 * to the C library; the germline's addon (hosts/node/germline.c) runs them
 * in each copy, after its confinement, as fork() would. The prepare and
 * parent handlers never run: the germline runs no code but its fork
 * server once it is ready. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#define CHILD_MAX 64

typedef void (*handler)(void);
typedef int (*register_fn)(handler, handler, handler, void *);

static handler child[CHILD_MAX];
static size_t nchild;
static int overflow;

int __register_atfork(handler prepare, handler parent, handler in_child, void *dso);
size_t gl_atfork_children(const handler **list);

int __register_atfork(handler prepare, handler parent, handler in_child, void *dso)
{
	static register_fn real;
	if (!real)
		real = (register_fn)dlsym(RTLD_NEXT, "__register_atfork");
	if (!real)
		return ENOMEM;
	if (in_child) {
		if (nchild < CHILD_MAX)
			child[nchild++] = in_child;
		else
			overflow = 1;
	}
	return real(prepare, parent, in_child, dso);
}

/* The child handlers in the order they were registered; (size_t)-1 when
 * there were more than this library keeps (the addon then refuses). */
size_t gl_atfork_children(const handler **list)
{
	*list = child;
	return overflow ? (size_t)-1 : nchild;
}
