/* replay.c — probe replay for gl-replay; see replay.h and docs/witness.md. */
#define _GNU_SOURCE
#include "replay/replay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "sign/archive.h"
#include "broker/broker.h"
#include "runtime/exec.h"
#include "json/json.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "plan/readpaths.h"
#include "evidence/witness.h"

#define RELEASE_RECORD_MAX (64u << 20) /* bytes of GL_HOME/releases/<sha>.json */
#define TREE_DEPTH_MAX 64

/* {"ok":false,"error","detail","witness"} — never "release" alone, so
 * gl-damp does not take it for a call. */
GL_PRINTF(3, 4)
static jv failure(const char *who, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *d = NULL;
	if (vasprintf(&d, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	jv r = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string(code),
			 jv_string("detail"), jv_string(d), jv_string("witness"), jv_string(who));
	free(d);
	return r;
}

static int hash_fd(int fd, unsigned char out[32], int copy_to)
{
	crypto_hash_sha256_state h;
	crypto_hash_sha256_init(&h);
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		crypto_hash_sha256_update(&h, (unsigned char *)buf, (unsigned long long)n);
		if (copy_to >= 0 && gl_write_all(copy_to, buf, (size_t)n) < 0)
			return -1;
	}
	crypto_hash_sha256_final(&h, out);
	return 0;
}

static int make_tmp(struct gl_replay *x, char **err)
{
	if (x->tmp)
		return 0;
	const char *t = getenv("TMPDIR");
	char *p = gl_xasprintf("%s/gl-replay.XXXXXX", t && *t == '/' ? t : "/tmp");
	if (!mkdtemp(p)) {
		int rc = gl_err(err, "%s: %s", p, strerror(errno));
		free(p);
		return rc;
	}
	x->tmp = p;
	return 0;
}

/* --release: a private copy of the archive is hashed as it is written, and
 * only that copy is extracted (the bytes extracted are the bytes hashed),
 * once, when a witness names its hash. 0, or -1 with *code ("hash",
 * "unsafe_archive", "io") and *err. */
static int verify_archive(struct gl_replay *x, const char *want, const char **code,
			  char **err)
{
	*code = "io";
	if (make_tmp(x, err) < 0)
		return -1;
	autofree char *copy = gl_xasprintf("%s/release.tar.gz", x->tmp);
	if (!x->archive_sha[0]) {
		unlink(copy); /* a previous witness's release */
		autoclose int in = open(x->archive, O_RDONLY | O_CLOEXEC);
		autoclose int out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		unsigned char h[32];
		if (in < 0 || out < 0 || hash_fd(in, h, out) < 0)
			return gl_err(err, "%s: %s", x->archive, strerror(errno));
		gl_hex(h, 32, x->archive_sha);
	}
	*code = "hash";
	if (strcmp(want, x->archive_sha))
		return gl_err(err, "the release archive's SHA-256 %s is not the witness's release %s",
			      x->archive_sha, want);
	autofree char *dest = gl_xasprintf("%s/%s", x->tmp, x->archive_sha);
	if (access(dest, F_OK) == 0)
		return 0;
	autoclose int fd = open(copy, O_RDONLY | O_CLOEXEC);
	struct gl_archive_limits lim;
	gl_archive_limits_default(&lim);
	jv files = jv_invalid();
	char *why = NULL;
	enum gl_archive_status st =
	    fd < 0 ? GL_ARCHIVE_IO : gl_archive_extract(fd, dest, &lim, &files, &why);
	if (st == GL_ARCHIVE_OK) {
		/* the install record an exec launch verifies the tree against */
		autofree char *rec = gl_xasprintf("%s.json", dest);
		autobuf struct gl_buf b = {0};
		jv rj = JV_OBJECT(jv_string("files"), files);
		gl_json_dump(&b, rj);
		jv_free(rj);
		if (gl_atomic_write(rec, b.data, b.len, 0600) < 0)
			return gl_err(err, "%s: %s", rec, strerror(errno));
		return 0;
	}
	jv_free(files);
	*code = st == GL_ARCHIVE_UNSAFE ? "unsafe_archive" : "io";
	gl_err(err, "%s: %s", x->archive, why ? why : strerror(errno));
	free(why);
	return -1;
}

