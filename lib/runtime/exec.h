/* exec.h — runtime "exec" (SPEC §5, §9, §11; docs/exec.md): releases that
 * cannot be forked warm from a germline (Node.js servers, native binaries).
 * Every copy is a fresh verified launch (seed 002, paper §VI "For an MCP
 * server…") with the confinement of a forked copy (SPEC §10, A1):
 *
 *   gl-run (broker)
 *    └── gl-exec-host   PID 1 of fresh user+pid+net+ipc+mount namespaces,
 *         │             Landlock read-only allowlist + the view's item files
 *         │             (+ a scratch dir when the release keeps file state),
 *         │             TCP connect to ports 80 and 443 only, seccomp, no_new_privs,
 *         │             pdeathsig; fd 3 the broker channel (docs/design/run.md),
 *         │             fd 4 the HTTP relay's socket on 127.0.0.1:80, fd 5 the
 *         │             retained target, fd 6 the HTTPS relay's on :443 (exec_tls.h)
 *         └── target    execveat(fd 5, AT_EMPTY_PATH): the manifest's entry argv,
 *                       stdin/stdout a socketpair to the host (germline or MCP)
 *
 * The broker opens and hashes the target (entry[0]) and gl-exec-host once
 * per session, checks the whole release tree against the install record's
 * file hashes once, and before every copy re-checks that no file of the
 * tree changed since (inode, size, mtime, ctime): a swapped entry,
 * interpreter copy or dependency never runs, and the refusal names it.
 * Restrictions are installed before the exec; the status pipe tells
 * "failed before exec" from "ran"; the broker then checks the copy through
 * /proc (gl_proc_check_exec) before it sends the call message. */
#ifndef GL_EXEC_H
#define GL_EXEC_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "runtime/exec_tls.h"
#include "runtime/runtime.h"
#include "sandbox/sandbox.h"

struct gl_config;

#define GL_EXEC_FILES_MAX 200000 /* files of a release tree checked */
#define GL_EXEC_RELAY_PORT 80
#define GL_EXEC_RELAY_TLS_PORT 443
/* The first stream listener's descriptor in a copy (one per declared
 * host:port destination's port, in the order declared; docs/streams.md). */
#define GL_EXEC_STREAM_FD 10

struct gl_exec_file; /* one file of the verified tree (exec.c) */

struct gl_exec {
	struct gl_runtime rt;  /* the seam (runtime.h): gl_exec_open sets its ops */
	char *release_dir;        /* resolved */
	char *home;               /* GL_HOME: per-copy scratch dirs under GL_HOME/scratch */
	int target_fd;            /* retained entry[0] */
	int host_fd;              /* retained gl-exec-host */
	char target_path[4096];   /* resolved entry[0] */
	char target_sha256[65];
	char host_sha256[65];
	char manifest_sha256[65]; /* manifest.json as verified (lib/runtime/admit.h's definition) */
	char config_sha256[65];   /* the operator's configuration given to gl_exec_open, or "" */
	char tree_sha256[65];     /* SHA-256 of the canonical JSON of the record's "files" */
	/* Why the last gl_exec_open or gl_exec_copy failed, for its receipt
	 * (lib/runtime/launch.h): fail_rejected (admission: the tree or the record)
	 * with fail_binding ("release", "tree", "manifest_sha256",
	 * "target_sha256", "interpreter_sha256"), else a restriction or launch
	 * step (fail_binding: "userns", "landlock", "seccomp", "proc_check", …). */
	const char *fail_binding;
	bool fail_rejected;
	char **argv;              /* host argv: gl-exec-host PROTO STATE -- entry… (owned) */
	char **envp;              /* the target's environment (owned) */
	char **paths;             /* Landlock read allowlist (owned) */
	size_t npaths;
	bool state_dir;           /* the manifest's "state_dir" */
	char **declared;          /* every destination the manifest declares (owned) */
	struct gl_exec_tls tls;   /* the session's relay certificate (exec_tls.h) */
	struct gl_exec_file *file; /* the verified tree */
	size_t nfile;
	struct gl_bpf bpf;        /* GL_FILTER_EXEC */
	struct gl_enforcement enf;
	unsigned off;             /* GL_TESTING only: GL_OFF_* switches (GL_TEST_EXEC_OFF) */
	/* limits.tmp_mb and limits.workspace_mb (lib/release/bounds.h; 0: the
	 * defaults): each copy's tmpfs /tmp and workspace (lib/sandbox/scratch.h) */
	unsigned tmp_mb, workspace_mb;
};

