/* damp_once.c — the keys of the verdicts gl-damp has counted; see
 * damp_once.h. */
#define _GNU_SOURCE
#include "damp/damp_once.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha.h"
#include "core/util.h"

#define KEY_LINE 65 /* 64 hex digits and a newline */

void gl_damp_once_key(const char *kind, const void *what, size_t n, char out[65])
{
	struct gl_sha256 s;
	unsigned char h[GL_SHA256_BYTES];
	gl_sha256_init(&s);
	gl_sha256_update(&s, kind, strlen(kind) + 1); /* the NUL separates kind from what */
	gl_sha256_update(&s, what, n);
	gl_sha256_final(&s, h);
	gl_hex(h, sizeof h, out);
}

static bool key_line_ok(const char *p)
{
	return strspn(p, "0123456789abcdef") == 64 && p[64] == '\n';
}

int gl_damp_once_load(struct gl_damp_once *o, const char *state_path, struct gl_fail *f)
{
	*o = (struct gl_damp_once){.path = gl_xasprintf("%s.counted", state_path)};
	size_t len = 0;
	if (gl_read_file_capped(o->path, (size_t)GL_DAMP_ONCE_MAX * KEY_LINE, &o->keys, &len) < 0) {
		if (errno == ENOENT)
			return 0;
		return gl_fail(f, GL_E_IO, "%s: %s", o->path,
			       errno == EFBIG ? "larger than its bound of keys" : strerror(errno));
	}
	if (len % KEY_LINE)
		return gl_fail(f, GL_E_IO, "%s: not one key per line: refusing to reset it", o->path);
	for (size_t i = 0; i < len; i += KEY_LINE)
		if (!key_line_ok(o->keys + i))
			return gl_fail(f, GL_E_IO, "%s: line %zu is not a key: refusing to reset it",
				       o->path, i / KEY_LINE + 1);
	o->n = len / KEY_LINE;
	return 0;
}

bool gl_damp_once_has(const struct gl_damp_once *o, const char key[65])
{
	for (size_t i = 0; i < o->n; i++)
		if (!memcmp(o->keys + i * KEY_LINE, key, 64))
			return true;
	return false;
}

int gl_damp_once_add(struct gl_damp_once *o, const char key[65], struct gl_fail *f)
{
	size_t drop = o->n >= GL_DAMP_ONCE_MAX ? GL_DAMP_ONCE_MAX / 4 : 0;
	size_t keep = o->n - drop;
	char *buf = gl_xmalloc((keep + 1) * KEY_LINE);
	if (keep)
		memcpy(buf, o->keys + drop * KEY_LINE, keep * KEY_LINE);
	memcpy(buf + keep * KEY_LINE, key, 64);
	buf[keep * KEY_LINE + 64] = '\n';
	int rc = gl_atomic_write(o->path, buf, (keep + 1) * KEY_LINE, 0600);
	if (rc < 0) {
		free(buf);
		return gl_fail(f, GL_E_IO, "%s: writing the counted witnesses: %s", o->path,
			       strerror(errno));
	}
	free(o->keys);
	o->keys = buf;
	o->n = keep + 1;
	return 0;
}

void gl_damp_once_free(struct gl_damp_once *o)
{
	free(o->path);
	free(o->keys);
	*o = (struct gl_damp_once){0};
}

bool gl_damp_once_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_DAMP_ONCE_OFF");
}
