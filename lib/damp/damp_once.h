/* damp_once.h — each witness is counted once (SPEC §7; docs/damp.md
 * "Each witness once").
 *
 * A verdict adds its event's weight to its release's penalty (Appendix
 * B-E). The same verdict read again — a stream fed twice, a line repeated,
 * a pipeline whose output two gl-damp processes read — must not add it
 * again: one witness repeated 8 times would suppress a release that no
 * second trigger ever implicated. gl-damp keeps the key of every verdict it
 * counted in FILE.counted beside its state FILE, read and written under
 * the state's lock; a verdict whose key is there changes nothing and is
 * answered "repeated":true.
 *
 * A key is the SHA-256 of what names the evidence: the verdict's
 * "witness" (the witness id gl-replay names), or the bytes of a line
 * gl-damp could not read that it charged as an event. The file holds at
 * most GL_DAMP_ONCE_MAX keys, one per line, oldest first; past it the
 * oldest quarter is dropped (a witness that old could be counted again
 * only after that many newer ones were). */
#ifndef GL_DAMP_ONCE_H
#define GL_DAMP_ONCE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"

#define GL_DAMP_ONCE_MAX 20000u

/* The key of evidence named by what[0..n), of kind ("witness", "line"),
 * as 64 lowercase hex digits and a NUL. */
void gl_damp_once_key(const char *kind, const void *what, size_t n, char out[65]);

struct gl_damp_once {
	char *path;  /* FILE.counted */
	char *keys;  /* n keys of 65 bytes each ("<64 hex>\n") */
	size_t n;
};

/* Read FILE.counted for the state file state_path (missing: no key yet),
 * with the store's lock held. -1 with f (io) when it is unreadable, larger
 * than GL_DAMP_ONCE_MAX keys, or not keys one per line: refused, never
 * reset (a reset would count every witness again). */
int gl_damp_once_load(struct gl_damp_once *o, const char *state_path, struct gl_fail *f);
bool gl_damp_once_has(const struct gl_damp_once *o, const char key[65]);
/* Add key and write the file atomically (gl_atomic_write), with the
 * store's lock held. 0, or -1 with f (io). */
int gl_damp_once_add(struct gl_damp_once *o, const char key[65], struct gl_fail *f);
void gl_damp_once_free(struct gl_damp_once *o);

/* GL_TESTING builds with GL_TEST_DAMP_ONCE_OFF=1: every verdict counts,
 * however often it comes (the damage tests/gl-damp.bats shows). Always
 * false otherwise. */
bool gl_damp_once_off(void);

#endif
