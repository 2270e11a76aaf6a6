/* replay_exec.c — gl-replay for every runtime (SPEC §7; paper §IV-F,
 * Definition 6, Table XIV; docs/witness.md "Every runtime"): which
 * runtimes are replayed, the launch of an exec release (each run a fresh
 * verified launch, lib/runtime/exec.h) and of an mcp-stdio release's discovery,
 * the files an exec run reads at its items' paths, item contents from
 * --items DIR (names with '/' included), and the unverified record of a
 * witness that cannot be replayed. lib/replay/replay.c runs the probe and the
 * control; lib/broker/broker_replay.c serves each run. */
#define _GNU_SOURCE
#include "replay/replay.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/broker.h"
#include "runtime/exec.h"
#include "json/json.h"
#include "release/manifest.h"
#include "broker/mcp.h"
#include "core/util.h"
#include "json/msg.h"
#include "evidence/witness.h"

/* The test build's switch (tests/replay-runtimes.bats): only python with
 * protocol germline is replayed, everything else is refused with the old
 * unsupported_runtime error, which gl-damp cannot count. */
bool gl_replay_runtimes_off(void)
{
#ifdef GL_TESTING
	return getenv("GL_TEST_REPLAY_RUNTIMES_OFF") != NULL;
#else
	return false;
#endif
}

/* The test build's switch for same_file (tests/replay-runtimes.bats):
 * every item from a private file, as a second machine has it. */
static bool private_items_forced(void)
{
#ifdef GL_TESTING
	return getenv("GL_TEST_REPLAY_PRIVATE_ITEMS") != NULL;
#else
	return false;
#endif
}

/* GL_TESTING builds with GL_TEST_REPLAY_FOREIGN_FILES=1: an item's own
 * file is used for a witness of another host too (the landed behaviour:
 * the auditor's file bound into the run whenever it holds the bytes a
 * witness names, tests/replay-runtimes.bats). */
static bool foreign_files(void)
{
#ifdef GL_TESTING
	return getenv("GL_TEST_REPLAY_FOREIGN_FILES") != NULL;
#else
	return false;
#endif
}

bool gl_replay_runtime_ok(jv manifest)
{
	enum gl_runtime_kind rt = gl_manifest_runtime(manifest);
	enum gl_protocol_kind proto = gl_manifest_protocol(manifest);
	if (rt == GL_RT_UNKNOWN || proto == GL_PROTO_UNKNOWN)
		return false;
	return (rt == GL_RT_PYTHON && proto == GL_PROTO_GERMLINE) || !gl_replay_runtimes_off();
}

bool gl_replay_is_exec(const struct gl_replay *x)
{
	/* the one choice of a runtime (lib/runtime/runtime.h) */
	return gl_runtime_ops_for(gl_manifest_runtime(x->manifest)) == &gl_exec_ops;
}

/* Runtime exec: no germline; the release verified and its executables
 * retained as gl-run's launch does (lib/session/resident.c), every run then
 * one verified launch (gl_exec_copy). */
int gl_replay_exec_open(struct gl_replay *x, struct gl_fail *f)
{
	memset(&x->g, 0, sizeof x->g);
	x->g.pid = x->g.pidfd = x->g.ctl = -1;
	x->g.exec = gl_xcalloc(1, sizeof *x->g.exec);
	autofree char *host = gl_xasprintf("%s/gl-exec-host", x->host_dir);
	autofail struct gl_fail why = {0};
	if (gl_exec_open(x->g.exec, x->release_dir, x->manifest, host, x->home, x->config, &why) < 0) {
		gl_fail(f, x->g.exec->fail_rejected ? GL_E_HASH : GL_E_LAUNCH, "%s",
			why.detail ? why.detail : "verified launch failed");
		free(x->g.exec);
		x->g.exec = NULL;
		return -1;
	}
	x->g.enf = x->g.exec->enf;
	/* each run's tmpfs /tmp and workspace: the auditor's bounds, as
	 * gl-run's open_exec sets them (lib/session/resident.c) */
	x->g.exec->tmp_mb = x->lim.tmp_mb;
	x->g.exec->workspace_mb = x->lim.workspace_mb;
	return 0;
}

