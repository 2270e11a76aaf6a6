/* keyring.h — the keys one gl-sign run uses (SPEC §3; docs/signing.md):
 * each --key argument loaded (and its passphrase asked) once, however
 * many roles name it, and every secret wiped when the ring is freed
 * (gl_key_free: sodium_memzero'd, guarded memory). */
#ifndef GL_KEYRING_H
#define GL_KEYRING_H

#include <stddef.h>

#include "sign/keys.h"
#include "sign/publish.h"

struct gl_keyring {
	struct gl_key *k;
	const char **arg; /* borrowed: the argument each key was loaded from */
	size_t n;
};

/* Load each of args[0..n) with need into *out, a shallow array (free
 * out->k, never the keys: the ring owns them); an argument already loaded
 * (with its secret when need is GL_KEY_SECRET) is taken from the ring.
 * GL_E_OK, or the code of the first that failed (keys.h) with f (never a
 * secret) and nothing in *out. */
enum gl_code gl_keyring_load(struct gl_keyring *ring, const char *const *args, size_t n,
			     enum gl_key_need need, struct gl_keys *out, struct gl_fail *f);

/* Wipe and free every key of the ring. */
void gl_keyring_free(struct gl_keyring *ring);

#endif
