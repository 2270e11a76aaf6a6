/* exec.c — runtime "exec": the verified launch of one copy per plan group
 * (SPEC §5, §9; seed 002; paper §VI "For an MCP server…"). See exec.h and
 * docs/exec.md. Everything is prepared here before the clone; the launch
 * child (lib/runtime/exec_child.c) follows lib/runtime/germline.c's (typed steps, a
 * close-on-exec status pipe, restrictions before execveat of a retained
 * descriptor) and only makes syscalls. The verified tree is
 * lib/runtime/exec_tree.c. */
#define _GNU_SOURCE
#include "runtime/exec.h"
#include "release/config.h"
#include "runtime/exec_child.h"
#include "runtime/exec_scratch.h"
#include "runtime/exec_tree.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <netinet/in.h>
#include <signal.h>
#include <sodium.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/sha.h"
#include "release/bounds.h"
#include "json/json.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "sandbox/proc.h"
#include "sandbox/root.h"
#include "sandbox/scratch.h"
#include "core/util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#define EXEC_TIMEOUT_MS 30000 /* exec observed */
#define INSIDE_UID 1000       /* not 0: the exec of gl-exec-host drops every capability */

/* ---- open: once per session ---------------------------------------------- */

static char **strv_from(jv a) /* consumes a: an array of strings */
{
	int n = jv_is_valid(a) ? jv_array_length(jv_copy(a)) : 0;
	char **v = gl_xcalloc((size_t)n + 1, sizeof *v);
	for (int i = 0; i < n; i++) {
		jv s = jv_array_get(jv_copy(a), i);
		v[i] = gl_xstrdup(jv_string_value(s));
		jv_free(s);
	}
	jv_free(a);
	return v;
}

static size_t strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

static int open_hashed(const char *path, char *real, int *fd, char sha[65], struct gl_fail *f)
{
	if (!realpath(path, real))
		return gl_fail_errno(f, GL_E_REJECTED, "verified launch: %s", path);
	*fd = open(real, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (*fd < 0 || fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode) || gl_sha256_fd_hex(*fd, sha) < 0)
		return gl_fail(f, GL_E_REJECTED, "verified launch: %s: %s", real,
			       *fd < 0 || errno ? strerror(errno) : "not a regular file");
	return 0;
}

char *gl_exec_host_path(void)
{
	autofree char *dir = gl_host_dir();
	return gl_xasprintf("%s/gl-exec-host", dir);
}

/* The tree against the install record (archive_extract's "files"), and
 * the tree's digest as lib/runtime/admit.c defines it for receipts. */
