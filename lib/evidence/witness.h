/* witness.h — witness records (paper §IV-F, Definition 6; SPEC §6, §7;
 * docs/witness.md gives the format field by field).
 *
 * For every trigger gl-run writes GL_HOME/witnesses/<id>.json: what the
 * probe and the control need to re-run the release without the host that
 * produced it — release hash, function, public metadata (args, item names
 * and labels), the declared destinations D_f, d, d's group and the
 * comparing copy's group (members, view item names, horizon, the slot as
 * delivered, τ), the transcript T(d) (every request of d's copy, to every
 * host, with the reply it got), the delivered sequence to d and the
 * comparing copy's sequence to d. Item contents only on request
 * (gl-run --witness-items). The record is canonical JSON (SPEC §3) with a
 * self-digest, so its SHA-256 is stable and a changed byte is seen.
 *
 * Everything read back is hostile: the file is size-capped, must be
 * exactly canonical, and every field is checked for kind, shape and range
 * before anything runs. */
#ifndef GL_WITNESS_H
#define GL_WITNESS_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/callmsg.h"
#include "evidence/witness_store.h"
#include "release/bounds.h"
#include "release/config.h"
#include "sign/keys.h"

#define GL_WITNESS_FORMAT "germline.witness"
/* Version 2 (issue 14) adds "import_twin"; version 3 (issue 15) names
 * each group's slot by hash ("slot_sha256", a snapshot in
 * witnesses/slots/, lib/evidence/witness_store.h) instead of embedding it;
 * version 4 is signed: "producer" {"keyid","public"} and "signature"
 * (lib/evidence/witness_key.h), and records the bounds its copies ran
 * under ("limits", lib/release/bounds.h), which replay applies; version 5
 * carries the snapshots it names ("snapshots", witness_snap.h) and the
 * reply text past GL_WITNESS_REPLIES_MAX by hash ("replies"): one
 * self-contained file (SPEC §7); version 6 adds the comparing copy's own
 * transcript ("comparing_transcript", or null when it did not fit), the
 * inputs of the mirror run that tells a release which cannot reproduce
 * its own trigger (docs/witness.md "The mirror run"). Versions 1 to 3 are
 * still read, unsigned: never trusted; version 4's snapshots are read from
 * the store only for this host's own witnesses (docs/witness.md "Older
 * versions"). */
#define GL_WITNESS_VERSION 6
#define GL_WITNESS_VERSION_MIN 1
/* bytes of a witness file: the record (replies at most
 * GL_WITNESS_REPLIES_MAX, the items it includes), two carried snapshots
 * of at most GL_WITNESS_SNAP_ENC_MAX each and the carried replies; a
 * witness over it is not written (too_large, a counted event) */
#define GL_WITNESS_MAX (272u << 20)
#define GL_WITNESS_REPLIES_MAX (4u << 20) /* bytes of reply text in the transcript */
/* bytes of reply text a version 5 record carries by hash beyond that
 * ("replies", witness_snap.h), each distinct text counted once */
#define GL_WITNESS_CARRIED_MAX (64u << 20)
#define GL_WITNESS_REQUESTS_MAX 1024      /* GL_BROKER_REQUESTS_MAX */

/* One request of a copy as the broker saw it, for a transcript (owned):
 * host (NULL: an unparsable URL), method, digest (hex, "" when none),
 * source "delivered|recorded|placeholder|denied", and the reply message
 * the copy got (borrowed; kept for delivered and recorded replies). */
jv gl_witness_entry(const char *host, const char *method, const char *digest,
		    const char *source, jv reply);

struct gl_witness_group {
	jv group;                   /* {"destinations","consumers","view","horizon"} */
	jv slot;                    /* the slot as delivered to the group's copy */
	const struct gl_twin *twin; /* τ the copy got */
};

/* Everything gl-run hands over for one trigger; all borrowed. */
struct gl_witness_in {
	const char *id;
	jv call; /* the envelope's id, or jv_invalid() */
	const char *release, *function, *mode;
	jv args;  /* object */
	jv dests; /* D_f: array of host names */
	const struct gl_callmsg_item *item; /* every item, name order */
	const char *const *data;            /* per item: base64 to include, or NULL */
	const char *const *path;            /* per item: its path, or NULL (data items) */
	const bool *dir;                    /* per item: a directory item */
	size_t nitem;
	const char *destination, *kind;
	int64_t position;
	struct gl_witness_group served, comparing;
	jv transcript; /* g's copy's entries (gl_witness_entry) */
	jv compared;   /* the comparing copy's entries */
	int64_t deadline_ms;
	/* the germline's import-time twin inputs (germline.h), or NULL when
	 * the import read the real clock (no germline: exec; test switch) */
	const struct gl_twin *import_twin;
	const struct gl_witness_caps *caps; /* NULL: the defaults */
	/* the key that signs it (witness_key.h; its secret loaded), or NULL:
	 * an unsigned version 3 record */
	const struct gl_key *signer;
	/* the bounds of the call's copies (version 4; NULL: the defaults) */
	const struct gl_limits *limits;
	/* the operator's configuration of the release (lib/release/config.h),
	 * recorded without its secrets' values; NULL: none */
	const struct gl_config *config;
};