/* --release DIR (SPEC §7): the regular file "*.tar.gz" in DIR whose SHA-256
 * is the witness's release becomes the archive to verify and extract; a
 * directory of downloads or a publisher's targets/ works as it is. At most
 * GL_REPLAY_DIR_MAX candidates are hashed. 0, or -1 with *err. */
#define GL_REPLAY_DIR_MAX 4096
static int pick_archive(struct gl_replay *x, const char *want, char **err)
{
	DIR *d = opendir(x->archive_dir);
	if (!d)
		return gl_err(err, "%s: %s", x->archive_dir, strerror(errno));
	struct dirent *e;
	int seen = 0, rc = -1;
	while ((e = readdir(d)) && seen < GL_REPLAY_DIR_MAX) {
		size_t n = strlen(e->d_name);
		if (n < 8 || strcmp(e->d_name + n - 7, ".tar.gz"))
			continue;
		seen++;
		autoclose int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct stat st;
		unsigned char h[32];
		char hex[65];
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || hash_fd(fd, h, -1) < 0)
			continue;
		gl_hex(h, 32, hex);
		if (strcmp(hex, want))
			continue;
		free(x->found);
		x->found = gl_xasprintf("%s/%s", x->archive_dir, e->d_name);
		x->archive = x->found;
		x->archive_sha[0] = 0;
		rc = 0;
		break;
	}
	closedir(d);
	if (rc < 0)
		gl_err(err, "%s: no release archive (*.tar.gz) with SHA-256 %s", x->archive_dir, want);
	return rc;
}

/* The installed tree against its recorded per-file hashes: every regular
 * file recorded and unchanged, none missing, links staying inside. */
static int walk(int dfd, const char *rel, const char *root, jv files, size_t *seen, int depth,
		char **err)
{
	if (depth > TREE_DEPTH_MAX)
		return gl_err(err, "%s: deeper than %d directories", rel, TREE_DEPTH_MAX);
	DIR *d = fdopendir(dfd);
	if (!d)
		return gl_err(err, "%s: %s", rel, strerror(errno));
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		autofree char *p = *rel ? gl_xasprintf("%s/%s", rel, e->d_name)
					: gl_xstrdup(e->d_name);
		autofree char *q = gl_quote(p, strlen(p));
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = gl_err(err, "%s: %s", q, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC);
			rc = sub < 0 ? gl_err(err, "%s: %s", q, strerror(errno))
				     : walk(sub, p, root, files, seen, depth + 1, err);
		} else if (S_ISREG(st.st_mode)) {
			const char *want = gl_json_get_str(files, p);
			autoclose int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			unsigned char h[32];
			char hex[65];
			if (!want)
				rc = gl_err(err, "%s: a file the release did not install", q);
			else if (fd < 0 || hash_fd(fd, h, -1) < 0)
				rc = gl_err(err, "%s: %s", q, strerror(errno));
			else if (gl_hex(h, 32, hex), strcmp(hex, want))
				rc = gl_err(err, "%s: changed since install (SHA-256 %s, recorded %s)", q,
					    hex, want);
			else
				(*seen)++;
		} else if (S_ISLNK(st.st_mode)) {
			autofree char *full = gl_xasprintf("%s/%s", root, p);
			char real[PATH_MAX];
			size_t rl = strlen(root);
			if (!realpath(full, real) || strncmp(real, root, rl) || real[rl] != '/')
				rc = gl_err(err, "%s: a link leaving the release tree", q);
		} else {
			rc = gl_err(err, "%s: neither a file, a directory nor a link", q);
		}
	}
	closedir(d);
	return rc;
}

static int verify_installed(struct gl_replay *x, const char *sha, char **err)
{
	autofree char *dir = gl_xasprintf("%s/releases/%s", x->home, sha);
	autofree char *recp = gl_xasprintf("%s.json", dir);
	autofree char *buf = NULL;
	size_t len = 0;
	if (gl_read_file_capped(recp, RELEASE_RECORD_MAX, &buf, &len) < 0)
		return gl_err(err, "release %s is not installed (%s: %s)", sha, recp,
			      strerror(errno));
	jv rec = gl_json_parse(buf, len);
	jv files = jv_get_kind(rec) == JV_KIND_OBJECT ? gl_json_get(rec, "files") : jv_invalid();
	jv_free(rec);
	if (jv_get_kind(files) != JV_KIND_OBJECT) {
		jv_free(files);
		return gl_err(err, "%s: no \"files\" map of per-file hashes", recp);
	}
	char root[PATH_MAX];
	int dfd = realpath(dir, root) ? open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				      : -1;
	size_t seen = 0;
	int rc = dfd < 0 ? gl_err(err, "%s: %s", dir, strerror(errno))
			 : walk(dfd, "", root, files, &seen, 0, err);
	if (rc == 0 && seen != (size_t)jv_object_length(jv_copy(files)))
		rc = gl_err(err, "%zu of the %d recorded files are missing", 
			    (size_t)jv_object_length(jv_copy(files)) - seen,
			    jv_object_length(jv_copy(files)));
	jv_free(files);
	return rc;
}

