/* witness_snap.c — slot snapshots carried in a witness; see witness_snap.h. */
#include "evidence/witness_snap.h"

#include <string.h>
#include <zlib.h>

#include "core/sha.h"
#include "core/util.h"
#include "json/json.h"
#include "json/msg.h"

int gl_witness_snap_encode(const struct gl_witness_snap *s, jv *enc, struct gl_fail *f)
{
	*enc = jv_invalid();
	uLongf n = compressBound((uLong)s->len);
	autofree unsigned char *z = gl_xmalloc(n);
	if (compress2(z, &n, (const Bytef *)s->text, (uLong)s->len, 1) != Z_OK)
		return gl_fail(f, GL_E_IO, "text %s: zlib could not compress it", s->sha);
	autobuf struct gl_buf b = {0};
	gl_b64_encode(&b, z, n);
	*enc = jv_string_sized(b.data, (int)b.len);
	return 0;
}

/* The zlib stream z[0..n) inflated into *out (owned), at most max bytes,
 * all of z one stream. 0, 1 (more than max: too large), or -1 (not a
 * zlib stream, or bytes after it). */
static int inflate_capped(const unsigned char *z, size_t n, size_t max, struct gl_buf *out)
{
	z_stream zs = {0};
	if (inflateInit(&zs) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)(uintptr_t)z;
	zs.avail_in = (uInt)n;
	int rc = Z_OK;
	while (rc == Z_OK) {
		if (out->len == max) { /* full: one byte more is too much */
			unsigned char probe;
			zs.next_out = &probe;
			zs.avail_out = 1;
			rc = inflate(&zs, Z_NO_FLUSH);
			if (zs.avail_out == 0) {
				inflateEnd(&zs);
				return 1;
			}
			break;
		}
		size_t room = max - out->len < (64u << 10) ? max - out->len : (64u << 10);
		gl_buf_reserve(out, room);
		zs.next_out = (Bytef *)out->data + out->len;
		zs.avail_out = (uInt)room;
		rc = inflate(&zs, Z_NO_FLUSH);
		out->len += room - zs.avail_out;
		if (rc == Z_BUF_ERROR && zs.avail_out) /* input ended mid-stream */
			break;
		if (rc == Z_BUF_ERROR)
			rc = Z_OK;
	}
	bool whole = rc == Z_STREAM_END && zs.avail_in == 0;
	inflateEnd(&zs);
	return whole ? 0 : -1;
}

int gl_witness_snap_decode(jv enc, const char *sha, const char *what, jv *slot, size_t *len,
			   struct gl_fail *f)
{
	*slot = jv_invalid();
	if (jv_get_kind(enc) != JV_KIND_STRING)
		return gl_fail(f, GL_E_BAD_SNAPSHOT, "%s %s: not a string", what, sha);
	size_t elen = (size_t)jv_string_length_bytes(jv_copy(enc));
	if (elen > GL_WITNESS_SNAP_ENC_MAX) /* before decoding it */
		return gl_fail(f, GL_E_TOO_LARGE, "%s %s: %zu bytes encoded, more than %u",
			       what, sha, elen, GL_WITNESS_SNAP_ENC_MAX);
	size_t zlen = 0;
	autofree unsigned char *z = gl_b64_decode(jv_string_value(enc), elen, &zlen);
	if (!z)
		return gl_fail(f, GL_E_BAD_SNAPSHOT, "%s %s: not standard base64", what, sha);
	autobuf struct gl_buf text = {0};
	int rc = inflate_capped(z, zlen, GL_WITNESS_SNAPSHOT_MAX, &text);
	if (rc > 0)
		return gl_fail(f, GL_E_TOO_LARGE, "%s %s: inflates past %u bytes", what, sha,
			       GL_WITNESS_SNAPSHOT_MAX);
	if (rc < 0)
		return gl_fail(f, GL_E_BAD_SNAPSHOT, "%s %s: not one whole zlib stream",
			       what, sha);
	unsigned char h[32];
	char hex[65];
	gl_sha256(h, (unsigned char *)text.data, text.len);
	gl_hex(h, 32, hex);
	if (strcmp(hex, sha))
		return gl_fail(f, GL_E_BAD_SNAPSHOT, "%s %s: its bytes hash to %s", what,
			       sha, hex);
	jv v = gl_json_parse(text.data, text.len);
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return gl_fail(f, GL_E_BAD_SNAPSHOT, "%s %s: not a JSON object", what, sha);
	}
	*slot = v;
	if (len)
		*len = text.len;
	return 0;
}