static int verify_tree(struct gl_exec *x, const char *release_dir, jv manifest, struct gl_fail *f)
{
	char real[PATH_MAX];
	if (!realpath(release_dir, real))
		return gl_fail_errno(f, GL_E_REJECTED, "verified launch: %s", release_dir);
	x->release_dir = gl_xstrdup(real);
	x->fail_rejected = true; /* admission, until the tree is verified */
	x->fail_binding = "release";
	autofree char *recpath = gl_xasprintf("%s.json", x->release_dir), *rec = NULL;
	size_t len;
	if (gl_read_file_capped(recpath, 256u << 20, &rec, &len) < 0)
		return gl_fail_errno(f, GL_E_REJECTED, "verified launch: install record %s", recpath);
	jv r = gl_json_parse(rec, len);
	jv files = jv_get_kind(r) == JV_KIND_OBJECT ? gl_json_get(r, "files") : jv_invalid();
	jv_free(r);
	if (jv_get_kind(files) != JV_KIND_OBJECT) {
		jv_free(files);
		return gl_fail(f, GL_E_REJECTED,
			       "verified launch: install record %s has no \"files\"", recpath);
	}
	autobuf struct gl_buf cb = {0};
	autofail struct gl_fail cf = {0};
	if (gl_canon_dump(&cb, files, &cf) < 0) {
		jv_free(files);
		return gl_fail(f, GL_E_REJECTED, "verified launch: install record %s: %s", recpath,
			       gl_fail_detail(&cf));
	}
	unsigned char h[32];
	gl_sha256(h, (const unsigned char *)cb.data, cb.len);
	gl_hex(h, 32, x->tree_sha256);
	jv e0j = jv_array_get(gl_json_get(manifest, "entry"), 0);
	autofree char *e0rel = jv_get_kind(e0j) == JV_KIND_STRING && jv_string_value(e0j)[0] != '/'
				       ? gl_xstrdup(jv_string_value(e0j))
				       : NULL;
	jv_free(e0j);
	x->fail_binding = "tree";
	autoclose int root = open(x->release_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = root < 0 ? gl_fail_errno(f, GL_E_REJECTED, "verified launch: %s", x->release_dir)
			  : gl_exec_tree_record(x, root, files, e0rel, f);
	jv_free(files);
	return rc;
}

/* entry[0] (inside the release, or absolute) and gl-exec-host, retained. */
static int open_binaries(struct gl_exec *x, jv manifest, const char *host_path, struct gl_fail *f)
{
	jv a0 = jv_array_get(gl_json_get(manifest, "entry"), 0);
	const char *e0 = jv_string_value(a0);
	autofree char *tpath = e0[0] == '/' ? gl_xstrdup(e0) : gl_xasprintf("%s/%s", x->release_dir, e0);
	jv_free(a0);
	char hreal[PATH_MAX];
	x->fail_binding = "target_sha256";
	if (open_hashed(tpath, x->target_path, &x->target_fd, x->target_sha256, f) < 0)
		return -1;
	x->fail_binding = "interpreter_sha256";
	return open_hashed(host_path, hreal, &x->host_fd, x->host_sha256, f);
}

/* argv of gl-exec-host (PROTOCOL STATE -- entry… operator's args…) and
 * every declared destination (the session baseline's hosts file). */
static void build_argv(struct gl_exec *x, jv manifest, const struct gl_config *cfg)
{
	size_t nargs = cfg ? cfg->nargs : 0;
	const char *proto = gl_json_get_str(manifest, "protocol");
	jv sd = gl_json_get(manifest, "state_dir");
	x->state_dir = jv_get_kind(sd) == JV_KIND_TRUE;
	jv_free(sd);
	char **ent = strv_from(gl_json_get(manifest, "entry"));
	size_t ne = strv_len(ent);
	x->argv = gl_xcalloc(ne + nargs + 5, sizeof *x->argv);
	x->argv[0] = gl_xstrdup("gl-exec-host");
	x->argv[1] = gl_xstrdup(proto ? proto : "germline");
	x->argv[2] = gl_xstrdup("-"); /* the copy's state directory, set per copy */
	x->argv[3] = gl_xstrdup("--");
	for (size_t i = 0; i < ne; i++)
		x->argv[4 + i] = ent[i];
	for (size_t i = 0; i < nargs; i++) /* SPEC §4 "config": public, data-free */
		x->argv[4 + ne + i] = gl_xstrdup(cfg->args[i]);
	free(ent);
	jv fns = gl_json_get(manifest, "functions");
	jv all = jv_array();
	jv_object_foreach(fns, fname, fn)
	{
		jv d = gl_json_get(fn, "destinations");
		if (jv_get_kind(d) == JV_KIND_ARRAY)
			all = jv_array_concat(all, d);
		else
			jv_free(d);
		jv_free(fname);
		jv_free(fn);
	}
	jv_free(fns);
	x->declared = strv_from(all);
}

/* The variables that point a copy's TLS clients at the session's
 * authority (exec_tls.h), and gl-exec-host at the relay's certificate;
 * build_env leaves the manifest's of these names out, and an operator's
 * are refused (lib/release/config.c). */
static const char *const tls_env[] = {"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
				      "CURL_CA_BUNDLE", "GERMLINE_TLS_DIR"};
#define NTLS_ENV (sizeof tls_env / sizeof *tls_env)

static bool is_tls_env(const char *name)
{
	for (size_t i = 0; i < NTLS_ENV; i++)
		if (!strcmp(name, tls_env[i]))
			return true;
	return false;
}

/* Whether the operator's configuration sets variable name. */
static bool config_sets(const struct gl_config *cfg, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; cfg && i < cfg->ncopy_env; i++)
		if (!strncmp(cfg->copy_env[i], name, n) && cfg->copy_env[i][n] == '=')
			return true;
	return false;
}