static void stop(struct gl_replay *x)
{
	if (x->up)
		gl_germline_stop(&x->g);
	x->up = false;
	x->release[0] = 0;
	jv_free(x->manifest);
	x->manifest = jv_invalid();
	free(x->read_paths);
	x->read_paths = NULL;
	free(x->release_dir);
	x->release_dir = NULL;
}

/* Was g's release imported under itw (NULL: the real clock)? */
static bool same_import(const struct gl_germline *g, const struct gl_twin *itw)
{
	if (!itw || !g->import_twinned)
		return !itw && !g->import_twinned;
	return g->import_twin.sec == itw->sec && g->import_twin.usec == itw->usec &&
	       !strcmp(g->import_twin.seed, itw->seed);
}

/* The verified release's germline, launched as gl-run launches it, its
 * import under the witness's import twin itw (A2, A4: the image the call's
 * copies were forked from; NULL for a version 1 witness: the real clock,
 * as gl-run then did). Kept while witnesses name the same release and
 * import twin. NULL with *code and *err on refusal. */
static struct gl_germline *germline(struct gl_replay *x, const char *sha,
				    const struct gl_twin *itw, const char **code, char **err)
{
	if (x->up && !strcmp(x->release, sha) && same_import(&x->g, itw))
		return &x->g;
	stop(x);
	if (x->archive_dir && pick_archive(x, sha, err) < 0) {
		*code = "hash";
		return NULL;
	}
	if (x->archive) {
		if (verify_archive(x, sha, code, err) < 0)
			return NULL;
	} else if (verify_installed(x, sha, err) < 0) {
		autofree char *rec = gl_xasprintf("%s/releases/%s.json", x->home, sha);
		*code = access(rec, F_OK) < 0 ? "unknown_release" : "hash";
		return NULL;
	}
	x->release_dir = x->archive ? gl_xasprintf("%s/%s", x->tmp, sha)
				    : gl_xasprintf("%s/releases/%s", x->home, sha);
	x->manifest = gl_manifest_load(x->release_dir);
	const char *rt = gl_json_get_str(x->manifest, "runtime");
	const char *proto = gl_json_get_str(x->manifest, "protocol");
	if (!jv_is_valid(x->manifest) || !gl_replay_runtime_ok(rt, proto)) {
		*code = "unsupported_runtime";
		gl_err(err, "runtime %s with protocol %s is not replayed", rt ? rt : "?",
		       proto ? proto : "germline");
		stop(x);
		return NULL;
	}
	/* read_paths are granted as gl-run grants them: by --policy, none
	 * without one (SPEC §7; lib/plan/readpaths.h). */
	const char *state[] = {x->home, x->items_dir, NULL}; /* items_dir may be NULL */
	if (gl_readpaths_check(x->pol, state, x->manifest, err) < 0) {
		*code = GL_ERR_READ_PATHS;
		stop(x);
		return NULL;
	}
	jv rp = gl_json_get(x->manifest, "read_paths");
	int n = jv_get_kind(rp) == JV_KIND_ARRAY ? jv_array_length(jv_copy(rp)) : 0;
	x->read_paths = gl_xcalloc((size_t)n + 1, sizeof *x->read_paths);
	for (int i = 0; i < n; i++) {
		jv p = jv_array_get(jv_copy(rp), i);
		x->read_paths[i] = jv_string_value(p); /* x->manifest holds it */
		jv_free(p);
	}
	jv_free(rp);
	/* the auditor's bounds for this release (not the witness's: the
	 * release wrote what a witness says; docs/witness.md) */
	const char *name = gl_json_get_str(x->manifest, "name");
	x->lim = x->pol ? *gl_policy_limits(x->pol, name) : GL_LIMITS_DEFAULT;
	struct gl_launch_spec spec = {.release_dir = x->release_dir,
				      .entry = gl_json_get_str(x->manifest, "entry"),
				      .read_paths = x->read_paths,
				      .host_dir = x->host_dir,
				      .interpreter = "/usr/bin/python3",
				      .import_twin = itw,
				      .import_real = !itw,
				      .tmp_mb = x->lim.tmp_mb,
				      .cg = x->cg,
				      .limits = &x->lim};
	char *why = NULL;
	enum gl_launch_step st = GL_LAUNCH_OK;
	if (gl_replay_is_exec(x)) { /* each run a verified launch (lib/replay/replay_exec.c) */
		if (gl_replay_exec_open(x, code, err) < 0) {
			stop(x);
			return NULL;
		}
	} else {
		st = gl_germline_launch(&spec, &x->g, &why);
	}
	if (st != GL_LAUNCH_OK) {
		*code = "launch";
		gl_err(err, "%s: %s", gl_launch_step_name(st), why ? why : "failed");
		free(why);
		stop(x);
		return NULL;
	}
	x->up = true;
	/* its copies' bounds (lib/sandbox/cgroup.h), as gl-run's launch() sets them */
	x->g.cg = x->cg;
	x->g.lim = x->lim;
	if (x->g.exec) {
		x->g.exec->tmp_mb = x->lim.tmp_mb;
		x->g.exec->workspace_mb = x->lim.workspace_mb;
	}
	if (gl_replay_discover(x, GL_BROKER_DEADLINE_DEFAULT, code, err) < 0) {
		stop(x);
		return NULL;
	}
	snprintf(x->release, sizeof x->release, "%s", sha);
	return &x->g;
}

