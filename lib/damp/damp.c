/* damp.c — the dampening rule (Appendix B-E, Table XIV) and its state file;
 * see damp.h. */
#define _GNU_SOURCE
#include "damp/damp.h"
#include "damp/damp_once.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "json/json.h"
#include "core/util.h"

/* ---- parameters ------------------------------------------------------ */

void gl_damp_params_default(struct gl_damp_params *p)
{
	p->half_life = GL_DAMP_DEFAULT_HALF_LIFE;
	p->weight = GL_DAMP_DEFAULT_WEIGHT;
	p->suppress = GL_DAMP_DEFAULT_SUPPRESS;
	p->reuse = GL_DAMP_DEFAULT_REUSE;
}

const char *gl_damp_params_check(const struct gl_damp_params *p)
{
	if (!isfinite(p->half_life) || !(p->half_life > 0) || p->half_life > GL_DAMP_MAX_HALF_LIFE)
		return "--half-life must be a number in (0, 1e9]";
	if (!isfinite(p->weight) || !(p->weight >= 0) || p->weight > GL_DAMP_MAX_MAGNITUDE)
		return "--weight must be a number in [0, 1e12]";
	if (!isfinite(p->reuse) || !(p->reuse > 0))
		return "--reuse must be a number greater than 0";
	if (!isfinite(p->suppress) || p->suppress > GL_DAMP_MAX_MAGNITUDE)
		return "--suppress must be a number no greater than 1e12";
	if (!(p->reuse < p->suppress))
		return "--reuse must be less than --suppress (0 < R < S)";
	return NULL;
}

double gl_damp_lambda(const struct gl_damp_params *p) { return exp2(-1.0 / p->half_life); }

/* ---- events (Table XIV) ----------------------------------------------- */

static const char *const event_names[] = {
	[GL_DAMP_VERIFIED] = "verified",
	[GL_DAMP_VERIFIED_UNDECLARED] = "verified_undeclared",
	[GL_DAMP_UNVERIFIED] = "unverified",
	[GL_DAMP_DECLARED_BROKEN] = "declared_broken",
};

int gl_damp_event_parse(const char *name, enum gl_damp_event *out)
{
	for (size_t i = 0; i < sizeof event_names / sizeof *event_names; i++)
		if (!strcmp(name, event_names[i])) {
			*out = (enum gl_damp_event)i;
			return 0;
		}
	return -1;
}

double gl_damp_event_weight(const struct gl_damp_params *p, enum gl_damp_event e)
{
	/* Table XIV: an item witness from a release that declared determinism,
	 * and a broken determinism declaration, carry the big weight (2000 =
	 * S at the operating point, "adds 2000 and suppresses it at once",
	 * Section IV-F); every other event carries w. */
	switch (e) {
	case GL_DAMP_VERIFIED:
	case GL_DAMP_DECLARED_BROKEN:
		return p->suppress;
	case GL_DAMP_VERIFIED_UNDECLARED:
	case GL_DAMP_UNVERIFIED:
		break;
	}
	return p->weight;
}

bool gl_damp_hash_ok(const char *s)
{
	size_t i;
	for (i = 0; s[i]; i++)
		if (i >= 64 || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

/* ---- the state ------------------------------------------------------- */

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gl_damp_entry *)a)->release,
		      ((const struct gl_damp_entry *)b)->release);
}

