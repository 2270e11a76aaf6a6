/* exec.c — runtime "exec": opening a release for a session (SPEC §5, §9;
 * seed 002; paper §VI "For an MCP server…"): its verified tree
 * (lib/runtime/exec_tree.c), its retained target and host, the argv,
 * environment, Landlock allowlist and enforcement every copy gets, and the
 * session's relay certificate (exec_tls.h). The launch of one copy per
 * plan group is lib/runtime/exec_launch.c; its child
 * (lib/runtime/exec_child.c) follows lib/runtime/germline.c's (typed
 * steps, a close-on-exec status pipe, restrictions before execveat of a
 * retained descriptor) and only makes syscalls. See exec.h, docs/exec.md. */
#define _GNU_SOURCE
#include "runtime/exec.h"
#include "release/config.h"
#include "runtime/exec_scratch.h"
#include "runtime/exec_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha.h"
#include "release/bounds.h"
#include "json/json.h"
#include "release/manifest.h"
#include "sandbox/scratch.h"
#include "core/util.h"


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

size_t gl_exec_strv_len(char *const *v)
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
	size_t ne = gl_exec_strv_len(ent);
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
	size_t nrp = gl_exec_strv_len(rps);
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
	if (gl_exec_tls_make(&x->tls, (const char *const *)x->declared, gl_exec_strv_len(x->declared), f) < 0 ||
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

/* ---- a launch's environment (exec_scratch.h) ------------------------------ */

/* The launch's environment: tls_env for the directory dir as the copy
 * sees it (its own scratch tls/: GL_EXEC_TLS_DIR in the minimal root),
 * then the session's. */
char **gl_exec_launch_env(const struct gl_exec *x, const char *dir)
{
	size_t ne = gl_exec_strv_len(x->envp);
	char **e = gl_xcalloc(NTLS_ENV + ne + 1, sizeof *e);
	for (size_t i = 0; i + 1 < NTLS_ENV; i++)
		e[i] = gl_xasprintf("%s=%s/ca.pem", tls_env[i], dir);
	e[NTLS_ENV - 1] = gl_xasprintf("%s=%s", tls_env[NTLS_ENV - 1], dir);
	memcpy(e + NTLS_ENV, x->envp, ne * sizeof *e);
	return e;
}

void gl_exec_launch_env_free(char **e)
{
	for (size_t i = 0; e && i < NTLS_ENV; i++)
		free(e[i]);
	free(e);
}