static bool in_list(jv names, const char *s)
{
	bool found = false;
	jv_array_foreach(names, i, n)
	{
		found |= !strcmp(jv_string_value(n), s);
		jv_free(n);
	}
	return found;
}

static bool same(jv a, jv b) /* borrowed */
{
	return jv_equal(jv_copy(a), jv_copy(b));
}

/* Table XIV. */
static jv verdict(const struct gl_witness *w, const struct gl_replay *x, int probe_differs,
		  int control_differs)
{
	bool declared = gl_json_get_bool(x->manifest, "deterministic", 0) == 1;
	const char *outcome, *event;
	if (control_differs > 0) {
		outcome = "nondeterminism"; /* Proposition 2 */
		event = declared ? "declared_broken" : "unverified";
	} else if (probe_differs == x->tries) {
		outcome = "item_witness"; /* Theorem 2(a) */
		event = declared ? "verified" : "verified_undeclared";
	} else if (probe_differs == 0) {
		outcome = "state_divergence"; /* Proposition 1 */
		event = "unverified";
	} else {
		outcome = "nondeterminism";
		event = "unverified";
	}
	int weight = !strcmp(event, "verified") || !strcmp(event, "declared_broken")
			 ? GL_REPLAY_WEIGHT_S
			 : GL_REPLAY_WEIGHT_W;
	jv v = JV_OBJECT(jv_string("ok"), jv_true(), jv_string("witness"), jv_string(w->id),
			 jv_string("release"), jv_string(w->release), jv_string("destination"),
			 jv_string(w->destination), jv_string("outcome"), jv_string(outcome),
			 jv_string("event"), jv_string(event), jv_string("weight"),
			 jv_number(weight), jv_string("tries"), jv_number(x->tries));
	v = jv_object_set(v, jv_string("probe_differs"), jv_number(probe_differs));
	v = jv_object_set(v, jv_string("control_differs"), jv_number(control_differs));
	v = jv_object_set(v, jv_string("call"), jv_copy(w->call));
	v = jv_object_set(v, jv_string("function"), jv_string(w->function));
	v = jv_object_set(v, jv_string("kind"), jv_string(w->kind));
	v = jv_object_set(v, jv_string("position"), jv_number((double)w->position));
	return jv_object_set(v, jv_string("replay"), jv_string(x->no_probe ? "no_probe" : "probe"));
}

/* R(d) per declared host from T(d) (or, for --no-probe, empty: every
 * declared host answers with the placeholder). */
