/* witness_store.c — content-addressed slot snapshots, caps and pruning of
 * witnesses; see witness_store.h and docs/witness.md (issue 15). */
#define _GNU_SOURCE
#include "evidence/witness_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sodium.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha.h"
#include "json/json.h"
#include "release/manifest.h"
#include "core/util.h"

#define IDX_MAX 512 /* bytes of an .idx line: release and two snapshots */
#define NSLOT 2     /* snapshots a witness names (served, comparing) */

bool gl_witness_inline(void) { return GL_TEST_SWITCH("GL_TEST_WITNESS_INLINE"); }
bool gl_witness_store_snapshots(void) { return GL_TEST_SWITCH("GL_TEST_WITNESS_STORE"); }
bool gl_witness_replies_dropped(void) { return GL_TEST_SWITCH("GL_TEST_WITNESS_REPLIES_DROP"); }

static bool hex64(const char *s, size_t n) { return n == 64 && gl_sha256_hex_ok(s, 64); }

/* ---- the directory's state ----------------------------------------------- */

struct ent {
	char id[33];
	struct timespec mtime;
	uint64_t bytes;          /* record + .idx */
	char release[65];        /* "" when unknown (no .idx: a version 2 record) */
	int slot[NSLOT];         /* indices into st.snap, -1: none */
	bool verified;           /* <id>.verified: gl-replay found an item witness */
	bool dead;
};

struct snapf {
	char sha[65];
	uint64_t bytes;
	int refs, rrefs; /* witnesses naming it: all, of the new witness's release */
	bool mine;       /* named by the new witness */
};

struct state {
	struct ent *e;
	size_t ne;
	struct snapf *s;
	size_t ns;
	uint64_t total, rel; /* bytes: all, of the release */
};

static int snap_find(const struct state *st, const char *sha)
{
	for (size_t i = 0; i < st->ns; i++) /* ns ≤ 2·GL_WITNESS_FILES_MAX + files */
		if (!strcmp(st->s[i].sha, sha))
			return (int)i;
	return -1;
}

static int snap_add(struct state *st, const char *sha, uint64_t bytes)
{
	int k = snap_find(st, sha);
	if (k >= 0)
		return k;
	st->s = gl_xrealloc(st->s, (st->ns + 1) * sizeof *st->s);
	st->s[st->ns] = (struct snapf){.bytes = bytes};
	memcpy(st->s[st->ns].sha, sha, 65);
	return (int)st->ns++;
}

/* "<release> <sha>…\n" of dir/<id>.idx into e (unknown: release ""). */
static void read_idx(int dfd, struct ent *e, struct state *st)
{
	char name[48], buf[IDX_MAX + 1];
	snprintf(name, sizeof name, "%s.idx", e->id);
	autoclose int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > IDX_MAX)
		return;
	ssize_t n = gl_read_full(fd, buf, IDX_MAX);
	if (n <= 0)
		return;
	buf[n] = 0;
	e->bytes += (uint64_t)sb.st_size;
	char *save = NULL, *tok = strtok_r(buf, " \n", &save);
	if (!tok || !hex64(tok, strlen(tok)))
		return;
	memcpy(e->release, tok, 65);
	for (int k = 0; k < NSLOT && (tok = strtok_r(NULL, " \n", &save)); k++)
		if (hex64(tok, strlen(tok)))
			e->slot[k] = snap_add(st, tok, 0);
}

