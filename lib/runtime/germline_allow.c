/* germline_allow.c — the germline's Landlock read allowlist (paper A2:
 * initialisation reads only code and public system files; docs/sandbox.md).
 * See germline_impl.h. */
#define _GNU_SOURCE
#include "runtime/germline.h"

#include <stdio.h>
#include <string.h>

#include "runtime/germline_impl.h"

/* "python3.11" -> "3.11", from the interpreter's real name; NULL if not. */
static const char *py_version(const char *real)
{
	const char *b = strrchr(real, '/');
	b = b ? b + 1 : real;
	if (strncmp(b, "python3.", 8) || !b[8] || strspn(b + 8, "0123456789") != strlen(b + 8))
		return NULL;
	return b + 6;
}

/* Paths the germline may read and execute (A2: initialisation sees only
 * these; none holds user data). n returned; list[] borrows strings from
 * spec and from the static buffers of *bufs. */
size_t gl_germline_allowlist(const struct gl_launch_spec *spec, const char *interp_real,
			     struct gl_path_bufs *b, const char **list, size_t cap)
{
	size_t n = 0;
#define ADD(p)                          \
	do {                            \
		if (n < cap)            \
			list[n++] = (p); \
	} while (0)
	ADD(interp_real);
	const char *ver = py_version(interp_real);
	if (ver) {
		snprintf(b->stdlib, sizeof b->stdlib, "/usr/lib/python%s", ver);
		snprintf(b->local, sizeof b->local, "/usr/local/lib/python%s/dist-packages", ver);
		snprintf(b->etc, sizeof b->etc, "/etc/python%s", ver); /* sitecustomize */
		ADD(b->stdlib);
		ADD(b->local);
		ADD(b->etc);
	}
	ADD("/usr/lib/python3/dist-packages");
	n += gl_landlock_system_paths(&b->sys, list + n, cap - n); /* libraries, zoneinfo */
	ADD(spec->host_dir);
	ADD(spec->release_dir);
	for (size_t i = 0; spec->read_paths && spec->read_paths[i]; i++)
		ADD(spec->read_paths[i]);
#undef ADD
	return n;
}
