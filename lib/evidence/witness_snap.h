/* witness_snap.h — the slot snapshots a witness carries (SPEC §7: one
 * self-contained file; docs/witness.md "Slot snapshots, caps and pruning").
 *
 * Replay restores each group's slot exactly as the broker delivered it
 * (paper §IV-F: the probe runs with the destination's slot, Definition 6),
 * so a witness names each slot by the SHA-256 of its JSON text
 * ("slot_sha256") and, from version 5, carries that text itself:
 *
 *   "snapshots": {"<slot_sha256>": "<base64 of the zlib stream (RFC 1950)
 *                 of the slot's JSON text>", …}
 *
 * one entry per distinct slot the groups name. Reply text past the
 * transcript's budget is carried the same way ("replies", named by a
 * transcript entry's "reply_sha256"), so that padding the destination's
 * replies does not make a trigger unverifiable. The witness is then all an
 * auditor needs to move to another machine, and gl-replay never asks a
 * store for a snapshot a forged witness names (a store would answer a
 * guess). Compression keeps the cost of a large, repetitive slot that
 * every trigger of a release names small (issue 15's bounded evidence);
 * an incompressible slot costs its size in each witness, within the caps.
 *
 * Everything here is read from a witness, so it is hostile input: the
 * encoded text is bounded before decoding, the inflated bytes are bounded
 * by GL_WITNESS_SNAPSHOT_MAX while they are inflated (a zlib bomb stops
 * there), and the bytes must hash to the name before they are parsed. */
#ifndef GL_WITNESS_SNAP_H
#define GL_WITNESS_SNAP_H

#include <jv.h>

#include "core/fail.h"
#include "evidence/witness_store.h"

/* The longest encoded snapshot: base64 of the zlib stream of
 * GL_WITNESS_SNAPSHOT_MAX bytes that did not compress (zlib's
 * compressBound: n + n/4096 + n/16384 + n/33554432 + 13, rounded up). */
#define GL_WITNESS_SNAP_ENC_MAX ((((GL_WITNESS_SNAPSHOT_MAX + (GL_WITNESS_SNAPSHOT_MAX >> 11) + 64u) + 2u) / 3u) * 4u)

/* s's text as it is carried: base64 of its zlib stream (level 1: gl-run
 * writes a witness while the call's result waits). 0 with *enc (owned
 * string), or -1 with f (io: zlib failed). */
int gl_witness_snap_encode(const struct gl_witness_snap *s, jv *enc, struct gl_fail *f);

/* The text carried as enc (borrowed) under the name sha (what: "slot
 * snapshot" or "reply", for the errors): decoded within the bounds above,
 * its bytes hashed to sha and parsed. 0 with *v (an object, owned) and
 * *len (the text's bytes; len may be NULL), or -1 with f: too_large (more
 * than GL_WITNESS_SNAPSHOT_MAX bytes, encoded or inflated), bad_snapshot
 * (not base64, not a zlib stream, another hash, or not a JSON object). */
int gl_witness_snap_decode(jv enc, const char *sha, const char *what, jv *v, size_t *len,
			   struct gl_fail *f);

#endif
