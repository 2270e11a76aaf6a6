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
 * half of its writes. */
#ifndef GL_SLOTS_H
#define GL_SLOTS_H

#include <jv.h>
#include <stddef.h>

#include "labels.h"

#define GL_SLOT_MAX (48u << 20)  /* bytes of a slot file: an exec workspace of 32 MiB in base64 */
#define GL_SLOT_ENTRIES_MAX 4096

struct gl_slot {
	char *path;            /* owned: GL_HOME/slots/<release>/<id>.json */
	char *dir;             /* owned: its directory */
	jv entries;            /* owned: the slot as read at copy start */
	jv puts;               /* owned: this copy's writes, key -> entry */
	struct gl_labels label; /* ℓ(σ): tags point into entries */
	size_t bytes;          /* serialised size as read, for the bound */
};

/* SHA-256 hex (65 bytes with NUL) of the canonical JSON of the horizon. */
void gl_slot_horizon_id(const struct gl_labels *horizon, char out[65]);

/* Open and read the slot of (release, horizon) under home. A missing file
 * is the empty slot. A file that is unreadable, too large, not JSON or of
 * the wrong shape is refused (never silently reset): -1 with *err
 * (malloc'd) naming the file. Release with gl_slot_free either way. */
int gl_slot_open(struct gl_slot *s, const char *home, const char *release,
		 const struct gl_labels *horizon, char **err);

/* The whole slot for the copy's call message (owned): entries as stored,
 * with this copy's own writes so far applied on top. */
jv gl_slot_view(const struct gl_slot *s);

/* σ[key] ← (value, L) (Algorithm 1 line 23). Consumes value. -1 with *err
 * when the slot would exceed GL_SLOT_MAX or GL_SLOT_ENTRIES_MAX. */
int gl_slot_put(struct gl_slot *s, const char *key, jv value, const struct gl_labels *L,
		char **err);

/* Apply this copy's writes to the file: lock, re-read, merge, write
 * atomically, unlock. Nothing to do when the copy wrote nothing. 0, or -1
 * with *err. */
int gl_slot_commit(struct gl_slot *s, char **err);

void gl_slot_free(struct gl_slot *s);

#endif