static void environment(const struct gl_witness *w, bool empty, struct gl_replay_host *h,
			size_t nh)
{
	for (size_t i = 0; i < nh; i++) {
		jv name = jv_array_get(jv_copy(w->dests), (int)i);
		h[i] = (struct gl_replay_host){.host = jv_string_value(name)}; /* doc holds it */
		jv_free(name);
		h[i].digest = gl_xcalloc(w->ntrans ? w->ntrans : 1, sizeof *h[i].digest);
		h[i].reply = gl_xcalloc(w->ntrans ? w->ntrans : 1, sizeof *h[i].reply);
		for (size_t k = 0; k < w->ntrans && !empty; k++) {
			jv e = jv_array_get(jv_copy(w->transcript), (int)k);
			const char *host = gl_json_get_str(e, "host"), *src = gl_json_get_str(e, "source");
			const char *dg = gl_json_get_str(e, "digest");
			if (!strcmp(host, h[i].host) && strcmp(src, "denied")) {
				gl_unhex(dg, 64, h[i].digest[h[i].n], 32);
				h[i].reply[h[i].n++] = w->reply[k]; /* jv_null(): the placeholder */
			}
			jv_free(e);
		}
	}
}

jv gl_replay_file(struct gl_replay *x, const char *path, const char *expect_sha256,
		  const char *expect_id, enum gl_replay_status *status)
{
	struct gl_witness w;
	char sha[65] = "", *err = NULL;
	const char *who = expect_id ? expect_id : path;
	enum gl_witness_status ws = gl_witness_load(path, &w, sha, &err);
	jv out = jv_invalid();
	*status = GL_REPLAY_REFUSED;
	autofree char *qp = gl_sanitize(path, strlen(path));
	if (ws == GL_WITNESS_IO) {
		*status = GL_REPLAY_IO;
		out = failure(who, "io", "%s: %s", qp, err);
	} else if (ws == GL_WITNESS_TOO_LARGE) { /* never read whole (issue 15) */
		out = failure(who, "too_large", "%s: %s", qp, err);
	} else if (expect_sha256 && strcmp(expect_sha256, sha)) {
		out = failure(who, "tampered_witness",
			      "%s: SHA-256 %s is not the trigger's witness_sha256 %s", qp, sha,
			      expect_sha256);
	} else if (ws != GL_WITNESS_OK) {
		out = failure(who, "bad_witness", "%s: %s", qp, err);
	} else if (expect_id && strcmp(expect_id, w.id)) {
		out = failure(who, "tampered_witness", "%s: holds trigger %s, not %s", qp, w.id,
			      expect_id);
	} else if (!w.complete) {
		out = failure(w.id, "incomplete_witness",
			      "%s: a bound cut the transcript's replies; it cannot be verified", qp);
	}
	const char *scode = NULL;
	if (!jv_is_valid(out) && gl_witness_snapshots(path, x->home, &w, &scode, &err) < 0)
		out = gl_replay_as_unverified(failure(w.id, scode, "%s", err), &w);
	free(err);
	err = NULL;
	if (jv_is_valid(out)) {
		gl_witness_free(&w);
		return out;
	}
	who = w.id;
	/* Contents: from the witness, else from --items, for every item of W. */
	char **own = gl_xcalloc(w.nitem ? w.nitem : 1, sizeof *own);
	const char **b64 = gl_xcalloc(w.nitem ? w.nitem : 1, sizeof *b64);
	const char *code = NULL;
	for (size_t i = 0; i < w.nitem && !code; i++) {
		if (!in_list(w.comparing.view, w.item[i].name))
			continue;
		/* a directory item's contents in a call message are empty; the
		 * directory itself comes from --items (lib/replay/replay_exec.c) */
		b64[i] = w.dir[i] ? "" : w.item[i].b64;
		if (!b64[i])
			b64[i] = own[i] = gl_replay_item_file(x, w.item[i].name, &code, &err);
	}
	const struct gl_twin *itw = w.import_twinned ? &w.import_twin : NULL;
	struct gl_germline *g = code ? NULL : germline(x, w.release, itw, &code, &err);
	/* An exec run reads W's (probe) or V(d)'s (control) files at their
	 * paths, as gl-run's copies did. */
	struct gl_replay_files pf = {0}, cf = {0};
	if (g && g->exec && make_tmp(x, &err) < 0) {
		code = "io";
		g = NULL;
	}
	if (g && g->exec &&
	    (gl_replay_exec_files(x, &w, b64, w.comparing.view, &pf, &code, &err) < 0 ||
	     gl_replay_exec_files(x, &w, b64, w.served.view, &cf, &code, &err) < 0))
		g = NULL;
	if (!g && code)
		out = failure(who, code, "%s", err);
	jv fn = g ? gl_manifest_function(x->manifest, w.function) : jv_invalid();
	if (g && !jv_is_valid(fn)) {
		g = NULL;
		out = failure(who, "unknown_function", "the release declares no function %s",
			      w.function);
	}
	jv_free(fn);
	struct gl_callmsg_item *probe = gl_xcalloc(w.nitem ? w.nitem : 1, sizeof *probe);
	struct gl_callmsg_item *control = gl_xcalloc(w.nitem ? w.nitem : 1, sizeof *control);
	for (size_t i = 0; i < w.nitem; i++) {
		probe[i] = control[i] = w.item[i];
		probe[i].b64 = b64[i];
		control[i].b64 = in_list(w.served.view, w.item[i].name) ? b64[i] : NULL;
	}
	size_t nh = (size_t)jv_array_length(jv_copy(w.dests));
	struct gl_replay_host *rd = gl_xcalloc(nh ? nh : 1, sizeof *rd);
	struct gl_replay_host *none = gl_xcalloc(nh ? nh : 1, sizeof *none);
	environment(&w, false, rd, nh);
	environment(&w, true, none, nh);
	/* Definition 6: the probe differs from g only in W \ V(d); the
	 * reference (--no-probe) also in the slot, τ and the replies. */
	struct gl_replay_in pin = {
	    .function = w.function, .args = w.args, .item = probe, .nitem = w.nitem,
	    .state = x->no_probe ? w.comparing.slot : w.served.slot,
	    .twin = x->no_probe ? &w.comparing.twin : &w.served.twin,
	    .host = x->no_probe ? none : rd, .nhost = nh, .dest = w.destination,
	    .deadline_s = (double)w.deadline_ms / 1000.0, .files = pf.item, .nfiles = pf.n};
	struct gl_replay_in cin = pin;
	cin.files = cf.item;
	cin.nfiles = cf.n;
	cin.item = control;
	cin.state = w.served.slot;
	cin.twin = &w.served.twin;
	cin.host = rd;
	/* A witness of the --no-twin ablation is replayed the same way: every
	 * run draws its own clock and seed. */
	bool fresh = !strcmp(w.mode, "no_twin");
	struct gl_twin tw;
	int pd = 0, cd = 0;
	for (int t = 0; g && t < x->tries; t++) {
		for (int which = 0; g && which < 2; which++) {
			if (fresh) {
				gl_twin_new(&tw);
				pin.twin = cin.twin = &tw;
			}
			jv seq = jv_invalid();
			const char *how = NULL;
			bool lost = false;
			if (gl_broker_replay(g, which ? &cin : &pin, &seq, &how, &lost, &err) < 0) {
				out = failure(who, g->exec ? "launch" : lost ? "germline" : "germline_check",
					      "%s", err);
				free(err);
				err = NULL;
				stop(x);
				g = NULL;
				break;
			}
			if (!same(seq, w.delivered))
				*(which ? &cd : &pd) += 1;
			jv_free(seq);
		}
	}
	if (g) {
		out = verdict(&w, x, pd, cd);
		*status = GL_REPLAY_VERDICT;
		/* evicted after the unverified (docs/witness.md "Caps") */
		const char *oc = gl_json_get_str(out, "outcome");
		if (!x->no_probe && oc && !strcmp(oc, "item_witness"))
			gl_witness_mark_verified(x->home, path);
	} else if (gl_replay_unverifiable(gl_json_get_str(out, "error"))) {
		out = gl_replay_as_unverified(out, &w); /* gl-damp counts it */
	}
	gl_replay_files_free(&pf);
	gl_replay_files_free(&cf);
	for (size_t i = 0; i < nh; i++) {
		free(rd[i].digest);
		free(rd[i].reply);
		free(none[i].digest);
		free(none[i].reply);
	}
	free(rd);
	free(none);
	free(probe);
	free(control);
	for (size_t i = 0; i < w.nitem; i++)
		free(own[i]);
	free(own);
	free(b64);
	free(err);
	gl_witness_free(&w);
	return out;
}

void gl_replay_end(struct gl_replay *x)
{
	stop(x);
	if (x->tmp) {
		gl_rm_rf(x->tmp);
		free(x->tmp);
		x->tmp = NULL;
	}
	free(x->found);
	x->found = NULL;
}
