/* receipt_set.c — see receipt_set.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "evidence/receipt_set.h"
#include "json/json.h"

/* recs[i], an exited receipt (body exited), against the launch recs[j]
 * (body launched) it closes: "closes_launch" added to its checks, or the
 * record refused as a "mismatch". */
static jv pair(jv rec, jv exited, jv launched, const char *id)
{
	autofail struct gl_fail pf = {0};
	jv chk = gl_json_get(rec, "checks");
	if (gl_receipt_check_pair(exited, launched, id, &pf) < 0) {
		rec = jv_object_set(rec, jv_string("ok"), jv_false());
		rec = jv_object_set(rec, jv_string("error"), jv_string("mismatch"));
		rec = jv_object_set(rec, jv_string("failed"), jv_string("closes_launch"));
		rec = jv_object_set(rec, jv_string("detail"), jv_string(gl_fail_detail(&pf)));
		jv_free(chk);
		return rec;
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
