/* witness_store.h — bounded evidence (issue 15; paper §IV-F, Definition 6;
 * docs/witness.md "Slot snapshots, caps and pruning").
 *
 * gl-run writes each witness record as GL_HOME/witnesses/<id>.json, and
 * beside it <id>.idx (one line: its release, and the snapshots it names
 * in this store), so pruning never parses a record. A version 5 record
 * carries its slot snapshots (witness_snap.h) and names none here. A
 * version 4 record (or the test build's GL_TEST_WITNESS_STORE) names each
 * distinct slot snapshot (the slot's JSON text exactly as the broker
 * serialised it) as one content-addressed file
 *
 *   GL_HOME/witnesses/slots/<sha256 of those bytes>.json
 *
 * shared by every witness that names it, written atomically. There are no
 * reference counts: a snapshot no witness names any more is removed by the
 * same pruning that removes witnesses.
 *
 * Caps, enforced under an exclusive lock (witnesses/.lock) when a witness
 * is written: the bytes of a release's witnesses (records, their .idx and
 * the distinct snapshots they name) at most caps->release; all witnesses'
 * at most caps->total; at most GL_WITNESS_FILES_MAX records. Over a cap,
 * witnesses of the same release are removed first, then any: in each pass
 * unverified witnesses before verified ones, oldest (file mtime) first
 * within each class. "Verified" is recorded by gl-replay
 * (gl_witness_mark_verified): an empty <id>.verified beside a record it
 * found an item witness (Theorem 2); a witness not replayed yet, or whose
 * replay did not verify, is unverified. A single witness larger than min(caps->release, caps->total) is
 * not written (too_large). */
#ifndef GL_WITNESS_STORE_H
#define GL_WITNESS_STORE_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fail.h"

#define GL_WITNESS_CAP_MB_DEFAULT 1024        /* gl-run --witness-cap-mb */
#define GL_WITNESS_RELEASE_CAP_MB_DEFAULT 256 /* gl-run --witness-release-cap-mb */
#define GL_WITNESS_CAP_MB_MAX (1u << 20)      /* 1 TiB */
#define GL_WITNESS_FILES_MAX 4096             /* witness records kept */
#define GL_WITNESS_SNAPSHOT_MAX (64u << 20)   /* bytes of one snapshot (GL_MSG_MAX) */
#define GL_WITNESS_TOO_LARGE_TEXT "too_large: the witness is larger than the per-witness cap"

struct gl_witness_caps {
	uint64_t total, release; /* bytes; 0: the default */
};

/* One slot snapshot: its JSON text and the SHA-256 of those bytes. */
struct gl_witness_snap {
	char sha[65];
	const char *text;
	size_t len;
};

/* GL_TESTING with GL_TEST_WITNESS_INLINE=1: the landed behaviour (slots
 * embedded in every record, version 2, no cap, no pruning). */
bool gl_witness_inline(void);
/* GL_TESTING with GL_TEST_WITNESS_STORE=1: the behaviour before witnesses
 * carried their snapshots (version 4: snapshots only in this store, so a
 * witness moved alone cannot be replayed). */
bool gl_witness_store_snapshots(void);
/* GL_TESTING with GL_TEST_WITNESS_REPLIES_DROP=1: reply text past
 * GL_WITNESS_REPLIES_MAX is dropped (the witness incomplete), as before
 * version 5 carried it by hash. */
bool gl_witness_replies_dropped(void);

/* Write record rec (len bytes) as home/witnesses/<id>.json with its .idx
 * and the snapshots it names, pruning first (above). 0 with *path
 * (malloc'd); -1 with f: too_large (*too_large set) when the witness alone
 * exceeds the per-witness cap (nothing written then), else io. */
int gl_witness_store(const char *home, const char *id, const char *release, const char *rec,
		     size_t len, const struct gl_witness_snap *snap, size_t nsnap,
		     const struct gl_witness_caps *caps, char **path, bool *too_large,
		     struct gl_fail *f);

/* gl-replay found the witness at witness_path an item witness: mark it
 * verified (<id>.verified) when it is a record of home/witnesses, so that
 * pruning keeps it after the unverified ones. Best effort, never fails. */
void gl_witness_mark_verified(const char *home, const char *witness_path);

/* The snapshot sha named by the version 3 or 4 witness at witness_path,
 * from the slots/ directory beside it, else (a witness copied or edited
 * elsewhere) from home/witnesses/slots/ (home may be NULL): refused before reading when larger than
 * GL_WITNESS_SNAPSHOT_MAX ("too_large"), missing ("missing_snapshot"), not
 * of that hash or not a JSON object ("bad_snapshot"). 0 with *slot
 * (owned), or -1 with f (GL_E_TOO_LARGE, GL_E_MISSING_SNAPSHOT or
 * GL_E_BAD_SNAPSHOT). */
int gl_witness_snapshot_load(const char *witness_path, const char *home, const char *sha,
			     jv *slot, struct gl_fail *f);

#endif
