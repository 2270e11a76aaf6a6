/* receipt_set.h — gl-verify receipt (SPEC §9; docs/receipts.md): a set of
 * receipt files verified offline with only the host's public key, each
 * alone (lib/runtime/receipt.h gl_receipt_verify), then each "exited"
 * receipt against the launch receipt it closes when both are given. */
#ifndef GL_RECEIPT_SET_H
#define GL_RECEIPT_SET_H

#include <jv.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fail.h"
#include "runtime/receipt.h"

/* Verify files[0..n) (each read capped: one byte over GL_RECEIPT_MAX tells
 * "too large" without reading it all) against x at now; recs[i] (owned)
 * gets file i's record, with "file". Each receipt's id (the SHA-256 of its
 * signed body) must be x->receipt when given, and the name of its file
 * when that name is an id ("<64 hex>.json", as gl-run --receipts names
 * them): a receipt copied over another's file is told ("file_name"), one
 * kept under another name leaves "file_name" unchecked. 0, or -1 with f
 * (io; recs then holds nothing) when a file cannot be read. */
int gl_receipt_set_verify(const char *const *files, size_t n, const unsigned char host_pk[32],
			  const struct gl_receipt_expect *x, int64_t now, jv *recs,
			  struct gl_fail *f);

#endif