/* The target's environment: a fixed base, the twin shim for a Node.js
 * target (twin_js: hosts/exec/twin.cjs, required before anything the
 * manifest asks node to load; gl-exec-host adds the call's twin inputs),
 * the manifest's "env", and the operator's (SPEC §4 "config": its env and
 * each secret's placeholder, never its value), which wins over the
 * manifest's for a name both set. */
static void build_env(struct gl_exec *x, jv manifest, const char *twin_js,
		      const struct gl_config *cfg)
{
	jv env = gl_json_get(manifest, "env");
	size_t nenv = jv_get_kind(env) == JV_KIND_OBJECT ? (size_t)jv_object_length(jv_copy(env)) : 0;
	size_t ncfg = cfg ? cfg->ncopy_env : 0;
	x->envp = gl_xcalloc(nenv + ncfg + 6, sizeof *x->envp);
	size_t k = 0;
	x->envp[k++] = gl_xstrdup("PATH=/usr/bin:/bin");
	x->envp[k++] = gl_xstrdup("TMPDIR=/tmp"); /* the copy's own tmpfs (SPEC §5) */
	x->envp[k++] = gl_xstrdup("HOME=/nonexistent");
	x->envp[k++] = gl_xstrdup("LANG=C.UTF-8");
	const char *node_opts = gl_json_get_str(env, "NODE_OPTIONS");
	x->envp[k++] = gl_xasprintf("NODE_OPTIONS=--require=%s%s%s", twin_js, node_opts ? " " : "",
				    node_opts ? node_opts : "");
	if (nenv) {
		jv_object_foreach(env, key, val)
		{
			if (strcmp(jv_string_value(key), "NODE_OPTIONS") &&
			    strcmp(jv_string_value(key), "TMPDIR") && !is_tls_env(jv_string_value(key)) &&
			    !config_sets(cfg, jv_string_value(key)))
				x->envp[k++] = gl_xasprintf("%s=%s", jv_string_value(key),
							    jv_string_value(val));
			jv_free(key);
			jv_free(val);
		}
	}
	for (size_t i = 0; i < ncfg; i++)
		x->envp[k++] = gl_xstrdup(cfg->copy_env[i]);
	jv_free(env);
}

/* Landlock read allowlist (A1): the target, the host, their libraries
 * (lib/sandbox/landlock.c gl_landlock_system_paths), name resolution (the
 * per-copy hosts file is added by gl_exec_copy), the release, read_paths. */
static void build_paths(struct gl_exec *x, jv manifest, const char *twin_js)
{
	static const char *const more[] = {
	    "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf", "/dev/null", "/dev/urandom",
	    "/etc/ssl/openssl.cnf", "/usr/lib/ssl/openssl.cnf", "/usr/share/nodejs", "/usr/lib/nodejs"};
	const size_t nmore = sizeof more / sizeof *more;
	const char *base[5 + GL_SYSPATHS_ALT + sizeof more / sizeof *more];
	struct gl_syspaths sys;
	size_t nb = gl_landlock_system_paths(&sys, base, sizeof base / sizeof *base - nmore);
	for (size_t i = 0; i < nmore; i++)
		base[nb++] = more[i];
	char **rps = strv_from(gl_json_get(manifest, "read_paths"));
	size_t nrp = strv_len(rps);
	x->paths = gl_xcalloc(nb + nrp + 3, sizeof *x->paths);
	for (size_t i = 0; i < nb; i++)
		x->paths[x->npaths++] = gl_xstrdup(base[i]);
	x->paths[x->npaths++] = gl_xstrdup(x->release_dir);
	x->paths[x->npaths++] = gl_xstrdup(twin_js);
	for (size_t i = 0; i < nrp; i++)
		x->paths[x->npaths++] = rps[i];
	free(rps);
}

/* What every copy will enforce: the Landlock ABI (fail closed below the
 * required one), the seccomp filter, the namespaces. */
static int build_enforcement(struct gl_exec *x, struct gl_fail *f)
{
	x->fail_binding = "landlock";
	int abi = gl_landlock_abi();
	if (abi < GL_LANDLOCK_ABI_REQUIRED)
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "Landlock ABI %d is below the required %d; "
			       "refusing to run with less", abi, GL_LANDLOCK_ABI_REQUIRED);
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_EXEC_OFF");
	x->off = off ? (unsigned)strtoul(off, NULL, 0) : 0;