/* Index of release, or -(insertion point)-1. */
static ptrdiff_t find(const struct gl_damp_state *st, const char *release)
{
	size_t lo = 0, hi = st->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(st->v[mid].release, release);
		if (c == 0)
			return (ptrdiff_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(ptrdiff_t)lo - 1;
}

bool gl_damp_is_suppressed(const struct gl_damp_state *st, const char *release)
{
	ptrdiff_t i = find(st, release);
	return i >= 0 && st->v[i].suppressed;
}

double gl_damp_penalty(const struct gl_damp_state *st, const char *release)
{
	ptrdiff_t i = find(st, release);
	return i >= 0 ? st->v[i].penalty : 0.0;
}

void gl_damp_free(struct gl_damp_state *st)
{
	if (!st)
		return;
	free(st->v);
	free(st);
}

static struct gl_damp_state *state_new(void) { return gl_xcalloc(1, sizeof(struct gl_damp_state)); }

/* Validate one "releases" member; NULL or a malloc'd message. Borrows val. */
static char *load_entry(struct gl_damp_state *st, const char *key, jv val)
{
	if (!gl_damp_hash_ok(key))
		return gl_xasprintf("release key is not 64 lowercase hex digits");
	if (jv_get_kind(val) != JV_KIND_OBJECT || jv_object_length(jv_copy(val)) != 2)
		return gl_xasprintf("releases.%.64s must be {\"penalty\":P,\"suppressed\":bool}", key);
	jv pen = gl_json_get(val, "penalty");
	double p = jv_get_kind(pen) == JV_KIND_NUMBER ? jv_number_value(pen) : NAN;
	jv_free(pen);
	int sup = gl_json_get_bool(val, "suppressed", -1);
	if (!isfinite(p) || p < 0)
		return gl_xasprintf("releases.%.64s.penalty must be a finite number >= 0", key);
	if (sup < 0)
		return gl_xasprintf("releases.%.64s.suppressed must be true or false", key);
	struct gl_damp_entry *e = &st->v[st->n++];
	memcpy(e->release, key, 65);
	e->penalty = p;
	e->suppressed = sup;
	return NULL;
}

/* Validate the parsed document (borrowed) into st; NULL or a message. */
static char *load_doc(struct gl_damp_state *st, jv doc)
{
	if (jv_get_kind(doc) != JV_KIND_OBJECT || jv_object_length(jv_copy(doc)) != 3)
		return gl_xasprintf("expected {\"format\",\"releases\",\"version\"}");
	const char *fmt = gl_json_get_str(doc, "format");
	int64_t ver;
	if (!fmt || strcmp(fmt, GL_DAMP_FORMAT))
		return gl_xasprintf("format is not \"%s\"", GL_DAMP_FORMAT);
	if (gl_json_get_int(doc, "version", &ver) < 0 || ver != GL_DAMP_VERSION)
		return gl_xasprintf("version is not %d", GL_DAMP_VERSION);
	jv rel = gl_json_get(doc, "releases");
	char *err = NULL;
	if (jv_get_kind(rel) != JV_KIND_OBJECT) {
		err = gl_xasprintf("releases is not an object");
	} else if ((size_t)jv_object_length(jv_copy(rel)) > GL_DAMP_MAX_RELEASES) {
		err = gl_xasprintf("more than %u releases", GL_DAMP_MAX_RELEASES);
	} else {
		st->cap = (size_t)jv_object_length(jv_copy(rel));
		st->v = gl_xcalloc(st->cap ? st->cap : 1, sizeof *st->v);
		jv_object_foreach(rel, k, v)
		{
			if (!err)
				err = load_entry(st, jv_string_value(k), v);
			jv_free(k);
			jv_free(v);
		}
		qsort(st->v, st->n, sizeof *st->v, entry_cmp);
	}
	jv_free(rel);
	return err;
}

struct gl_damp_state *gl_damp_load(const char *path, struct gl_fail *f)
{
	autofree char *buf = NULL;
	size_t len = 0;
	if (gl_read_file_capped(path, GL_DAMP_STATE_MAX, &buf, &len) < 0) {
		if (errno == ENOENT)
			return state_new();
		if (errno == EFBIG)
			gl_fail_set(f, GL_E_DAMP, "%s: state file larger than %u bytes", path,
				    GL_DAMP_STATE_MAX);
		else
			gl_fail_set(f, GL_E_DAMP, "%s: %s", path, strerror(errno));
		return NULL;
	}
	jv doc = gl_json_parse(buf, len);
	if (!jv_is_valid(doc)) {
		jv msg = jv_invalid_get_msg(doc);
		gl_fail_set(f, GL_E_DAMP, "%s: corrupt state file (not JSON: %s); refusing to reset it",
			    path, jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "?");
		jv_free(msg);
		return NULL;
	}
	struct gl_damp_state *st = state_new();
	autofree char *why = load_doc(st, doc);
	jv_free(doc);
	if (why) {
		gl_fail_set(f, GL_E_DAMP, "%s: corrupt state file (%s); refusing to reset it", path,
			    why);
		gl_damp_free(st);
		return NULL;
	}
	return st;
}

int gl_damp_save(const struct gl_damp_state *st, const char *path)
{
	/* Keys in byte order ("format" < "releases" < "version"), entries
	 * sorted: the same state always gives the same bytes. */
	autobuf struct gl_buf b = {0};
	gl_buf_adds(&b, "{\"format\":\"" GL_DAMP_FORMAT "\",\"releases\":{");
	for (size_t i = 0; i < st->n; i++) {
		const struct gl_damp_entry *e = &st->v[i];
		gl_buf_printf(&b, "%s\"%s\":{\"penalty\":", i ? "," : "", e->release);
		gl_json_dump(&b, jv_number(e->penalty));
		gl_buf_printf(&b, ",\"suppressed\":%s}", e->suppressed ? "true" : "false");
	}
	gl_buf_printf(&b, "},\"version\":%d}\n", GL_DAMP_VERSION);
	return gl_atomic_write(path, b.data, b.len, 0600);
}

/* ---- records --------------------------------------------------------- */

int gl_damp_classify(jv rec, struct gl_damp_record *out, struct gl_fail *f)
{
	out->key[0] = '\0';
	out->untrusted = false;
	if (jv_get_kind(rec) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_BAD_RECORD, "record is not a JSON object");
	jv w = gl_json_get(rec, "witness");
	bool has_witness = jv_is_valid(w);
	bool witness_ok = jv_get_kind(w) == JV_KIND_STRING;
	if (witness_ok) /* a verdict's evidence is counted once (damp_once.h) */
		gl_damp_once_key("witness", jv_string_value(w),
				 (size_t)jv_string_length_bytes(jv_copy(w)), out->key);
	jv_free(w);
	jv ev = gl_json_get(rec, "event");
	bool has_event = jv_is_valid(ev);
	jv_free(ev);
	jv okv = gl_json_get(rec, "ok");
	jv_kind ok_kind = jv_get_kind(okv);
	jv_free(okv);
	jv idv = gl_json_get(rec, "id"), modev = gl_json_get(rec, "mode");
	bool is_call = !has_witness && !has_event &&
		       (ok_kind != JV_KIND_INVALID || jv_is_valid(idv) || jv_is_valid(modev));
	jv_free(idv);
	jv_free(modev);

	if (has_witness) {
		/* A verdict of gl-replay (SPEC §7). */
		const char *name = gl_json_get_str(rec, "event");
		if (!witness_ok)
			return gl_fail(f, GL_E_BAD_RECORD, "verdict: \"witness\" is not a string");
		if (!name)
			return gl_fail(f, GL_E_BAD_RECORD, "verdict: \"event\" missing or not a string");
		if (gl_damp_event_parse(name, &out->event) < 0) {
			autofree char *q = gl_quote(name, strlen(name));
			return gl_fail(f, GL_E_UNKNOWN_EVENT,
				       "verdict: event %s is not one of verified, "
				       "verified_undeclared, unverified, declared_broken (Table XIV)",
				       q);
		}
		jv tv = gl_json_get(rec, "trusted");
		jv_kind tk = jv_get_kind(tv);
		jv_free(tv);
		if (tk != JV_KIND_INVALID && tk != JV_KIND_TRUE && tk != JV_KIND_FALSE)
			return gl_fail(f, GL_E_BAD_RECORD, "verdict: \"trusted\" is not true or false");
		out->untrusted = tk == JV_KIND_FALSE;
		out->kind = GL_DAMP_VERDICT;
	} else if (is_call) {
		/* A result record of gl-run (SPEC §6), refused calls included. */
		if (ok_kind != JV_KIND_INVALID && ok_kind != JV_KIND_TRUE && ok_kind != JV_KIND_FALSE)
			return gl_fail(f, GL_E_BAD_RECORD, "result record: \"ok\" is not true or false");
		out->kind = GL_DAMP_CALL;
	} else {
		return gl_fail(f, GL_E_BAD_RECORD,
			       "neither a result record of gl-run (\"release\" with \"id\", "
			       "\"mode\" or \"ok\") nor a verdict of gl-replay (\"witness\", "
			       "\"release\", \"event\")");
	}
	const char *rel = gl_json_get_str(rec, "release");
	if (!rel)
		return gl_fail(f, GL_E_BAD_RELEASE, "\"release\" missing or not a string%s",
			       out->kind == GL_DAMP_CALL ? " (an upstream error record?)" : "");
	if (!gl_damp_hash_ok(rel)) {
		autofree char *q = gl_quote(rel, strlen(rel));
		return gl_fail(f, GL_E_BAD_RELEASE,
			       "release %s is not 64 lowercase hex digits (SHA-256)", q);
	}
	memcpy(out->release, rel, 65);
	return 0;
}

/* Hysteresis (Appendix B-E): suppressed once P >= S, usable again once
 * P < R, unchanged in between. */
static void settle(struct gl_damp_entry *e, const struct gl_damp_params *p)
{
	if (e->penalty >= p->suppress)
		e->suppressed = true;
	else if (e->penalty < p->reuse)
		e->suppressed = false;
}

int gl_damp_apply(struct gl_damp_state *st, const struct gl_damp_params *p,
		  const struct gl_damp_record *r, double *penalty, bool *suppressed)
{
	/* A release never seen (or an update: a new hash) starts at P = 0. */
	struct gl_damp_entry fresh = {.penalty = 0, .suppressed = false};
	memcpy(fresh.release, r->release, 65);
	ptrdiff_t i = find(st, r->release);
	struct gl_damp_entry *e = i >= 0 ? &st->v[i] : &fresh;

	if (r->kind == GL_DAMP_CALL)
		e->penalty *= gl_damp_lambda(p); /* every call decays: P <- lambda P */
	else
		e->penalty += gl_damp_event_weight(p, r->event); /* its event adds */
	settle(e, p);
	*penalty = e->penalty;
	*suppressed = e->suppressed;

	bool keep = e->penalty > 0 || e->suppressed;
	if (i >= 0 && !keep) {
		memmove(&st->v[i], &st->v[i + 1], (st->n - (size_t)i - 1) * sizeof *st->v);
		st->n--;
	} else if (i < 0 && keep) {
		if (st->n >= GL_DAMP_MAX_RELEASES) {
			errno = ENOSPC;
			return -1;
		}
		size_t at = (size_t)(-i - 1);
		if (st->n == st->cap) {
			st->cap = st->cap ? 2 * st->cap : 16;
			st->v = gl_xrealloc(st->v, st->cap * sizeof *st->v);
		}
		memmove(&st->v[at + 1], &st->v[at], (st->n - at) * sizeof *st->v);
		st->v[at] = fresh;
		st->n++;
	}
	return 0;
}

/* ---- the locked store ------------------------------------------------ */

/* 0 locked, -1 with f; 1 (GL_TESTING, GL_TEST_DAMPLOCK_OFF=1) not locked. */
static int lock_ex(struct gl_damp_store *s, struct gl_fail *f)
{
	int rc;
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_DAMPLOCK_OFF");
	if (off && !strcmp(off, "1"))
		return 1; /* tests/concurrency.bats: the lost update returns */
#endif
	while ((rc = flock(s->lock_fd, LOCK_EX)) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return gl_fail(f, GL_E_IO, "%s.lock: flock: %s", s->path, strerror(errno));
	return rc;
}

int gl_damp_store_open(struct gl_damp_store *s, const char *path, struct gl_fail *f)
{
	s->path = gl_xstrdup(path);
	s->st = NULL;
	autofree char *lock = gl_xasprintf("%s.lock", path);
	s->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lock_fd < 0)
		return gl_fail(f, GL_E_IO, "%s: %s", lock, strerror(errno));
	int rc = lock_ex(s, f);
	if (rc < 0)
		return -1;
	if (rc == 0) { /* only under the lock: unlocked, another writer's file is live */
		gl_atomic_write_stale(path); /* under the lock: any temporary is stale */
		autofree char *counted = gl_xasprintf("%s.counted", path);
		gl_atomic_write_stale(counted);
	}
	flock(s->lock_fd, LOCK_UN);
	return 0;
}

int gl_damp_store_begin(struct gl_damp_store *s, struct gl_fail *f)
{
	if (lock_ex(s, f) < 0)
		return -1;
	gl_damp_free(s->st);
	s->st = gl_damp_load(s->path, f);
	if (!s->st) {
		flock(s->lock_fd, LOCK_UN);
		f->code = GL_E_IO; /* gl-damp's own state: a usage error, exit 2 */
		return -1;
	}
	return 0;
}

int gl_damp_store_save(struct gl_damp_store *s, struct gl_fail *f)
{
	int rc = gl_damp_save(s->st, s->path);
	if (rc < 0)
		gl_fail_set(f, GL_E_IO, "%s: writing state: %s", s->path, strerror(errno));
	return rc;
}

void gl_damp_store_abort(struct gl_damp_store *s) { flock(s->lock_fd, LOCK_UN); }

void gl_damp_store_close(struct gl_damp_store *s)
{
	gl_damp_free(s->st);
	s->st = NULL;
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	s->lock_fd = -1;
	free(s->path);
	s->path = NULL;
}
