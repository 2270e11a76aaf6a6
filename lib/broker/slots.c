/* slots.c — per-horizon state slots; see slots.h. */
#define _GNU_SOURCE
#include "broker/slots.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/sha.h"
#include "json/json.h"
#include "json/msg.h"
#include "core/util.h"

int gl_slot_horizon_id(const struct gl_labels *horizon, char out[65], struct gl_fail *f)
{
	jv a = gl_labels_to_jv(horizon); /* sorted and unique already */
	autobuf struct gl_buf b = {0};
	autofail struct gl_fail why = {0};
	/* tags are validated strings, so this does not fail; if it did, the
	 * slot is refused (fail closed), never named by a partial id */
	int rc = gl_canon_dump(&b, a, &why);
	jv_free(a);
	if (rc < 0) {
		out[0] = 0;
		return gl_fail(f, GL_E_BAD_SLOT, "horizon: %s", gl_fail_detail(&why));
	}
	unsigned char h[32];
	gl_sha256(h, (const unsigned char *)b.data, b.len);
	gl_hex(h, 32, out);
	return 0;
}

/* Validate a slot document (borrowed) and join its labels into *label
 * (tags point into doc). 0, or -1 with f (bad_slot; no file name). */
static int check_entries(jv doc, struct gl_labels *label, struct gl_fail *f)
{
	if (jv_get_kind(doc) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_BAD_SLOT, "not a JSON object");
	if (jv_object_length(jv_copy(doc)) > GL_SLOT_ENTRIES_MAX)
		return gl_fail(f, GL_E_BAD_SLOT, "more than %d entries", GL_SLOT_ENTRIES_MAX);
	int r = 0;
	jv_object_foreach(doc, k, v)
	{
		const char *key = jv_string_value(k);
		jv val = jv_invalid(), lb = jv_invalid();
		int nfield = 0;
		if (jv_get_kind(v) == JV_KIND_OBJECT) {
			nfield = jv_object_length(jv_copy(v));
			val = jv_object_get(jv_copy(v), jv_string("value"));
			lb = jv_object_get(jv_copy(v), jv_string("label"));
		}
		struct gl_labels l = {0}, u = {0};
		autofail struct gl_fail why = {0};
		if (r == 0 && (nfield != 2 || !jv_is_valid(val) || !jv_is_valid(lb))) {
			autofree char *q = gl_quote(key, strlen(key));
			r = gl_fail(f, GL_E_BAD_SLOT, "entry %s: not {\"value\":…,\"label\":[…]}", q);
		} else if (r == 0 && gl_labels_from_jv(&l, lb, &why) < 0) {
			autofree char *q = gl_quote(key, strlen(key));
			r = gl_fail(f, GL_E_BAD_SLOT, "entry %s: label %s", q,
				    gl_fail_detail(&why));
		} else if (r == 0) {
			gl_labels_union(&u, label, &l);
			gl_labels_free(label);
			*label = u;
		}
		gl_labels_free(&l);
		jv_free(val);
		jv_free(lb); /* doc holds the tag strings */
		jv_free(k);
		jv_free(v);
	}
	return r;
}