/* Build the record and write it atomically (mode 0600) to
 * home/witnesses/<id>.json, its slots as snapshots, within the caps
 * (lib/evidence/witness_store.h). 0 with *path (malloc'd) and the SHA-256 of the
 * file's bytes, or -1 with f: too_large (and *too_large) when the witness
 * alone is over the per-witness cap (nothing written), else io. */
int gl_witness_save(const char *home, const struct gl_witness_in *in, char **path, char sha256[65],
		    bool *too_large, struct gl_fail *f);

/* A witness read back and validated. Strings and arrays point into doc. */
struct gl_witness_grp {
	jv view;  /* item names */
	jv slot;  /* owned: parsed slot (version 3: after gl_witness_snapshots) */
	const char *slot_sha256; /* version 3: the snapshot's hash (in doc) */
	struct gl_twin twin;
};

/* A copy's transcript read back: its entries (in doc), and per entry the
 * parsed reply (owned; jv_null() for none: the placeholder) and the hash
 * of a reply carried in "replies" (version 5; in doc), decoded by
 * gl_witness_snapshots, or NULL. */
struct gl_witness_trans {
	jv entries;
	jv *reply;
	const char **reply_sha;
	size_t n;
};

struct gl_witness {
	jv doc; /* owned */
	const char *id, *release, *function, *mode, *destination, *kind;
	int64_t position, deadline_ms;
	jv call;  /* owned: parsed envelope id (null when there was none) */
	jv args;  /* owned: parsed */
	jv dests; /* D_f (in doc) */
	struct gl_callmsg_item *item; /* labels borrowed from doc; b64 from doc or NULL */
	const char **path;            /* per item: its path (in doc), or NULL */
	bool *dir;                    /* per item: a directory item */
	size_t nitem;
	struct gl_witness_grp served, comparing;
	struct gl_witness_trans trans; /* T(d): the served copy's */
	/* the comparing copy's (version 6), when mirrored; else empty */
	struct gl_witness_trans ctrans;
	bool mirrored;
	jv delivered, compared; /* digests (in doc) */
	bool complete, items_included;
	int64_t version;
	struct gl_twin import_twin; /* valid when import_twinned */
	bool import_twinned;        /* "import_twin" present (version 2 only) */
	/* version 4: the signature verified with producer.public, whose keyid
	 * this is (in doc); NULL for an unsigned older version */
	const char *producer;
	/* version 4: the bounds the call's copies ran under; older versions:
	 * the SPEC §4 defaults */
	struct gl_limits limits;
	/* "config": the operator's public args, env and secrets' names the
	 * germline was launched with (no value: lib/release/config.h), which
	 * replay launches with; configured false: none */
	struct gl_config config;
	bool configured;
};


/* Read path (at most GL_WITNESS_MAX bytes) and validate every field. 0,
 * or -1 with f: io (cannot open or read it: errno's words), too_large
 * (larger than GL_WITNESS_MAX, refused before it is read: issue 15) or
 * bad_witness (the detail names the field, e.g. "served.twin.seed: not 64
 * lowercase hex", or "record_sha256 does not match the record (changed or
 * truncated)", or "signature: does not verify with producer.public"). *sha256 gets the SHA-256 of the file's bytes (when it was
 * read). Release with gl_witness_free either way. */
int gl_witness_load(const char *path, struct gl_witness *w, char sha256[65], struct gl_fail *f);
/* The same for the bytes buf[0..len) already read (at most GL_WITNESS_MAX:
 * the caller's cap): bad_witness only. gl_witness_load reads the file and
 * calls it; fuzz/witness.c feeds it directly. */
int gl_witness_parse(const char *buf, size_t len, struct gl_witness *w, char sha256[65],
		     struct gl_fail *f);
void gl_witness_free(struct gl_witness *w);

/* Both groups' slots, each checked against its hash: version 5 from the
 * snapshots it carries, and only from them (gl_witness_snap_decode), and
 * the replies it carries by hash (at most GL_WITNESS_CARRIED_MAX bytes in
 * all, each distinct text counted once);
 * versions 3 and 4, when from_store (a witness this host signed), from the
 * slots/ directory beside path or under home/witnesses/slots
 * (gl_witness_snapshot_load), else none. 0, or -1 with f (too_large,
 * missing_snapshot, bad_snapshot). Versions 1 and 2: nothing to do. */
int gl_witness_snapshots(const char *path, const char *home, bool from_store,
			 struct gl_witness *w, struct gl_fail *f);

/* Index of item name in w, or -1. */
int gl_witness_item(const struct gl_witness *w, const char *name);

#endif
