/* witness.c — a witness record read back by gl-replay
 * (lib/evidence/witness.c, gl_witness_parse: gl_witness_load's checks on
 * bytes). A record must be canonical JSON whose record_sha256 matches the
 * rest, so a mutated record is refused at that digest before any field is
 * checked; each input is therefore read twice: as it is, then — when it
 * is a canonical object — with its record_sha256 set to the digest of the
 * rest (as gl-run writes it), so every field check sees mutated fields;
 * a version 4 record's signature, checked last, then refuses the mutant
 * (the corpus holds signed records, so that check runs too). The slot
 * snapshots and replies a version 5 record carries are decoded too, each under its
 * own name (base64, a bounded zlib inflate, the hash, the JSON: they sit
 * behind the signature in gl-replay, out of a mutant's reach). */
#include "fuzz.h"

#include "core/sha.h"
#include "evidence/witness.h"
#include "evidence/witness_snap.h"
#include "json/json.h"

static void load(const char *buf, size_t len)
{
	struct gl_witness w;
	char sha[65];
	autofail struct gl_fail f = {0};
	gl_witness_parse(buf, len, &w, sha, &f);
	gl_witness_free(&w);
}

/* The canonical bytes of doc (borrowed) with record_sha256 made to match. */
static bool resealed(jv doc, struct gl_buf *out)
{
	autobuf struct gl_buf body = {0};
	autofail struct gl_fail f = {0};
	jv rest = jv_object_delete(jv_copy(doc), jv_string("record_sha256"));
	if (gl_canon_dump(&body, rest, &f) < 0) {
		jv_free(rest);
		return false;
	}
	unsigned char h[32];
	char hex[65];
	gl_sha256(h, body.data, body.len);
	gl_hex(h, 32, hex);
	jv sealed = jv_object_set(rest, jv_string("record_sha256"), jv_string(hex));
	int rc = gl_canon_dump(out, sealed, &f);
	jv_free(sealed);
	return rc == 0;
}

/* Each entry of doc's (borrowed) member (carried texts) decoded under its
 * name. */
static void carried(jv doc, const char *member)
{
	jv s = jv_object_get(jv_copy(doc), jv_string(member));
	if (jv_get_kind(s) == JV_KIND_OBJECT) {
		jv_object_foreach(s, k, v)
		{
			jv slot;
			autofail struct gl_fail f = {0};
			gl_witness_snap_decode(v, jv_string_value(k), "text", &slot, NULL, &f);
			jv_free(slot);
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	load(buf, size);
	jv doc = gl_canon_parse(buf, size);
	if (jv_get_kind(doc) == JV_KIND_OBJECT) {
		carried(doc, "snapshots");
		carried(doc, "replies");
		autobuf struct gl_buf b = {0};
		if (resealed(doc, &b))
			load(b.data, b.len);
	}
	jv_free(doc);
	return 0;
}
