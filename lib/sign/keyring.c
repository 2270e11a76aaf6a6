/* keyring.c — see keyring.h. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "sign/keyring.h"

enum gl_code gl_keyring_load(struct gl_keyring *ring, const char *const *args, size_t n,
			     enum gl_key_need need, struct gl_keys *out, struct gl_fail *f)
{
	struct gl_key *ks = gl_xcalloc(n, sizeof *ks);
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < ring->n && !(strcmp(ring->arg[j], args[i]) == 0 &&
					(need != GL_KEY_SECRET || ring->k[j].sk)))
			j++;
		if (j == ring->n) {
			struct gl_key k;
			enum gl_code st = gl_key_load(args[i], need, &k, f);
			if (st != GL_E_OK) {
				free(ks);
				*out = (struct gl_keys){NULL, 0};
				return st;
			}
			ring->k = gl_xrealloc(ring->k, (ring->n + 1) * sizeof *ring->k);
			ring->arg = gl_xrealloc(ring->arg, (ring->n + 1) * sizeof *ring->arg);
			ring->k[ring->n] = k;
			ring->arg[ring->n++] = args[i];
		}
		ks[i] = ring->k[j];
	}
	*out = (struct gl_keys){ks, n};
	return GL_E_OK;
}

void gl_keyring_free(struct gl_keyring *ring)
{
	for (size_t i = 0; i < ring->n; i++)
		gl_key_free(&ring->k[i]);
	free(ring->k);
	free(ring->arg);
	ring->k = NULL;
	ring->arg = NULL;
	ring->n = 0;
}