#endif
	x->enf.landlock_abi = abi;
	x->enf.fs_enforced = !(x->off & GL_OFF_LANDLOCK);
	x->enf.net_enforced = x->enf.fs_enforced;
	x->enf.scoped_enforced = x->enf.fs_enforced;
	x->fail_binding = "seccomp";
	if (gl_seccomp_build(GL_FILTER_EXEC, &x->bpf, f) < 0)
		return -1;
	gl_bpf_sha256(&x->bpf, x->enf.seccomp_filter_sha256);
	x->enf.seccomp_enforced = !(x->off & GL_OFF_SECCOMP);
	static const char *const ns[] = {"ipc", "mnt", "net", "pid", "user", NULL};
	memcpy(x->enf.namespaces, ns, sizeof ns);
	return 0;
}

/* gl_exec_open's steps, the words in *f (its code set by gl_exec_open). */
static int open_release(struct gl_exec *x, const char *release_dir, jv manifest,
			const char *host_path, const char *home, const struct gl_config *cfg,
			struct gl_fail *f)
{
	memset(x, 0, sizeof *x);
	x->rt.ops = &gl_exec_ops;
	x->target_fd = x->host_fd = -1;
	x->home = gl_xstrdup(home);
	if (verify_tree(x, release_dir, manifest, f) < 0 ||
	    open_binaries(x, manifest, host_path, f) < 0) {
		gl_exec_close(x);
		return -1;
	}
	build_argv(x, manifest, cfg);
	if (cfg)
		gl_config_digest(cfg, x->config_sha256);
	/* hosts/exec/twin.cjs beside gl-exec-host */
	char *slash = strrchr(host_path, '/');
	autofree char *twin_js = slash ? gl_xasprintf("%.*s/twin.cjs", (int)(slash - host_path), host_path)
				       : gl_xstrdup("twin.cjs");
	build_env(x, manifest, twin_js, cfg);
	build_paths(x, manifest, twin_js);
	x->fail_rejected = false; /* admitted: what fails now is a restriction */
	x->fail_binding = "tls";
	if (gl_exec_tls_make(&x->tls, (const char *const *)x->declared, strv_len(x->declared), f) < 0 ||
	    build_enforcement(x, f) < 0) {
		gl_exec_close(x);
		return -1;
	}
	x->fail_binding = NULL;
	return 0;
}

int gl_exec_open(struct gl_exec *x, const char *release_dir, jv manifest, const char *host_path,
		 const char *home, const struct gl_config *cfg, struct gl_fail *f)
{
	if (open_release(x, release_dir, manifest, host_path, home, cfg, f) == 0)
		return 0;
	/* a file changed since install, or a restriction unavailable (SPEC §9) */
	f->code = x->fail_rejected ? GL_E_REJECTED : GL_E_BOOTSTRAP_FAILED;
	return -1;
}

void gl_exec_close(struct gl_exec *x)
{
	if (x->target_fd >= 0)
		close(x->target_fd);
	if (x->host_fd >= 0)
		close(x->host_fd);
	x->target_fd = x->host_fd = -1;
	free(x->release_dir);
	free(x->home);
	gl_strv_free(x->argv);
	gl_strv_free(x->envp);
	gl_strv_free(x->declared);
	for (size_t i = 0; i < x->npaths; i++)
		free(x->paths[i]);
	free(x->paths);
	gl_exec_tree_free(x);
	gl_exec_tls_free(&x->tls);
	gl_bpf_free(&x->bpf);
	x->release_dir = x->home = NULL;
	x->argv = x->envp = x->paths = x->declared = NULL;
	x->file = NULL;
	x->nfile = x->npaths = 0;
}

/* ---- one copy ---------------------------------------------------------------- */

/* Landlock rules for the items of a copy's view, each added from a
 * descriptor opened with no symlink in its path, as the broker read it
 * (lib/broker/broker.c read_path_item): a file item READ_FILE on the file, a
 * directory item (its path ends in '/') READ_FILE|READ_DIR beneath it.
 * 0, or -1 with *f. */
static int allow_items(int rs, const struct gl_exec_item *items, size_t nitem, struct gl_fail *f)
{
	for (size_t i = 0; i < nitem; i++)
		if (gl_landlock_allow_item(rs, items[i].fd, items[i].dir) < 0)
			return gl_fail_errno(f, GL_E_LAUNCH, "exec copy: Landlock rule for item %zu of "
					     "its view", i + 1);
	return 0;
}

