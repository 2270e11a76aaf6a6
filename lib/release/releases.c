/* releases.c — the per-process cache of installed releases' manifests
 * (gl_releases_*, manifest.h): a manifest is read and checked once per
 * release hash, at most CACHE_MAX kept; see manifest.h. */
#define _GNU_SOURCE
#include "release/manifest.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "json/json.h"
#include "core/util.h"

/* ---- the cache -------------------------------------------------------- */

#define CACHE_MAX 4096 /* beyond this, manifests are re-read each call */

struct gl_releases {
	char *dir;
	struct slot {
		char sha[65];
		jv m;
	} *slot;
	size_t cap, used;
	jv spill; /* the last manifest read while the cache was full */
};

struct gl_releases *gl_releases_new(const char *dir)
{
	struct gl_releases *r = gl_xcalloc(1, sizeof *r);
	r->dir = gl_xstrdup(dir);
	r->cap = 64;
	r->slot = gl_xcalloc(r->cap, sizeof *r->slot);
	r->spill = jv_null();
	return r;
}

void gl_releases_free(struct gl_releases *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->cap; i++)
		if (r->slot[i].sha[0])
			jv_free(r->slot[i].m);
	jv_free(r->spill);
	free(r->slot);
	free(r->dir);
	free(r);
}

static size_t slot_of(const struct gl_releases *r, const char *sha)
{
	uint64_t h = 0;
	for (int i = 0; i < 16; i++) {
		unsigned char c = (unsigned char)sha[i];
		h = h << 4 | (uint64_t)((c >= '0' && c <= '9') ? c - '0' : c - 'a' + 10);
	}
	size_t i = (size_t)h & (r->cap - 1);
	while (r->slot[i].sha[0] && memcmp(r->slot[i].sha, sha, 64))
		i = (i + 1) & (r->cap - 1);
	return i;
}

static void grow(struct gl_releases *r)
{
	struct slot *old = r->slot;
	size_t n = r->cap;
	r->cap *= 2;
	r->slot = gl_xcalloc(r->cap, sizeof *r->slot);
	for (size_t i = 0; i < n; i++)
		if (old[i].sha[0])
			r->slot[slot_of(r, old[i].sha)] = old[i];
	free(old);
}

enum gl_code gl_releases_get(struct gl_releases *r, const char *sha, jv *m, struct gl_fail *f)
{
	if (!gl_sha256_hex_ok(sha, strlen(sha))) /* never a path from anything else */
		return gl_fail_set(f, GL_E_UNKNOWN_RELEASE,
				   "not a SHA-256 in 64 lowercase hex digits");
	size_t i = slot_of(r, sha);
	if (r->slot[i].sha[0]) {
		*m = r->slot[i].m;
		return GL_E_OK;
	}
	autofree char *dir = gl_xasprintf("%s/%s", r->dir, sha);
	jv got;
	enum gl_manifest_status st = gl_manifest_read(dir, &got);
	if (st != GL_MANIFEST_OK) {
		jv msg = jv_invalid_get_msg(got);
		gl_fail_set(f, st == GL_MANIFEST_MISSING ? GL_E_UNKNOWN_RELEASE : GL_E_BAD_MANIFEST,
			    "%s", jv_string_value(msg));
		jv_free(msg);
		return f->code;
	}
	if (r->used >= CACHE_MAX) {
		/* Full: park it where the next uncached lookup replaces it. */
		jv_free(r->spill);
		r->spill = got;
		*m = got;
		return GL_E_OK;
	}
	if ((r->used + 1) * 2 > r->cap) {
		grow(r);
		i = slot_of(r, sha);
	}
	memcpy(r->slot[i].sha, sha, 64);
	r->slot[i].sha[64] = 0;
	r->slot[i].m = got;
	r->used++;
	*m = got;
	return GL_E_OK;
}