int gl_slot_open(struct gl_slot *s, const char *home, const char *release,
		 const struct gl_labels *horizon, struct gl_fail *f)
{
	memset(s, 0, sizeof *s);
	s->entries = jv_object();
	s->puts = jv_object();
	char id[65];
	if (gl_slot_horizon_id(horizon, id, f) < 0)
		return -1;
	s->dir = gl_xasprintf("%s/slots/%s", home, release);
	s->path = gl_xasprintf("%s/%s.json", s->dir, id);
	autofree char *buf = NULL;
	size_t len = 0;
	if (gl_read_file_capped(s->path, GL_SLOT_MAX, &buf, &len) < 0) {
		if (errno == ENOENT)
			return 0; /* an empty slot */
		return gl_fail(f, GL_E_BAD_SLOT, "slot %s: %s", s->path,
			       errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
	}
	jv doc = gl_json_parse(buf, len);
	if (!jv_is_valid(doc)) {
		jv msg = jv_invalid_get_msg(doc);
		gl_fail(f, GL_E_BAD_SLOT, "slot %s: %s", s->path, jv_string_value(msg));
		jv_free(msg);
		return -1;
	}
	jv_free(s->entries);
	s->entries = doc;
	s->bytes = len;
	autofail struct gl_fail why = {0};
	if (check_entries(s->entries, &s->label, &why) < 0)
		return gl_fail(f, GL_E_BAD_SLOT, "slot %s: %s", s->path, gl_fail_detail(&why));
	return 0;
}

void gl_slot_none(struct gl_slot *s)
{
	memset(s, 0, sizeof *s);
	s->entries = jv_object();
	s->puts = jv_object();
}

jv gl_slot_view(const struct gl_slot *s)
{
	jv out = jv_copy(s->entries);
	jv_object_foreach(s->puts, k, v) out = jv_object_set(out, k, v);
	return out;
}

/* A put the slot cannot take: the copy asked for more than a slot holds,
 * it broke the protocol. */
int gl_slot_put(struct gl_slot *s, const char *key, jv value, const struct gl_labels *L,
		struct gl_fail *f)
{
	if (!s->path) { /* gl_slot_none: no write ever lands */
		jv_free(value);
		return gl_fail(f, GL_E_PROTOCOL,
			       "the function declares \"state\": \"none\" (its manifest): "
			       "it keeps no state");
	}
	jv entry = JV_OBJECT(jv_string("value"), value, jv_string("label"), gl_labels_to_jv(L));
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, entry);
	size_t add = b.len + strlen(key) + 4;
	jv k = jv_string(key);
	bool known = jv_object_has(jv_copy(s->entries), jv_copy(k)) ||
		     jv_object_has(jv_copy(s->puts), jv_copy(k));
	size_t n = (size_t)jv_object_length(jv_copy(s->entries)) +
		   (size_t)jv_object_length(jv_copy(s->puts));
	/* An entry of the slot as read that this put replaces no longer counts
	 * (an exec copy's workspace, "gl.files", is rewritten on every call). */
	size_t drop = 0;
	if (!jv_object_has(jv_copy(s->puts), jv_copy(k)) &&
	    jv_object_has(jv_copy(s->entries), jv_copy(k))) {
		autobuf struct gl_buf ob = {0};
		jv old = jv_object_get(jv_copy(s->entries), jv_copy(k));
		gl_json_dump(&ob, old);
		jv_free(old);
		drop = ob.len + strlen(key) + 4;
	}
	if (drop > s->bytes)
		drop = s->bytes;
	if (s->bytes - drop + add > GL_SLOT_MAX || (!known && n >= GL_SLOT_ENTRIES_MAX)) {
		jv_free(k);
		jv_free(entry);
		return gl_fail(f, GL_E_PROTOCOL, "the slot would exceed %u bytes or %d entries",
			       GL_SLOT_MAX, GL_SLOT_ENTRIES_MAX);
	}
	/* Otherwise counted conservatively: an entry this copy overwrites
	 * again keeps its earlier bytes counted. */
	s->bytes = s->bytes - drop + add;
	s->puts = jv_object_set(s->puts, k, entry);
	return 0;
}

/* ---- the per-slot lock (issue 19) ---------------------------------------- */

static int cmp_id(const void *a, const void *b) { return strcmp(a, b); }

/* flock(fd, LOCK_EX) waited for until deadline_ns. flock has no timeout, so
 * a held lock is polled (LOCK_NB) with a backoff of 1 to 8 ms: the
 * uncontended case is one system call, and a wait ends within 8 ms of the
 * holder's release or at the deadline, never later. 0, or -1 with errno
 * (ETIMEDOUT at the deadline). */