/* One launch's preparations, released by launch_undo. */
struct launch {
	struct gl_exec_prep p;
	struct gl_root root;
	char *dir;   /* the copy's scratch directory */
	char *state; /* its state (workspace) directory */
	char **argv; /* gl-exec-host's, strings borrowed from x->argv */
	char **envp; /* the TLS variables (owned, tls_env), then x->envp's (borrowed) */
};

/* The launch's environment: tls_env for the directory dir as the copy
 * sees it (its own scratch tls/: GL_EXEC_TLS_DIR in the minimal root),
 * then the session's. */
static char **launch_env(const struct gl_exec *x, const char *dir)
{
	size_t ne = strv_len(x->envp);
	char **e = gl_xcalloc(NTLS_ENV + ne + 1, sizeof *e);
	for (size_t i = 0; i + 1 < NTLS_ENV; i++)
		e[i] = gl_xasprintf("%s=%s/ca.pem", tls_env[i], dir);
	e[NTLS_ENV - 1] = gl_xasprintf("%s=%s", tls_env[NTLS_ENV - 1], dir);
	memcpy(e + NTLS_ENV, x->envp, ne * sizeof *e);
	return e;
}

static void launch_undo(struct launch *l, bool scratch_too)
{
	if (l->p.ruleset >= 0)
		close(l->p.ruleset);
	l->p.ruleset = -1;
	gl_root_free(&l->root);
	if (scratch_too)
		gl_exec_scratch_remove(l->dir);
	l->dir = NULL;
	free(l->state);
	free(l->argv);
	for (size_t i = 0; l->envp && i < NTLS_ENV; i++)
		free(l->envp[i]);
	free(l->envp);
	l->state = NULL;
	l->argv = NULL;
	l->envp = NULL;
}

/* The scratch directory (hosts file, state) and what the launch child is
 * given. 0, or -1 with *f. */
static int launch_prep(struct gl_exec *x, struct launch *l, int ch, const char *const *hosts,
		       size_t nhost, bool unconfined, struct gl_fail *f)
{
	x->fail_binding = "scratch";
	if (!(l->dir = gl_exec_scratch_make(x, hosts, nhost, f)))
		return -1;
	x->fail_binding = "landlock";
	l->p = (struct gl_exec_prep){.chan = ch, .devnull = -1, .status_w = -1, .ruleset = -1,
				     .target = x->target_fd, .host = x->host_fd, .parent = getpid(),
				     .release_dir = x->release_dir, .argv = x->argv, .envp = x->envp,
				     .bpf = &x->bpf, .off = x->off, .unconfined = unconfined};
	snprintf(l->p.uid_map, sizeof l->p.uid_map, "%d %u 1\n", INSIDE_UID, (unsigned)geteuid());
	snprintf(l->p.gid_map, sizeof l->p.gid_map, "%d %u 1\n", INSIDE_UID, (unsigned)getegid());
	snprintf(l->p.hosts, sizeof l->p.hosts, "%s/hosts", l->dir);
	l->state = gl_xasprintf("%s/state", l->dir);
	size_t na = strv_len(x->argv);
	l->argv = gl_xcalloc(na + 1, sizeof *l->argv);
	memcpy(l->argv, x->argv, na * sizeof *l->argv);
	l->p.argv = l->argv;
	bool root = !unconfined && !(x->off & GL_OFF_ROOT);
	autofree char *tls = root ? NULL : gl_xasprintf("%s/tls", l->dir);
	l->envp = launch_env(x, root ? GL_EXEC_TLS_DIR : tls);
	l->p.envp = l->envp;
	if (!x->state_dir)
		return 0;
	l->argv[2] = (char *)GL_WORKSPACE_DIR;
	if (snprintf(l->p.state, sizeof l->p.state, "%s", l->state) >= (int)sizeof l->p.state)
		return gl_fail(f, GL_E_LAUNCH, "exec copy: %s: path too long", l->state);
#ifdef GL_TESTING
	const char *bad = getenv("GL_TEST_WORKSPACE_SOURCE"); /* a failing bind */
	if (bad)
		snprintf(l->p.state, sizeof l->p.state, "%s", bad);
#endif
	return 0;
}