/* An mcp-stdio release's discovery check, as gl-run runs it before the
 * first call of a germline (lib/broker/mcp.h): the server's own initialize and
 * tools/list, which must name the signed manifest's functions. A release
 * that passed it under gl-run and fails it here tells replay from a real
 * session: the replay is impossible (unverified). */
int gl_replay_discover(struct gl_replay *x, double deadline_s, struct gl_fail *f)
{
	if (gl_manifest_protocol(x->manifest) != GL_PROTO_MCP_STDIO)
		return 0;
	jv tools;
	bool lost = false;
	autofail struct gl_fail why = {0};
	enum gl_code d =
	    gl_mcp_discover(NULL, &x->g, x->manifest, deadline_s, &tools, NULL, &lost, &why);
	jv_free(tools);
	if (d == GL_E_OK)
		return 0;
	return gl_fail(f, d == GL_E_DISCOVERY_CHANGED ? GL_E_DISCOVERY_CHANGED : GL_E_LAUNCH, "%s",
		       why.detail ? why.detail : "discovery failed");
}

/* ---- item contents from --items DIR ------------------------------------ */

/* name as a path relative to DIR (docs/witness.md "--items"): a name
 * without '/' is DIR/name; an absolute name (a file item's path) is DIR
 * followed by it, so DIR mirrors the file system; a relative name with
 * '/' is DIR/name. No empty, "." or ".." component. NULL when refused. */
static const char *relative(const char *name)
{
	const char *rel = name[0] == '/' ? name + 1 : name;
	if (!*rel)
		return NULL;
	for (const char *p = rel;;) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return NULL;
		if (!*e)
			return rel;
		p = e + 1;
	}
}

/* Open name under DIR, never leaving it (RESOLVE_BENEATH: a symlink that
 * points out of DIR, an absolute link or ".." are refused; links inside
 * DIR are followed). -1 with errno. */
static int open_beneath(const char *dir, const char *rel, bool want_dir)
{
	autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	struct open_how how = {
	    .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (want_dir ? O_DIRECTORY : 0),
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, dfd, rel, &how, sizeof how);
}

char *gl_replay_item_file(const struct gl_replay *x, const char *name, struct gl_fail *f)
{
	autofree char *q = gl_quote(name, strlen(name));
	if (!x->items_dir)
		return gl_fail(f, GL_E_MISSING_ITEM, "item %s: no contents (give --items DIR)", q),
		       NULL;
	const char *rel = relative(name);
	if (!rel)
		return gl_fail(f, GL_E_BAD_ITEM, "item %s: not usable as a file name in --items",
			       q),
		       NULL;
	autoclose int fd = open_beneath(x->items_dir, rel, false);
	struct stat st;
	autofree char *raw = NULL;
	size_t len = 0;
	if (fd < 0 && errno == ENOENT)
		return gl_fail(f, GL_E_MISSING_ITEM, "item %s: no file %s/%s", q, x->items_dir,
			       rel),
		       NULL;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    gl_read_fd_capped(fd, GL_ITEM_MAX, &raw, &len) < 0)
		return gl_fail(f, GL_E_BAD_ITEM, "item %s: %s", q,
			       fd >= 0 && !S_ISREG(st.st_mode) ? "not a regular file"
			       : errno == EXDEV || errno == ELOOP ? "leaves the --items directory"
			       : errno == EFBIG		      ? "larger than 32 MiB"
							      : strerror(errno)),
		       NULL;
	struct gl_buf b = {0};
	gl_b64_encode(&b, (unsigned char *)raw, len);
	gl_buf_addc(&b, 0);
	return b.data;
}

/* ---- an exec run's files ------------------------------------------------ */