static int by_age(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Every witness record <32 hex>.json in dfd (at most GL_WITNESS_FILES_MAX
 * + 1 kept in memory: beyond, the rest are still removed oldest first on
 * later writes), oldest first. */
static void scan(int dfd, struct state *st)
{
	DIR *d = fdopendir(dup(dfd));
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct stat sb;
		if (n != 37 || strcmp(de->d_name + 32, ".json") ||
		    strspn(de->d_name, "0123456789abcdef") != 32 ||
		    fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
			continue;
		st->e = gl_xrealloc(st->e, (st->ne + 1) * sizeof *st->e);
		struct ent *e = &st->e[st->ne++];
		*e = (struct ent){.mtime = sb.st_mtim, .bytes = (uint64_t)sb.st_size,
				  .slot = {-1, -1}};
		memcpy(e->id, de->d_name, 32);
		e->id[32] = 0;
		char mark[48];
		snprintf(mark, sizeof mark, "%s.verified", e->id);
		e->verified = faccessat(dfd, mark, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		read_idx(dfd, e, st);
	}
	if (d)
		closedir(d);
	if (st->ne)
		qsort(st->e, st->ne, sizeof *st->e, by_age);
}

/* The snapshot files' sizes; a file no witness names is removed now. */
static void scan_slots(int sfd, struct state *st)
{
	DIR *d = sfd < 0 ? NULL : fdopendir(dup(sfd));
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct stat sb;
		if (n != 69 || strcmp(de->d_name + 64, ".json") || !hex64(de->d_name, 64) ||
		    fstatat(sfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		char sha[65];
		memcpy(sha, de->d_name, 64);
		sha[64] = 0;
		int k = snap_find(st, sha);
		if (k < 0)
			k = snap_add(st, sha, 0);
		st->s[k].bytes = (uint64_t)sb.st_size;
	}
	if (d)
		closedir(d);
}

static void count(struct state *st, const char *release)
{
	st->total = st->rel = 0;
	for (size_t i = 0; i < st->ne; i++) {
		const struct ent *e = &st->e[i];
		bool mine = !strcmp(e->release, release);
		st->total += e->bytes;
		st->rel += mine ? e->bytes : 0;
		for (int k = 0; k < NSLOT; k++)
			if (e->slot[k] >= 0 && !(k == 1 && e->slot[1] == e->slot[0])) {
				st->s[e->slot[k]].refs++;
				st->s[e->slot[k]].rrefs += mine;
			}
	}
	for (size_t i = 0; i < st->ns; i++) {
		st->total += st->s[i].refs || st->s[i].mine ? st->s[i].bytes : 0;
		st->rel += st->s[i].rrefs || st->s[i].mine ? st->s[i].bytes : 0;
	}
}

/* Remove witness i: its record, its .idx, and (at the end, unlink_orphans)
 * the snapshots nobody names any more. */
static void drop(int dfd, struct state *st, size_t i, const char *release)
{
	struct ent *e = &st->e[i];
	char name[48];
	snprintf(name, sizeof name, "%s.json", e->id);
	unlinkat(dfd, name, 0);
	snprintf(name, sizeof name, "%s.idx", e->id);
	unlinkat(dfd, name, 0);
	snprintf(name, sizeof name, "%s.verified", e->id);
	unlinkat(dfd, name, 0);
	e->dead = true;
	bool mine = !strcmp(e->release, release);
	st->total -= e->bytes;
	st->rel -= mine ? e->bytes : 0;
	for (int k = 0; k < NSLOT; k++) {
		if (e->slot[k] < 0 || (k == 1 && e->slot[1] == e->slot[0]))
			continue;
		struct snapf *s = &st->s[e->slot[k]];
		if (--s->refs == 0 && !s->mine)
			st->total -= s->bytes;
		if (mine && --s->rrefs == 0 && !s->mine)
			st->rel -= s->bytes;
	}
}

static void unlink_orphans(int sfd, const struct state *st)
{
	char name[80];
	for (size_t i = 0; sfd >= 0 && i < st->ns; i++)
		if (!st->s[i].refs && !st->s[i].mine) {
			snprintf(name, sizeof name, "%s.json", st->s[i].sha);
			unlinkat(sfd, name, 0);
		}
}

/* Unverified witnesses before verified ones, oldest first within each
 * class ("oldest unverified first", issue 15): of the release while it is
 * over its cap, then of all while the total or the count is
 * (witness_store.h). A witness gl-replay has verified is evidence of a
 * leak (Theorem 2); one not verified, or not yet replayed, goes first. */
static void prune(int dfd, int sfd, struct state *st, const char *release, uint64_t add_rel,
		  uint64_t add_total, const struct gl_witness_caps *caps)
{
	size_t alive = st->ne;
	for (int verified = 0; verified < 2; verified++)
		for (size_t i = 0; i < st->ne && st->rel + add_rel > caps->release; i++)
			if (!st->e[i].dead && st->e[i].verified == verified &&
			    !strcmp(st->e[i].release, release)) {
				drop(dfd, st, i, release);
				alive--;
			}
	for (int verified = 0; verified < 2; verified++)
		for (size_t i = 0; i < st->ne && (st->total + add_total > caps->total ||
						   alive + 1 > GL_WITNESS_FILES_MAX); i++)
			if (!st->e[i].dead && st->e[i].verified == verified) {
				drop(dfd, st, i, release);
				alive--;
			}
	unlink_orphans(sfd, st);
}

/* ---- writing ----------------------------------------------------------- */

/* 0, or -1 with f (io). */
static int write_snapshots(const char *dir, const struct gl_witness_snap *snap, size_t nsnap,
			   struct gl_fail *f)
{
	autofree char *sdir = gl_xasprintf("%s/slots", dir);
	if (nsnap && gl_mkdir_p(sdir, 0700) < 0) /* none: the record carries them */
		return gl_fail_errno(f, GL_E_IO, "%s", sdir);
	for (size_t i = 0; i < nsnap; i++) {
		autofree char *p = gl_xasprintf("%s/%s.json", sdir, snap[i].sha);
		struct stat sb;
		/* content-addressed: a file of that name and size is that snapshot */
		if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size == snap[i].len)
			continue;
		if (gl_atomic_write(p, snap[i].text, snap[i].len, 0600) < 0)
			return gl_fail_errno(f, GL_E_IO, "%s", p);
	}
	return 0;
}

int gl_witness_store(const char *home, const char *id, const char *release, const char *rec,
		     size_t len, const struct gl_witness_snap *snap, size_t nsnap,
		     const struct gl_witness_caps *caps_in, char **path, bool *too_large,
		     struct gl_fail *f)
{
	struct gl_witness_caps caps = {
	    .total = caps_in && caps_in->total ? caps_in->total
					       : (uint64_t)GL_WITNESS_CAP_MB_DEFAULT << 20,
	    .release = caps_in && caps_in->release
			   ? caps_in->release
			   : (uint64_t)GL_WITNESS_RELEASE_CAP_MB_DEFAULT << 20};
	*too_large = false;
	autofree char *dir = gl_xasprintf("%s/witnesses", home);
	if (gl_mkdir_p(dir, 0700) < 0)
		return gl_fail_errno(f, GL_E_IO, "%s", dir);
	char line[IDX_MAX];
	int ln = snprintf(line, sizeof line, "%s", release);
	uint64_t own = len;
	for (size_t i = 0; i < nsnap && i < NSLOT; i++) {
		ln += snprintf(line + ln, sizeof line - (size_t)ln, " %s", snap[i].sha);
		if (i == 0 || strcmp(snap[i].sha, snap[0].sha))
			own += snap[i].len;
	}
	ln += snprintf(line + ln, sizeof line - (size_t)ln, "\n");
	own += (uint64_t)ln;
	if (own > caps.release || own > caps.total) {
		*too_large = true;
		return gl_fail(f, GL_E_TOO_LARGE, "%s", GL_WITNESS_TOO_LARGE_TEXT);
	}
	autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	autofree char *lock = gl_xasprintf("%s/.lock", dir);
	autoclose int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (dfd < 0 || lfd < 0)
		return gl_fail_errno(f, GL_E_IO, "%s", dfd < 0 ? dir : lock);
	while (flock(lfd, LOCK_EX) < 0)
		if (errno != EINTR)
			return gl_fail_errno(f, GL_E_IO, "%s", lock);
	autofree char *sdir = gl_xasprintf("%s/slots", dir);
	autoclose int sfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct state st = {0};
	scan(dfd, &st);
	for (size_t i = 0; i < nsnap && i < NSLOT; i++) {
		int k = snap_add(&st, snap[i].sha, 0); /* may move st.s */
		st.s[k].mine = true;
	}
	scan_slots(sfd, &st);
	/* what the new witness adds: its record and .idx, and each snapshot it
	 * names that is not on disk yet (one on disk is counted by count) */
	uint64_t add = len + (uint64_t)ln;
	for (size_t i = 0; i < nsnap && i < NSLOT; i++) {
		int k = snap_find(&st, snap[i].sha);
		if (!st.s[k].bytes && (i == 0 || strcmp(snap[i].sha, snap[0].sha)))
			add += snap[i].len;
	}
	count(&st, release);
	prune(dfd, sfd, &st, release, add, add, &caps);
	free(st.e);
	free(st.s);
	int rc = write_snapshots(dir, snap, nsnap, f);
	char *p = gl_xasprintf("%s/%s.json", dir, id);
	autofree char *ip = gl_xasprintf("%s/%s.idx", dir, id);
	if (rc == 0 && (gl_atomic_write(ip, line, (size_t)ln, 0600) < 0 ||
			gl_atomic_write(p, rec, len, 0600) < 0))
		rc = gl_fail_errno(f, GL_E_IO, "%s", p);
	if (rc < 0) {
		free(p);
		return -1;
	}
	*path = p;
	return 0; /* closing lfd releases the lock */
}

/* ---- reading (gl-replay) ------------------------------------------------ */

void gl_witness_mark_verified(const char *home, const char *witness_path)
{
	if (!home)
		return;
	const char *sl = strrchr(witness_path, '/');
	const char *base = sl ? sl + 1 : witness_path;
	if (strlen(base) != 37 || strcmp(base + 32, ".json") ||
	    strspn(base, "0123456789abcdef") != 32)
		return;
	autofree char *wdir = gl_xasprintf("%s/witnesses", home);
	autofree char *pdir = sl ? gl_xasprintf("%.*s", (int)(sl - witness_path), witness_path)
				 : gl_xstrdup(".");
	char a[PATH_MAX], b[PATH_MAX];
	if (!realpath(wdir, a) || !realpath(pdir, b) || strcmp(a, b))
		return; /* a copy elsewhere: the store's caps do not apply to it */
	autofree char *mark = gl_xasprintf("%s/%.32s.verified", a, base);
	autoclose int fd = open(mark, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	(void)fd; /* best effort: an unmarked witness is only evicted sooner */
}

int gl_witness_snapshot_load(const char *witness_path, const char *home, const char *sha,
			     jv *slot, struct gl_fail *f)
{
	*slot = jv_invalid();
	const char *sl = strrchr(witness_path, '/');
	autofree char *p =
	    sl ? gl_xasprintf("%.*s/slots/%s.json", (int)(sl - witness_path), witness_path, sha)
	       : gl_xasprintf("slots/%s.json", sha);
	int fd0 = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd0 < 0 && errno == ENOENT && home) { /* content-addressed: any copy will do */
		free(p);
		p = gl_xasprintf("%s/witnesses/slots/%s.json", home, sha);
		fd0 = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	}
	autoclose int fd = fd0;
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		return gl_fail(f, GL_E_MISSING_SNAPSHOT, "slot snapshot %s: %s", sha,
			       fd < 0 ? strerror(errno) : "not a regular file");
	}
	if ((uint64_t)sb.st_size > GL_WITNESS_SNAPSHOT_MAX) { /* before reading it */
		return gl_fail(f, GL_E_TOO_LARGE, "slot snapshot %s: %lld bytes, more than %u", sha,
			       (long long)sb.st_size, GL_WITNESS_SNAPSHOT_MAX);
	}
	autofree char *buf = NULL;
	size_t len = 0;
	if (gl_read_fd_capped(fd, GL_WITNESS_SNAPSHOT_MAX, &buf, &len) < 0) {
		return gl_fail(f, errno == EFBIG ? GL_E_TOO_LARGE : GL_E_MISSING_SNAPSHOT,
			       "slot snapshot %s: %s", sha, strerror(errno));
	}
	unsigned char h[32];
	char hex[65];
	gl_sha256(h, (unsigned char *)buf, len);
	gl_hex(h, 32, hex);
	if (strcmp(hex, sha))
		return gl_fail(f, GL_E_BAD_SNAPSHOT, "slot snapshot %s: its bytes hash to %s", sha,
			       hex);
	jv v = gl_json_parse(buf, len);
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return gl_fail(f, GL_E_BAD_SNAPSHOT, "slot snapshot %s: not a JSON object", sha);
	}
	*slot = v;
	return 0;
}