static int lock_until(int fd, int64_t deadline_ns)
{
	int64_t nap = 1000000;
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -1;
		int64_t left = deadline_ns - gl_mono_ns();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		int64_t t = nap < left ? nap : left;
		struct timespec ts = {.tv_sec = (time_t)(t / 1000000000), .tv_nsec = (long)(t % 1000000000)};
		nanosleep(&ts, NULL); /* EINTR: the loop checks again */
		if (nap < 8000000)
			nap *= 2;
	}
}

/* The order locks are taken in: ascending horizon id, each once, the one
 * order every process uses, so two calls that lock A then B never meet one
 * that locks B then A (no deadlock). Under GL_TESTING,
 * GL_TEST_SLOTLOCK_UNSORTED=1 keeps the plan's order instead (the deadlock
 * this prevents, tests/concurrency.bats). Returns the count kept. */
static size_t lock_order(char (*id)[65], size_t n)
{
	bool sorted = true;
#ifdef GL_TESTING
	const char *uns = getenv("GL_TEST_SLOTLOCK_UNSORTED");
	sorted = !(uns && !strcmp(uns, "1"));
#endif
	if (sorted)
		qsort(id, n, sizeof *id, cmp_id);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < m && strcmp(id[j], id[i]))
			j++;
		if (j == m)
			memmove(id[m++], id[i], sizeof *id);
	}
	return m;
}

/* GL_TESTING, GL_TEST_SLOTLOCK_PAUSE_MS: a pause between a call's locks,
 * which makes the unsorted order's deadlock likely. 0 otherwise. */
static long lock_pause_ms(void)
{
	long ms = 0;
#ifdef GL_TESTING
	const char *v = getenv("GL_TEST_SLOTLOCK_PAUSE_MS");
	ms = v ? strtol(v, NULL, 10) : 0;
#endif
	return ms < 0 || ms > 10000 ? 0 : ms;
}

int gl_slot_lock(struct gl_slot_locks *L, const char *home, const char *release,
		 const struct gl_labels *const *horizons, size_t n, int64_t deadline_ns,
		 struct gl_fail *f)
{
	memset(L, 0, sizeof *L);
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_SLOTLOCK_OFF");
	if (off && !strcmp(off, "1"))
		return 0; /* the lost update returns: read at copy start, merge at commit */
#endif
	if (n == 0)
		return 0;
	L->id = gl_xcalloc(n, sizeof *L->id);
	L->fd = gl_xcalloc(n, sizeof *L->fd);
	for (size_t i = 0; i < n; i++)
		if (gl_slot_horizon_id(horizons[i], L->id[i], f) < 0) {
			free(L->id);
			free(L->fd);
			memset(L, 0, sizeof *L);
			errno = EINVAL;
			return -1;
		}
	size_t m = lock_order(L->id, n);
	long pause_ms = lock_pause_ms();
	autofree char *dir = gl_xasprintf("%s/slots/%s", home, release);
	if (gl_mkdir_p(dir, 0700) < 0) {
		int e = errno;
		gl_fail_errno(f, GL_E_BAD_SLOT, "slot directory %s", dir);
		errno = e == ETIMEDOUT ? EIO : e;
		return -1;
	}
	for (size_t i = 0; i < m; i++) {
		if (i && pause_ms) {
			struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000};
			nanosleep(&ts, NULL);
		}
		autofree char *lock = gl_xasprintf("%s/%s.json.lock", dir, L->id[i]);
		int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 || lock_until(fd, deadline_ns) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			gl_slot_unlock(L);
			gl_fail(f, e == ETIMEDOUT ? GL_E_SLOT_BUSY : GL_E_BAD_SLOT,
				"slot lock %s: %s", lock,
				e == ETIMEDOUT ? "held by another process past the call's deadline"
					       : strerror(e));
			errno = e; /* for the caller: ETIMEDOUT is slot_busy */
			return -1;
		}
		L->fd[L->n++] = fd;
	}
	return 0;
}