static bool overlaps(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
	return !strncmp(a, b, n) && (na == nb || (na < nb ? b[n] : a[n]) == '/');
}

/* May a witness put a file at `at` in an exec copy's root? Not on, beneath
 * or above anything the launch itself binds (the release, its target,
 * the libraries, /etc/hosts, the workspace, /dev): a forged witness would
 * otherwise run other code than the signed release (Theorem 2 needs the
 * runs to be the signed code on the witness's inputs). */
static bool place_ok(const struct gl_exec *e, const char *at)
{
	static const char *const fixed[] = {"/dev", "/etc/hosts", "/proc", "/run", "/sys", NULL};
	if (overlaps(at, e->release_dir) || overlaps(at, e->target_path))
		return false;
	/* Nor through a symlink of the host's (the root copies its top-level
	 * ones, /lib -> usr/lib): gl-run's broker never opens such an item
	 * path, so only a forged witness names one, and it would reach an
	 * allowlisted path by another name. */
	char pre[GL_PATH_MAX + 1];
	for (size_t k = 1; k <= strlen(at) && k <= GL_PATH_MAX; k++) {
		struct stat st;
		if (at[k] != '/' && at[k] != 0)
			continue;
		memcpy(pre, at, k);
		pre[k] = 0;
		if (lstat(pre, &st) == 0 && S_ISLNK(st.st_mode))
			return false;
	}
	for (size_t i = 0; fixed[i]; i++)
		if (overlaps(at, fixed[i]))
			return false;
	for (size_t i = 0; i < e->npaths; i++)
		if (overlaps(at, e->paths[i]))
			return false;
	return true;
}

/* The file still at path when it holds exactly the witness's bytes: the
 * inode gl-run's copy read, so its metadata (mode, owner, times, inode,
 * device) is the call's too and a release cannot tell the replay from the
 * call by them (A4: every input the same). Opened as gl-run's broker opens
 * an item (no symlink in the path, a regular file); the run gets it only
 * when its contents are the witness's, so it learns nothing it was not
 * given. -1 when absent, changed or not a regular file. */
