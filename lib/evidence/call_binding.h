/* call_binding.h — a call's result record bound to the receipts of the
 * launches that served it, signed by the host (SPEC §9; docs/receipts.md
 * "A call's receipts").
 *
 * A result record names those receipts ("receipts": their ids). The record
 * is gl-run's output, which anyone between gl-run and an auditor may edit:
 * naming the fully_enforced receipt of another launch (another mode,
 * another release) in place of the call's own would pass a call that ran
 * under nosplit for one that ran in germline copies, and each receipt
 * would still verify. So gl-run signs, with the host key that signs its
 * receipts, the statement
 *
 *   {"_type":"germline.call","call":ID,"mode":M,"receipts":[ids],"release":R}
 *
 * (the record's own "id", "mode", "receipts" and "release"; null for one
 * it lacks), as GL_CALL_SIG_CONTEXT followed by the SHA-256 (hex) of its
 * canonical JSON, and the record carries the signature as
 * "receipts_signature". gl-verify call rebuilds the statement from the
 * record it is given, never from anything the record says about itself,
 * checks the signature with the host's public key, then verifies each
 * receipt named as the receipt of that id (lib/evidence/receipt_set.h). */
#ifndef GL_CALL_BINDING_H
#define GL_CALL_BINDING_H

#include <jv.h>
#include <stdint.h>

#include "core/fail.h"
#include "sign/keys.h"

#define GL_CALL_SIG_CONTEXT "germline.call.v1\n"
#define GL_CALL_TYPE "germline.call"

/* rec (consumed) with "receipts_signature" set: k (secret loaded) signs
 * the statement of rec's id, mode, receipts and release. Unchanged, with a
 * warning, when the statement is not canonical JSON (an id that is a
 * number but not an integer). */
jv gl_call_sign(jv rec, const struct gl_key *k);

/* Does rec's (borrowed) "receipts_signature" verify with pk for the
 * statement its own fields make? Its "receipts" must be an array of at
 * most 256 ids (64 lowercase hex). 0, or -1 with f: bad_record (no
 * receipts, or not ids), bad_signature (no signature, or it does not
 * verify: the record was changed after gl-run wrote it, or another key
 * signed it). */
int gl_call_verify(jv rec, const unsigned char pk[32], struct gl_fail *f);

/* gl-verify call for one result record rec (consumed; jv_invalid() when
 * its line was not JSON): gl_call_verify, then each receipt it names as
 * dir/<id>.json, verified as the receipt of that id, of the record's
 * release and of profile when not NULL (lib/evidence/receipt_set.h) at
 * now. *out (owned): {"ok", "call" (the record's id, when a scalar),
 * "receipts" (each receipt's record), and "error", "detail" when not ok:
 * bad_record, bad_signature, or mismatch (a receipt named does not
 * verify)}. 0, or -1 with f (io: a receipt file cannot be read). */
int gl_call_check(jv rec, const unsigned char pk[32], const char *dir, const char *profile,
		  int64_t now, jv *out, struct gl_fail *f);

#endif