bool gl_slot_locks_held(const struct gl_slot_locks *L, const struct gl_slot *s)
{
	const char *base = s->path ? strrchr(s->path, '/') : NULL;
	if (!base)
		return false;
	for (size_t i = 0; i < L->n; i++)
		if (!strncmp(base + 1, L->id[i], 64) && !strcmp(base + 65, ".json"))
			return true;
	return false;
}

void gl_slot_unlock(struct gl_slot_locks *L)
{
	for (size_t i = 0; i < L->n; i++)
		close(L->fd[i]); /* the lock goes with its open file description */
	free(L->fd);
	free(L->id);
	memset(L, 0, sizeof *L);
}

/* ---- commit -------------------------------------------------------------- */

int gl_slot_commit(struct gl_slot *s, struct gl_fail *f)
{
	if (!s->path || jv_object_length(jv_copy(s->puts)) == 0)
		return 0;
	if (gl_mkdir_p(s->dir, 0700) < 0)
		return gl_fail_errno(f, GL_E_IO, "slot directory %s", s->dir);
	autofree char *lock = gl_xasprintf("%s.lock", s->path);
	/* Held since the slot's read (gl_slot_lock): locking it again through
	 * a second open file description would wait for ourselves. */
	autoclose int fd = -1;
	if (!s->held) {
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return gl_fail_errno(f, GL_E_IO, "slot lock %s", lock);
		while (flock(fd, LOCK_EX) < 0)
			if (errno != EINTR)
				return gl_fail_errno(f, GL_E_IO, "slot lock %s", lock);
	}
	gl_atomic_write_stale(s->path); /* the slot's lock is held: any is stale */
	/* Re-read under the lock: another gl-run may have written meanwhile. */
	jv cur = jv_object();
	autofree char *buf = NULL;
	size_t len = 0;
	if (gl_read_file_capped(s->path, GL_SLOT_MAX, &buf, &len) == 0) {
		jv_free(cur);
		cur = gl_json_parse(buf, len);
		struct gl_labels ignored = {0};
		autofail struct gl_fail why = {0};
		if (!jv_is_valid(cur) || check_entries(cur, &ignored, &why) < 0) {
			gl_labels_free(&ignored);
			jv_free(cur);
			return gl_fail(f, GL_E_IO, "slot %s changed into something invalid: %s",
				       s->path, why.detail ? why.detail : "not JSON");
		}
		gl_labels_free(&ignored);
	} else if (errno != ENOENT) {
		jv_free(cur);
		return gl_fail_errno(f, GL_E_IO, "slot %s", s->path);
	}
	jv_object_foreach(s->puts, k, v) cur = jv_object_set(cur, k, v);
	autobuf struct gl_buf out = {0};
	gl_json_dump(&out, cur);
	size_t n = (size_t)jv_object_length(jv_copy(cur));
	jv_free(cur);
	/* ... or the node limit every reader of the slot applies (lib/json/json.h):
	 * a slot written past it would be refused, bad_slot, ever after. */
	if (out.len > GL_SLOT_MAX || n > GL_SLOT_ENTRIES_MAX ||
	    (!gl_json_nodes_off() &&
	     gl_json_nodes(out.data, out.len, GL_JSON_NODES_MAX) > GL_JSON_NODES_MAX))
		return gl_fail(f, GL_E_IO,
			       "slot %s would exceed %u bytes, %d entries or %u JSON nodes", s->path,
			       GL_SLOT_MAX, GL_SLOT_ENTRIES_MAX, GL_JSON_NODES_MAX);
	gl_buf_addc(&out, '\n');
	if (gl_atomic_write(s->path, out.data, out.len, 0600) < 0)
		return gl_fail_errno(f, GL_E_IO, "slot %s", s->path);
	jv_free(s->puts);
	s->puts = jv_object();
	return 0; /* closing fd (if taken here) releases the lock */
}

void gl_slot_free(struct gl_slot *s)
{
	free(s->path);
	free(s->dir);
	jv_free(s->entries);
	jv_free(s->puts);
	gl_labels_free(&s->label);
	memset(s, 0, sizeof *s);
}