/* Landlock: the allowlist, the hosts file, the relay's TLS files (the
 * target reads the authority, gl-exec-host the relay's key: exec_tls.h says
 * why the key may be the copy's), TCP connect to the relay's two ports
 * only, exactly the view's item files
 * and directories, and the scratch state directory writable when kept.
 * 0, or -1 with *f. */
static int launch_rules(struct gl_exec *x, struct launch *l, const struct gl_exec_item *items,
			size_t nitem, struct gl_fail *f)
{
	const char **list = gl_xcalloc(x->npaths + 2, sizeof *list);
	size_t n = 0;
	for (size_t i = 0; i < x->npaths; i++)
		list[n++] = x->paths[i];
	list[n++] = l->p.hosts;
	autofree char *tls = gl_xasprintf("%s/tls", l->dir);
	list[n++] = tls;
	int fds[2] = {x->target_fd, x->host_fd};
	const char *bad = NULL;
	/* with the minimal root the workspace is a tmpfs, its rule added in
	 * the child (lib/sandbox/scratch.h) */
	bool root = !(x->off & GL_OFF_ROOT);
	l->p.scratch_abi = root ? x->enf.landlock_abi : 0;
	l->p.ruleset = gl_landlock_exec_ruleset(x->enf.landlock_abi, list, n, fds, 2,
						x->state_dir && !root ? l->state : NULL,
						(const int[]){GL_EXEC_RELAY_PORT, GL_EXEC_RELAY_TLS_PORT}, 2,
						&bad);
	free(list);
	if (l->p.ruleset < 0)
		return gl_fail_errno(f, GL_E_LAUNCH, "exec copy: Landlock ruleset (%s)",
				     bad ? bad : "create");
	return allow_items(l->p.ruleset, items, nitem, f);
}

/* After the clone: the tree re-checked, the exec observed, the copy
 * checked through /proc. 0, or -1 with f (the copy is then ended). */
