/* receipt_set.c — see receipt_set.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "evidence/receipt_set.h"
#include "json/json.h"

/* rec refused as a "mismatch" of the check failed, saying detail. */
static jv refuse(jv rec, const char *failed, const char *detail)
{
	rec = jv_object_set(rec, jv_string("ok"), jv_false());
	rec = jv_object_set(rec, jv_string("error"), jv_string("mismatch"));
	rec = jv_object_set(rec, jv_string("failed"), jv_string(failed));
	return jv_object_set(rec, jv_string("detail"), jv_string(detail));
}

/* recs[i], an exited receipt (body exited), against the launch recs[j]
 * (body launched) it closes: "closes_launch" added to its checks, or the
 * record refused as a "mismatch". */
static jv pair(jv rec, jv exited, jv launched, const char *id)
{
	autofail struct gl_fail pf = {0};
	jv chk = gl_json_get(rec, "checks");
	if (gl_receipt_check_pair(exited, launched, id, &pf) < 0) {
		jv_free(chk);
		return refuse(rec, "closes_launch", gl_fail_detail(&pf));
	}
	chk = jv_array_append(chk, jv_string("closes_launch"));
	return jv_object_set(rec, jv_string("checks"), chk);
}

/* An exited receipt and the launch it closes, when both are given. */
static void pair_all(jv *recs, const jv *bodies, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *st = jv_is_valid(bodies[i]) ? gl_json_get_str(bodies[i], "state") : NULL;
		if (!st || strcmp(st, "exited"))
			continue;
		const char *closes = gl_json_get_str(bodies[i], "closes");
		for (size_t j = 0; j < n; j++) {
			const char *id = gl_json_get_str(recs[j], "receipt");
			if (j == i || !jv_is_valid(bodies[j]) || !id || strcmp(id, closes))
				continue;
			recs[i] = pair(recs[i], bodies[i], bodies[j], id);
		}
	}
}

static bool names_an_id(const char *base)
{
	return strlen(base) == 69 && strspn(base, "0123456789abcdef") == 64 &&
	       !strcmp(base + 64, ".json");
}

/* The receipt's id (rec's "receipt") against the one asked for (want, or
 * NULL) and against its file's name (path): "receipt_id" and "file_name"
 * in its checks, or the record refused. */
static jv bind_id(jv rec, const char *path, const char *want)
{
	const char *id = gl_json_get_str(rec, "receipt");
	if (!id || !gl_json_get_bool(rec, "ok", 0))
		return rec; /* unreadable, or refused already */
	jv chk = gl_json_get(rec, "checks"), un = gl_json_get(rec, "unchecked");
	if (want && strcmp(id, want)) {
		jv_free(chk);
		jv_free(un);
		return refuse(rec, "receipt_id", "the receipt's id is not the one asked for");
	}
	if (want)
		chk = jv_array_append(chk, jv_string("receipt_id"));
	else
		un = jv_array_append(un, jv_string("receipt_id"));
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	bool name_off = false;
#ifdef GL_TESTING
	name_off = getenv("GL_TEST_RECEIPT_NAME_OFF") != NULL; /* the damage: a swap verifies */
#endif
	if (names_an_id(base) && !name_off) {
		if (strncmp(base, id, 64)) {
			jv_free(chk);
			jv_free(un);
			return refuse(rec, "file_name",
				      "the receipt in this file is another's: its name is not its id");
		}
		chk = jv_array_append(chk, jv_string("file_name"));
	} else {
		un = jv_array_append(un, jv_string("file_name"));
	}
	rec = jv_object_set(rec, jv_string("checks"), chk);
	return jv_object_set(rec, jv_string("unchecked"), un);
}

int gl_receipt_set_verify(const char *const *files, size_t n, const unsigned char host_pk[32],
			  const struct gl_receipt_expect *x, int64_t now, jv *recs, struct gl_fail *f)
{
	jv *bodies = gl_xcalloc(n ? n : 1, sizeof *bodies);
	size_t i = 0;
	for (; i < n; i++) {
		autofree char *buf = NULL;
		size_t len = 0;
		if (gl_read_file_capped(files[i], GL_RECEIPT_MAX + 1, &buf, &len) < 0 &&
		    errno != EFBIG) {
			gl_fail_errno(f, GL_E_IO, "%s", files[i]);
			break;
		}
		if (!buf)
			len = GL_RECEIPT_MAX + 1;
		recs[i] = gl_receipt_verify(buf ? buf : "", len, host_pk, x, now, &bodies[i]);
		recs[i] = bind_id(recs[i], files[i], x->receipt);
		recs[i] = jv_object_set(recs[i], jv_string("file"), jv_string(files[i]));
	}
	if (i == n)
		pair_all(recs, bodies, n);
	for (size_t k = 0; k < i; k++) {
		jv_free(bodies[k]);
		if (i < n)
			jv_free(recs[k]);
	}
	free(bodies);
	return i == n ? 0 : -1;
}
