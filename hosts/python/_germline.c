/* _germline.c — the CPython extension that runs inside a germline
 * (paper §VI "Germline and copies"; docs/design/run.md "Fork protocol"):
 * a shell around the fork server (hosts/common/fork_server.h).
 *
 * serve(3) sends {"op":"ready"} and then only serves fork requests on the
 * control socket; it returns only in a copy, confined and let go by the
 * broker, with its channel (fd 3), after Python's own after-fork work. */
#include <Python.h>

#include <string.h>

#include "../common/fork_server.h"

PyMODINIT_FUNC PyInit__germline(void);

/* GL_TESTING's GL_OFF_ATFORK: Python's own at-fork calls in the germline. */
static void before_fork(void)
{
	PyOS_BeforeFork();
}

static void after_fork_parent(void)
{
	PyOS_AfterFork_Parent();
}

/* serve(ctl_fd, profile=None, copy_uids=False): the germline's fork
 * server (paper §IV-D, Algorithm 1 lines 8–9). Returns only in a copy,
 * with its channel. */
static PyObject *gl_serve(PyObject *self, PyObject *args)
{
	struct gl_fork_server g = {.ctl = -1, .test_before_fork = before_fork,
				   .test_after_fork_parent = after_fork_parent};
	const char *prof = NULL;
	int uids = 0;
	if (!PyArg_ParseTuple(args, "i|zp", &g.ctl, &prof, &uids))
		return NULL;
	g.copy_uids = uids;
	char err[256];
	if (gl_fork_server_setup(&g, prof, err, sizeof err) < 0) {
		PyErr_SetString(PyExc_RuntimeError, err);
		return NULL;
	}
	gl_fork_server_ready(&g);

	/* Not even the release's os.register_at_fork hooks run here: there is
	 * no PyOS_BeforeFork / PyOS_AfterFork_Parent in the germline (its one
	 * thread holds no lock a copy could inherit locked), only
	 * PyOS_AfterFork_Child in the copy, after the broker's check. */
	for (;;)
		if (gl_fork_serve_one(&g)) {
			PyOS_AfterFork_Child();
			return PyLong_FromLong(3);
		}
}

static PyObject *gl_report_error(PyObject *self, PyObject *args)
{
	int fd;
	PyObject *text;
	if (!PyArg_ParseTuple(args, "iU", &fd, &text))
		return NULL;
	Py_ssize_t n;
	const char *s = PyUnicode_AsUTF8AndSize(text, &n);
	if (!s) {
		PyErr_Clear();
		s = "(error text not encodable as UTF-8)";
		n = (Py_ssize_t)strlen(s);
	}
	if (gl_fork_send_error(fd, s, (size_t)n) < 0)
		return PyErr_SetFromErrno(PyExc_OSError);
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{"serve", gl_serve, METH_VARARGS,
	 "serve(ctl_fd, profile=None): send ready, serve fork requests; returns the channel fd in a copy only."},
	{"report_error", gl_report_error, METH_VARARGS,
	 "report_error(ctl_fd, text): tell the broker the entry module failed to import."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "_germline", "The germline's fork server (C).", -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__germline(void)
{
	return PyModule_Create(&module);
}