static int launch_observe(struct gl_exec *x, long pid, int pfd, int status_r, uint64_t chan_ino,
			  bool unconfined, char *dir, struct gl_fail *f)
{
	/* The tree is re-checked while the child sets itself up on the other
	 * CPU: gl-exec-host starts the target only once it has the call
	 * message, which is sent only after this returns 0, so nothing of the
	 * release runs before the check has passed. */
	if (gl_exec_tree_unchanged(x, f) < 0) {
		gl_exec_copy_done(pfd, dir);
		close(pfd);
		x->fail_rejected = true; /* a file changed since it was verified */
		x->fail_binding = "tree";
		return -1;
	}
	int rc = gl_exec_child_status(status_r, gl_mono_ns() + (int64_t)EXEC_TIMEOUT_MS * 1000000,
				      &x->fail_binding, f);
	if (rc == 0)
		x->fail_binding = "proc_check"; /* the exec was observed */
	/* The check of a forked copy (lib/sandbox/proc.c), once the host is up: its
	 * dynamic loader may hold a library open for a moment after the exec,
	 * so a descriptor or mapping finding is re-read for up to 500 ms (the
	 * host runs only our code until it has the call message). */
	for (int tries = 0; rc == 0 && !unconfined; tries++) {
		if (gl_proc_check_exec((pid_t)pid, chan_ino, 0, f) == 0)
			break;
		const char *d = gl_fail_detail(f);
		if (tries >= 250 ||
		    !(strstr(d, "descriptor") || strstr(d, "fd ") || strstr(d, "mapping"))) {
			rc = -1;
			break;
		}
		gl_fail_clear(f);
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	if (rc < 0) {
		gl_exec_copy_done(pfd, dir);
		close(pfd);
		return -1;
	}
	return 0;
}

static int launch(struct gl_exec *x, const struct gl_exec_item *items, size_t nitem,
		  const char *const *hosts, size_t nhost, int chan, int *pidfd, char **scratch,
		  bool unconfined, struct gl_fail *f)
{
	*pidfd = -1;
	*scratch = NULL;
	autoclose int ch = chan;
	uint64_t chan_ino = gl_proc_socket_ino(ch);
	x->fail_rejected = false;
	x->fail_binding = "exec";
	if (x->target_fd < 0)
		return gl_fail(f, GL_E_LAUNCH, "exec copy: the release is not open");
	struct launch l = {.p = {.ruleset = -1}};
	if (launch_prep(x, &l, ch, hosts, nhost, unconfined, f) < 0 ||
	    (!(x->off & GL_OFF_LANDLOCK) && !unconfined && launch_rules(x, &l, items, nitem, f) < 0)) {
		launch_undo(&l, true);
		return -1;
	}
	if (!unconfined && !(x->off & GL_OFF_ROOT)) {
		x->fail_binding = "minimal_root";
		autofree char *tls = gl_xasprintf("%s/tls", l.dir);
		int rc = gl_exec_root(x, &l.root, l.p.hosts, tls, x->state_dir ? l.p.state : NULL,
				      items, nitem, f);
		if (rc < 0) {
			if (rc == -2)
				x->fail_binding = "workspace";
			launch_undo(&l, true);
			return -1;
		}
		l.p.root = &l.root;
	}
	int sp[2] = {-1, -1};
	x->fail_binding = "descriptors";
	if (pipe2(sp, O_CLOEXEC) < 0 || (l.p.devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		gl_fail_errno(f, GL_E_LAUNCH, "exec copy: status pipe");
		if (sp[0] >= 0)
			close(sp[0]), close(sp[1]);
		launch_undo(&l, true);
		return -1;
	}
	autoclose int status_r = sp[0];
	l.p.status_w = sp[1];
	int pfd = -1;
	struct clone_args ca = {
	    .flags = unconfined ? CLONE_PIDFD | CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS
				: CLONE_PIDFD | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
				      CLONE_NEWNS | CLONE_NEWUTS,
	    .pidfd = (uint64_t)(uintptr_t)&pfd,
	    .exit_signal = SIGCHLD,
	};
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0)
		gl_exec_child(&l.p);
	int e = errno;
	close(l.p.status_w);
	close(l.p.devnull);
	char *dir = l.dir;
	launch_undo(&l, pid < 0);
	if (pid < 0) {
		x->fail_binding = "user_namespace";
		return gl_fail(f, GL_E_LAUNCH, "exec copy: clone3: %s%s", strerror(e),
			       e == EPERM || e == ENOSPC ? " (user namespaces disabled or exhausted)" : "");
	}
	if (launch_observe(x, pid, pfd, status_r, chan_ino, unconfined, dir, f) < 0)
		return -1;
	*pidfd = pfd;
	*scratch = dir;
	x->fail_binding = NULL;
	return 0;
}

int gl_exec_copy(struct gl_exec *x, const struct gl_exec_item *items, size_t nitem,
		 const char *const *hosts, size_t nhost, int chan, int *pidfd, char **scratch,
		 struct gl_fail *f)
{
	if (launch(x, items, nitem, hosts, nhost, chan, pidfd, scratch, false, f) == 0)
		return 0;
	f->code = GL_E_LAUNCH; /* whatever code the failed step filled */
	return -1;
}

int gl_exec_launch_unconfined(struct gl_exec *x, const char *const *hosts, size_t nhost,
			      int chan, int *pidfd, char **scratch, struct gl_fail *f)
{
	if (launch(x, NULL, 0, hosts, nhost, chan, pidfd, scratch, true, f) == 0)
		return 0;
	f->code = GL_E_LAUNCH; /* whatever code the failed step filled */
	return -1;
}

int gl_exec_session_start(struct gl_exec *x, const char *const *hosts, size_t nhost,
			  struct gl_session_proc *p, struct gl_fail *f)
{
	*p = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return gl_fail_errno(f, GL_E_LAUNCH, "socketpair");
	/* the call's destinations and every one the manifest declares */
	size_t nd = strv_len(x->declared);
	const char **h = gl_xcalloc(nhost + nd + 1, sizeof *h);
	for (size_t i = 0; i < nhost; i++)
		h[i] = hosts[i];
	for (size_t i = 0; i < nd; i++)
		h[nhost + i] = x->declared[i];
	int rc = gl_exec_launch_unconfined(x, h, nhost + nd, sp[1], &p->pidfd, &p->scratch, f);
	free(h);
	if (rc < 0) {
		close(sp[0]);
		return -1;
	}
	p->sock = sp[0];
	fcntl(p->sock, F_SETFL, O_NONBLOCK);
	p->up = p->started = p->exec = true;
	return 0;
}