static int same_file(const char *path, const unsigned char *raw, size_t n)
{
	int fd = gl_open_no_symlinks(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	autofree char *buf = NULL;
	size_t len = 0;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != n ||
	    gl_read_fd_capped(fd, GL_ITEM_MAX, &buf, &len) < 0 || len != n ||
	    (n && memcmp(buf, raw, n))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* A private file (0400) in x->tmp holding the base64 contents b64, or,
 * for a witness of this host (x->local), the item's own file when it still
 * holds them (same_file). A witness of another host names a path of that
 * host: here it is the auditor's file, which a guess of its bytes would
 * otherwise bind into the release's run (an oracle on the auditor's
 * files). -1 with f (io). */
static int private_file(struct gl_replay *x, const char *at, const char *b64, char **path,
			struct gl_fail *f)
{
	static unsigned long seq;
	size_t n = 0;
	autofree unsigned char *raw = gl_b64_decode(b64, strlen(b64), &n);
	bool own = x->local || foreign_files();
	int same = raw && own && !private_items_forced() ? same_file(at, raw, n) : -1;
	if (same >= 0)
		return same;
	*path = gl_xasprintf("%s/item.%lu", x->tmp, seq++);
	int fd = raw ? open(*path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400) : -1;
	if (fd < 0 || gl_write_all(fd, (char *)raw, n) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return gl_fail(f, GL_E_IO, "%s: %s", *path, raw ? strerror(e) : "not base64");
	}
	close(fd);
	fd = open(*path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? gl_fail_errno(f, GL_E_IO, "%s", *path) : fd;
}

/* One file or directory item i of the view. 0, or -1 with fail
 * (unreplayable, bad_item, missing_item, io). */
static int one_file(struct gl_replay *x, const struct gl_witness *w, size_t i, const char *b64,
		    struct gl_replay_files *f, struct gl_fail *fail)
{
	const char *at = w->path[i];
	autofree char *q = gl_quote(at, strlen(at));
	if (!place_ok(x->g.exec, at))
		return gl_fail(fail, GL_E_UNREPLAYABLE,
			       "item %s: its path is where the launch binds the release or "
			       "the system; it cannot be given to a replay",
			       q);
	int fd = -1;
	if (w->dir[i]) {
		/* a directory's contents are never in a witness: --items DIR */
		const char *rel = x->items_dir ? relative(at) : NULL;
		fd = rel ? open_beneath(x->items_dir, rel, true) : -1;
		if (fd < 0)
			return gl_fail(fail,
				       rel && errno != ENOENT ? GL_E_BAD_ITEM : GL_E_MISSING_ITEM,
				       "directory item %s: no directory %s/%s", q,
				       x->items_dir ? x->items_dir : "(no --items)",
				       rel ? rel : at);
	} else {
		char *p = NULL;
		fd = private_file(x, at, b64, &p, fail);
		if (fd < 0) {
			free(p);
			return -1;
		}
		f->tmp[f->n] = p;
	}
	f->fd[f->n] = fd;
	f->item[f->n++] = (struct gl_exec_item){.fd = fd, .dir = w->dir[i], .at = at};
	return 0;
}

int gl_replay_exec_files(struct gl_replay *x, const struct gl_witness *w, const char *const *b64,
			 jv view, struct gl_replay_files *f, struct gl_fail *fail)
{
	*f = (struct gl_replay_files){0};
	size_t cap = w->nitem ? w->nitem : 1;
	f->item = gl_xcalloc(cap, sizeof *f->item);
	f->fd = gl_xcalloc(cap, sizeof *f->fd);
	f->tmp = gl_xcalloc(cap, sizeof *f->tmp);
	for (size_t i = 0; i < w->nitem; i++) {
		bool in = false;
		jv_array_foreach(view, k, n)
		{
			in |= !strcmp(jv_string_value(n), w->item[i].name);
			jv_free(n);
		}
		/* a data item is only in the call message; a path item is also a
		 * file the copy reads where gl-run's copy read it */
		if (in && w->path[i] && (w->dir[i] || b64[i]) &&
		    one_file(x, w, i, b64[i], f, fail) < 0)
			return -1;
	}
	return 0;
}

void gl_replay_files_free(struct gl_replay_files *f)
{
	for (size_t i = 0; i < f->n; i++) {
		close(f->fd[i]);
		if (f->tmp[i])
			unlink(f->tmp[i]);
		free(f->tmp[i]);
	}
	free(f->item);
	free(f->fd);
	free(f->tmp);
	*f = (struct gl_replay_files){0};
}

/* ---- a witness that cannot be replayed ---------------------------------- */

bool gl_replay_unverifiable(const char *code)
{
	/* Every refusal of a trusted witness is an event: a trigger the host
	 * vouches for is never free, whatever stopped its replay here (a
	 * missing item, the release not at hand, a launch, a bound, I/O).
	 * The test build's GL_TEST_REPLAY_RUNTIMES_OFF restores the old
	 * refusal of an unsupported runtime, which counted nothing. */
	if (!code || (!strcmp(code, "unsupported_runtime") && gl_replay_runtimes_off()))
		return false;
	return true;
}

jv gl_replay_as_unverified(jv out, const struct gl_witness *w)
{
	/* Not replayable here: an unverified event with its weight, which
	 * gl-damp counts (SPEC §7; Table XIV), never a record it cannot. */
	out = jv_object_set(out, jv_string("release"), jv_string(w->release));
	out = jv_object_set(out, jv_string("destination"), jv_string(w->destination));
	out = jv_object_set(out, jv_string("event"), jv_string("unverified"));
	return jv_object_set(out, jv_string("weight"), jv_number(GL_REPLAY_WEIGHT_W));
}