/* Open an exec release for a session: verify every file of release_dir
 * against the install record (<release_dir>.json "files"; a file changed,
 * added or missing refuses), open and hash entry[0] and host_path, build
 * the seccomp filter and the argv/env of the copies (with cfg's args, env
 * and secret placeholders: the operator's, lib/release/config.h; NULL:
 * none). manifest and cfg are borrowed. 0, or -1 with f naming what failed, e.g. "verified launch:
 * node_modules/x/dist/index.js changed after install": rejected when
 * x->fail_rejected (a file not as installed), else bootstrap_failed (a
 * restriction unavailable; SPEC §9). */
int gl_exec_open(struct gl_exec *x, const char *release_dir, jv manifest, const char *host_path,
		 const char *home, const struct gl_config *cfg, struct gl_fail *f);
void gl_exec_close(struct gl_exec *x);

/* Launch one copy (Algorithm 1 line 9 for an exec release): items are the
 * files and directories of its view (readable, nothing else of the user's
 * is), hosts the declared destinations (they resolve to the relay). chan is the
 * copy's end of its channel (closed here). Returns 0 with the copy's
 * pidfd and *scratch (malloc'd, or NULL: the caller removes it with
 * gl_exec_scratch_remove once the copy is gone), or -1 with f (launch;
 * x->fail_rejected and x->fail_binding say which receipt it is). */
int gl_exec_copy(struct gl_exec *x, const struct gl_exec_item *items, size_t nitem,
		 const char *const *hosts, size_t nhost, int chan, int *pidfd, char **scratch,
		 struct gl_fail *f);

/* The Sig+Pin / Sig+IFC baseline for an exec release (gl-run --mode sigpin
 * or sigifc; docs/exec.md): the same verified launch of gl-exec-host, which
 * keeps the server running for the whole session, but with nothing
 * restricted except what the HTTP relay needs: its own user, network and
 * mount namespaces (hosts resolve to the relay on 127.0.0.1:80 and :443); no PID or
 * IPC namespace, no Landlock, no seccomp, no no_new_privs. */
int gl_exec_launch_unconfined(struct gl_exec *x, const char *const *hosts, size_t nhost,
			      int chan, int *pidfd, char **scratch, struct gl_fail *f);
/* The same as a session process of lib/broker/broker_session.c (gl_session_stop
 * stops it). 0, or -1 with f (launch). */
int gl_exec_session_start(struct gl_exec *x, const char *const *hosts, size_t nhost,
			  struct gl_session_proc *p, struct gl_fail *f);

/* After the broker is done with a copy: kill it with its descendants,
 * reap it (the broker is its parent) and remove its scratch directory
 * (freeing the string). Does not close pidfd. Returns the copy's wait
 * status (as waitpid's: WIFEXITED/WIFSIGNALED apply), -1 if not reaped. */
int gl_exec_copy_done(int pidfd, char *scratch);

/* Remove a copy's scratch directory (and free the string). */
void gl_exec_scratch_remove(char *scratch);

/* Where gl-exec-host is: next to the Python host (gl_host_dir()). malloc'd. */
char *gl_exec_host_path(void);

/* The exec runtime's seam (runtime.h): check nothing (each copy is checked
 * by gl_proc_check_exec after its launch), spawn gl_exec_copy, end
 * gl_exec_copy_done, stop gl_exec_close. */
extern const struct gl_runtime_ops gl_exec_ops;

#endif
