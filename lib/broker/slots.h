/* slots.h — per-horizon state slots (paper §IV-E, Definition 3, Lemma 1;
 * SPEC §2 GL_HOME/slots/).
 *
 * Copies are discarded, so a flow-compliant tool keeps state across calls
 * only through the broker, in the slot σ[κ] of its copy's horizon κ, much
 * as a browser keeps cookies per site. A slot is one file per release and
 * horizon:
 *
 *   GL_HOME/slots/<release>/<horizon-id>.json
 *   horizon-id = SHA-256 hex of the canonical JSON of the sorted horizon
 *                array (the public horizon [] has one too)
 *   contents   = {"key":{"value":V,"label":[tags]}, …}
 *
 * The whole slot is delivered when a copy starts; writes go only to the
 * copy's own horizon (the broker picks the slot, never the copy); each entry
 * is stored with L at write time — the join of the writer's view labels,
 * its slot's label and the clearances of the hosts whose replies reached it
 * — so ℓ(σ), the join of the entries' labels, covers everything that flowed
 * into the slot (Lemma 1). A copy's writes are applied when it finishes
 * (result received), atomically (temporary file, fsync, rename) and merged
 * under an exclusive lock with what other processes wrote meanwhile: a
 * crash loses nothing a finished call wrote, and a killed copy leaves no
 * half of its writes.
 *
 * One GL_HOME, many processes (issue 19): a merge at commit alone would let
 * two gl-run processes each read n and both commit n+1. So the broker holds
 * each slot's lock (gl_slot_lock) from the slot's read to the call's end:
 * a slot's read, call and commit are one unit, and calls of the same
 * release and horizon serialise; calls of other releases or horizons never
 * wait. The lock is flock(2) on GL_HOME/slots/<release>/<id>.json.lock (the
 * file the commit always locked; never removed, since <id>.json itself is
 * replaced by rename): it belongs to the open file description, so a
 * process killed while holding it releases it with its descriptors and
 * blocks nobody. docs/design/run.md "One GL_HOME, many processes". */
#ifndef GL_SLOTS_H
#define GL_SLOTS_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/labels.h"

#define GL_SLOT_MAX (48u << 20)  /* bytes of a slot file: an exec workspace of 32 MiB in base64 */
#define GL_SLOT_ENTRIES_MAX 4096

struct gl_slot {
	char *path;            /* owned: GL_HOME/slots/<release>/<id>.json */
	char *dir;             /* owned: its directory */
	jv entries;            /* owned: the slot as read at copy start */
	jv puts;               /* owned: this copy's writes, key -> entry */
	struct gl_labels label; /* ℓ(σ): tags point into entries */
	size_t bytes;          /* serialised size as read, for the bound */
	bool held;             /* the caller holds its lock (gl_slot_locks_held) */
};

/* The slot locks one call holds (gl_slot_lock). */
struct gl_slot_locks {
	size_t n;
	int *fd;           /* owned: one locked descriptor per id */
	char (*id)[65];    /* horizon ids, ascending */
};

/* SHA-256 hex (65 bytes with NUL) of the canonical JSON of the horizon.
 * 0, or -1 with f (bad_slot: a tag canonical JSON refuses). */
int gl_slot_horizon_id(const struct gl_labels *horizon, char out[65], struct gl_fail *f);

/* Open and read the slot of (release, horizon) under home. A missing file
 * is the empty slot. A file that is unreadable, too large, not JSON or of
 * the wrong shape is refused (never silently reset): -1 with f (bad_slot)
 * naming the file. Release with gl_slot_free either way. */
int gl_slot_open(struct gl_slot *s, const char *home, const char *release,
		 const struct gl_labels *horizon, struct gl_fail *f);

/* The slot of a call whose function keeps no state ("state": "none",
 * gl_manifest_stateless; issue 19): empty, with no file, so nothing is
 * read, gl_slot_put refuses every write and gl_slot_commit writes nothing.
 * Its label is empty: nothing of any slot flows into the copy. Release
 * with gl_slot_free. */
void gl_slot_none(struct gl_slot *s);

/* The whole slot for the copy's call message (owned): entries as stored,
 * with this copy's own writes so far applied on top. */
jv gl_slot_view(const struct gl_slot *s);

/* σ[key] ← (value, L) (Algorithm 1 line 23). Consumes value. -1 with f
 * (protocol: the copy asked too much) when the slot would exceed
 * GL_SLOT_MAX or GL_SLOT_ENTRIES_MAX, or is gl_slot_none's. */
int gl_slot_put(struct gl_slot *s, const char *key, jv value, const struct gl_labels *L,
		struct gl_fail *f);

/* Lock the slots of release for the n horizons, all or none: their ids
 * deduplicated and taken in ascending order, the one order every process
 * uses, so two calls that each need several slots never wait for each other
 * in a cycle (no deadlock). A slot held by another process is waited for
 * until deadline_ns (gl_mono_ns scale), never longer: then -1 with errno
 * ETIMEDOUT and f (slot_busy) naming the slot. Other failures: -1, errno,
 * f (bad_slot).
 * Under GL_TESTING, GL_TEST_SLOTLOCK_OFF=1 takes no lock (the switch that
 * shows the lost update, tests/concurrency.bats). Free with gl_slot_unlock
 * either way. */
int gl_slot_lock(struct gl_slot_locks *L, const char *home, const char *release,
		 const struct gl_labels *const *horizons, size_t n, int64_t deadline_ns,
		 struct gl_fail *f);

/* Is s (opened under the same home and release) one of the slots L holds? */
bool gl_slot_locks_held(const struct gl_slot_locks *L, const struct gl_slot *s);

/* Release every lock of L (closing the descriptors releases them). */
void gl_slot_unlock(struct gl_slot_locks *L);

/* Apply this copy's writes to the file: lock (unless s->held), re-read,
 * merge, write atomically, unlock. Nothing to do when the copy wrote
 * nothing. 0, or -1 with f (io). */
int gl_slot_commit(struct gl_slot *s, struct gl_fail *f);

void gl_slot_free(struct gl_slot *s);

#endif
