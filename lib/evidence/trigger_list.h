/* trigger_list.h — a result record's triggers, signed by the host that
 * raised them (docs/witness.md "No free trigger"; SPEC §6, §7).
 *
 * A trigger whose witness cannot be replayed — never written for its size,
 * pruned by a cap before gl-replay read it, deleted, unreadable, changed —
 * must still cost its release an unverified event: otherwise a leaking
 * release that makes its witnesses large, or many, goes free. The only
 * record of such a trigger is the result record, which is gl-run's output
 * and anyone's to edit or to write on the way to an auditor; believed as
 * written, a made-up result record naming a benign release and a trigger
 * "too large to be written" would frame it. So gl-run signs, with the key
 * that signs its witnesses (lib/evidence/witness_key.h), the statement
 *
 *   {"_type":"germline.triggers","call":ID,"release":R,"triggers":[…]}
 *
 * (the record's own "id", "release" and "triggers", each trigger object
 * exactly as the record carries it), as GL_TRIGGERS_SIG_CONTEXT followed by
 * the SHA-256 (hex) of its canonical JSON, and the record carries
 * "triggers_signature": {"keyid","public","signature"}. gl-replay counts a
 * trigger it could not replay only when that signature verifies with a key
 * it trusts, for the statement the record's own fields make. */
#ifndef GL_TRIGGER_LIST_H
#define GL_TRIGGER_LIST_H

#include <jv.h>

#include "sign/keys.h"

#define GL_TRIGGERS_SIG_CONTEXT "germline.triggers.v1\n"
#define GL_TRIGGERS_TYPE "germline.triggers"

/* rec (consumed) with "triggers_signature" set by k (secret loaded) when
 * it has a non-empty "triggers" array; unchanged otherwise, and when its
 * statement is not canonical JSON (a call id that is not an integer,
 * string or null: such a record's unreplayable triggers then count for
 * nobody, which gl-run warns about). */
jv gl_triggers_sign(jv rec, const struct gl_key *k);

/* The keyid (into keyid) of the key whose "triggers_signature" in rec
 * (borrowed) verifies for the statement rec's own id, release and
 * triggers make: 0, or -1 when there is none, it is malformed (keyid not
 * that of public, not hex) or it does not verify. Who trusts that key is
 * the caller's question. */
int gl_triggers_signer(jv rec, char keyid[GL_KEYID_HEX]);

#endif
