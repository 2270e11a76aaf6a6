/* witness_write.c — build and write witness records (gl-run: paper §IV-F,
 * Definition 6; SPEC §6); see witness.h and docs/witness.md. Reading them
 * back, every field checked, is lib/evidence/witness.c. */
#define _GNU_SOURCE
#include "evidence/witness.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sha.h"
#include "evidence/witness_key.h"
#include "evidence/witness_snap.h"
#include "json/json.h"
#include "plan/labels.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "core/util.h"

/* ---- building (gl-run) -------------------------------------------------- */

jv gl_witness_entry(const char *host, const char *method, const char *digest,
		    const char *source, jv reply)
{
	/* host and method come from the copy: sanitised, so the record stays
	 * canonical JSON (no control characters). */
	char *h = host && gl_dest_ok(host, strlen(host)) ? gl_xstrdup(host)
							  : gl_xstrdup("(invalid)");
	char *m = gl_sanitize(method, strnlen(method, GL_MSG_METHOD_MAX));
	jv e = JV_OBJECT(jv_string("host"), jv_string(h), jv_string("method"), jv_string(m),
			 jv_string("digest"), jv_string(digest), jv_string("source"),
			 jv_string(source));
	if (!strcmp(source, "delivered") || !strcmp(source, "recorded"))
		e = jv_object_set(e, jv_string("reply"), jv_copy(reply));
	free(h);
	free(m);
	return e;
}

static jv json_text(jv v) /* borrows v */
{
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, v);
	return jv_string_sized(b.data, (int)b.len);
}

static jv twin_json(const struct gl_twin *t)
{
	return JV_OBJECT(jv_string("seed"), jv_string(t->seed), jv_string("sec"),
			 jv_number((double)t->sec), jv_string("usec"), jv_number((double)t->usec));
}

/* A group; its slot by hash (snap, version 3) or embedded (NULL: the
 * test build's GL_TEST_WITNESS_INLINE, version 2). */
static jv group_out(const struct gl_witness_group *g, const struct gl_witness_snap *snap)
{
	jv o = jv_copy(g->group);
	if (snap)
		o = jv_object_set(o, jv_string("slot_sha256"), jv_string(snap->sha));
	else
		o = jv_object_set(o, jv_string("slot"), json_text(g->slot));
	return jv_object_set(o, jv_string("twin"), twin_json(g->twin));
}

/* The digests of the requests to host in entries (borrowed): those that
 * counted as requests to it (denied ones never do). */
static jv sequence(jv entries, const char *host, const char *only_source)
{
	jv out = jv_array();
	jv_array_foreach(entries, i, e)
	{
		const char *h = gl_json_get_str(e, "host"), *s = gl_json_get_str(e, "source");
		if (h && s && !strcmp(h, host) && strcmp(s, "denied") &&
		    (!only_source || !strcmp(s, only_source)))
			out = jv_array_append(out, jv_string(gl_json_get_str(e, "digest")));
		jv_free(e);
	}
	return out;
}

/* Every item of the call, name order: name, label, path and dir when
 * read from a file, data when included (*with_items then set). */
static jv items_json(const struct gl_witness_in *in, bool *with_items)
{
	jv items = jv_array();
	for (size_t x = 0; x < in->nitem; x++) {
		jv it = JV_OBJECT(jv_string("name"), jv_string(in->item[x].name),
				  jv_string("label"), jv_copy(in->item[x].label));
		if (in->path && in->path[x])
			it = jv_object_set(it, jv_string("path"), jv_string(in->path[x]));
		if (in->dir && in->dir[x])
			it = jv_object_set(it, jv_string("dir"), jv_true());
		if (in->data[x]) {
			it = jv_object_set(it, jv_string("data"), jv_string(in->data[x]));
			*with_items = true;
		}
		items = jv_array_append(items, it);
	}
	return items;
}

/* Carry reply text (consumed) in *replies by its SHA-256, naming it in
 * the transcript entry *e ("reply_sha256"), when it fits in *left (a text
 * carried already costs nothing more). true, or false (text freed): it
 * does not fit, or zlib failed. */
static bool carried_reply(jv *replies, jv text, size_t *left, jv *e)
{
	struct gl_witness_snap s = {.text = jv_string_value(text),
				    .len = (size_t)jv_string_length_bytes(jv_copy(text))};
	unsigned char h[32];
	gl_sha256(h, (const unsigned char *)s.text, s.len);
	gl_hex(h, 32, s.sha);
	bool have = jv_object_has(jv_copy(*replies), jv_string(s.sha)), ok = have;
	if (!have && s.len <= *left) {
		jv enc;
		autofail struct gl_fail f = {0};
		if (gl_witness_snap_encode(&s, &enc, &f) == 0) {
			*replies = jv_object_set(*replies, jv_string(s.sha), enc);
			*left -= s.len;
			ok = true;
		}
	}
	if (ok)
		*e = jv_object_set(*e, jv_string("reply_sha256"), jv_string(s.sha));
	jv_free(text);
	return ok;
}

/* A copy's transcript (entries borrowed): replies as JSON text, at most
 * GL_WITNESS_REPLIES_MAX bytes in the transcript; a version 5 or 6 record
 * (*replies an object) carries the rest by hash, each distinct text once
 * and compressed, at most *carry_left bytes of them (witness_snap.h), so
 * a release that pads its destination's replies does not make its trigger
 * unverifiable. Past both, a reply is dropped and *complete set false. */
static jv transcript(jv entries, jv *replies, size_t *carry_left, bool *complete)
{
	jv trans = jv_array();
	size_t budget = GL_WITNESS_REPLIES_MAX;
	bool carry = jv_is_valid(*replies) && !gl_witness_replies_dropped();
	jv_array_foreach(entries, i, e)
	{
		jv rep = gl_json_get(e, "reply");
		if (jv_is_valid(rep)) {
			jv text = json_text(rep);
			size_t n = (size_t)jv_string_length_bytes(jv_copy(text));
			e = jv_object_delete(e, jv_string("reply"));
			if (n <= budget) {
				budget -= n;
				e = jv_object_set(e, jv_string("reply"), text);
			} else if (!carry) {
				jv_free(text);
				*complete = false;
			} else if (!carried_reply(replies, text, carry_left, &e)) {
				*complete = false; /* text freed */
			}
		}
		jv_free(rep);
		trans = jv_array_append(trans, e);
	}
	return trans;
}

/* The comparing copy's transcript (version 6), the mirror run's inputs
 * (docs/witness.md "The mirror run"): whole, its replies carried within
 * what T(d) left of the budget (a text T(d) carries costs nothing more),
 * or null — a mirror is never half one, and its absence only means no
 * mirror run: the witness stays complete. */
static jv mirror(const struct gl_witness_in *in, bool want, jv *replies, size_t *carry_left)
{
	if (!want)
		return jv_null();
	jv before = jv_copy(*replies);
	size_t left = *carry_left;
	bool whole = true;
	jv t = transcript(in->compared, replies, &left, &whole);
	if (whole) {
		jv_free(before);
		*carry_left = left;
		return t;
	}
	jv_free(t);
	jv_free(*replies);
	*replies = before;
	return jv_null();
}

/* snap: the slots by hash (NULL: embedded, version 2); carried (owned):
 * their encoded texts by hash (witness_snap.h), or jv_invalid() when they
 * go to the store instead; *replies: an object for the replies carried by
 * hash (versions 5 and 6), or jv_invalid() (none are); with_mirror: keep
 * the comparing copy's transcript (version 6; else null). */
static jv record(const struct gl_witness_in *in, const struct gl_witness_snap *snap,
		 jv carried, bool with_mirror, jv *replies)
{
	bool complete = true, with_items = false;
	size_t carry_left = GL_WITNESS_CARRIED_MAX;
	jv items = items_json(in, &with_items);
	jv trans = transcript(in->transcript, replies, &carry_left, &complete);
	jv call = jv_is_valid(in->call) ? json_text(in->call) : jv_string("null");
	jv o = jv_object();
#define SET(k, v) o = jv_object_set(o, jv_string(k), (v))
	SET("format", jv_string(GL_WITNESS_FORMAT));
	/* version 6: signed (witness_key.h), its snapshots and the comparing
	 * copy's transcript carried; 4: signed, the snapshots in the store (the test build's GL_TEST_WITNESS_STORE);
	 * 3: unsigned (no key: only programs of our own that write a witness
	 * to read it back); 2: the test build's inline slots */
	SET("version", jv_number(!snap	       ? 2
				 : !in->signer ? 3
				 : jv_is_valid(carried) ? GL_WITNESS_VERSION
						       : 4));
	if (snap && in->signer) {
		char pk[65];
		gl_hex(in->signer->pk, 32, pk);
		SET("producer", JV_OBJECT(jv_string("keyid"), jv_string(in->signer->keyid),
					  jv_string("public"), jv_string(pk)));
		SET("limits", gl_limits_json(in->limits ? in->limits : &GL_LIMITS_DEFAULT));
	}
	SET("id", jv_string(in->id));
	SET("call", call);
	SET("release", jv_string(in->release));
	SET("function", jv_string(in->function));
	SET("mode", jv_string(in->mode));
	SET("args", json_text(in->args));
	SET("destinations", jv_copy(in->dests));
	SET("items", items);
	SET("items_included", jv_bool(with_items));
	SET("destination", jv_string(in->destination));
	SET("trigger", JV_OBJECT(jv_string("kind"), jv_string(in->kind), jv_string("position"),
				 jv_number((double)in->position)));
	SET("served", group_out(&in->served, snap ? &snap[0] : NULL));
	SET("comparing", group_out(&in->comparing, snap ? &snap[1] : NULL));
	SET("transcript", trans);
	SET("delivered", sequence(in->transcript, in->destination, "delivered"));
	SET("compared", sequence(in->compared, in->destination, NULL));
	SET("deadline_ms", jv_number((double)in->deadline_ms));
	SET("complete", jv_bool(complete));
	if (in->import_twin)
		SET("import_twin", twin_json(in->import_twin));
	if (in->config)
		SET("config", gl_config_public(in->config));
	if (jv_is_valid(carried)) {
		SET("comparing_transcript", mirror(in, with_mirror, replies, &carry_left));
		SET("snapshots", carried);
		SET("replies", jv_copy(*replies));
	}
#undef SET
	return o;
}

/* The canonical bytes of rec signed by signer (NULL: not signed) and with
 * its record_sha256 set: the signature is over the digest of everything
 * else (witness_key.h), the self-digest over everything but itself, so a
 * changed byte is named by the self-digest first, as before signatures.
 * Consumes rec. 0, or -1 with f. */
static int seal(jv rec, const struct gl_key *signer, struct gl_buf *out, struct gl_fail *f)
{
	char hex[65];
	if (signer) {
		char sig[129];
		if (gl_witness_digest(rec, true, hex, f) < 0) {
			jv_free(rec);
			return -1;
		}
		gl_witness_sign(signer, hex, sig);
		rec = jv_object_set(rec, jv_string("signature"), jv_string(sig));
	}
	if (gl_witness_digest(rec, false, hex, f) < 0) {
		jv_free(rec);
		return -1;
	}
	rec = jv_object_set(rec, jv_string("record_sha256"), jv_string(hex));
	int rc = gl_canon_dump(out, rec, f);
	jv_free(rec);
	return rc < 0 ? -1 : 0;
}

/* The slot's JSON text as the broker serialised it, and its SHA-256. */
static void snapshot(jv slot, struct gl_buf *b, struct gl_witness_snap *s)
{
	gl_json_dump(b, slot);
	unsigned char h[32];
	gl_sha256(h, (unsigned char *)b->data, b->len);
	gl_hex(h, 32, s->sha);
	s->text = b->data;
	s->len = b->len;
}

/* The snapshots the record carries: {sha: encoded text}, one entry when
 * both groups name the same slot. 0, or -1 with f. */
static int carry(const struct gl_witness_snap snap[2], jv *out, struct gl_fail *f)
{
	*out = jv_object();
	for (int i = 0; i < 2; i++) {
		if (i == 1 && !strcmp(snap[1].sha, snap[0].sha))
			break;
		jv enc;
		if (gl_witness_snap_encode(&snap[i], &enc, f) < 0) {
			jv_free(*out);
			*out = jv_invalid();
			return -1;
		}
		*out = jv_object_set(*out, jv_string(snap[i].sha), enc);
	}
	return 0;
}

/* The record sealed into *b (emptied first); enc and replies borrowed
 * (the carried snapshots; an empty object, or jv_invalid()). 0, or -1
 * with f. */
static int sealed(const struct gl_witness_in *in, const struct gl_witness_snap *snap, jv enc,
		  bool with_mirror, jv replies, struct gl_buf *b, struct gl_fail *f)
{
	autofail struct gl_fail why = {0};
	jv rep = jv_copy(replies);
	jv rec = record(in, snap, jv_copy(enc), with_mirror, &rep);
	jv_free(rep);
	b->len = 0;
	if (seal(rec, snap ? in->signer : NULL, b, &why) < 0)
		return gl_fail(f, GL_E_IO, "not canonical JSON: %s", gl_fail_detail(&why));
	return 0;
}

int gl_witness_save(const char *home, const struct gl_witness_in *in, char **path, char sha256[65],
		    bool *too_large, struct gl_fail *f)
{
	autobuf struct gl_buf b = {0}, s0 = {0}, s1 = {0};
	struct gl_witness_snap snap[2];
	bool inl = gl_witness_inline();
	/* a signed witness carries its snapshots (SPEC §7: one self-contained
	 * file), unless the test build keeps them in the store */
	bool carried = !inl && in->signer && !gl_witness_store_snapshots();
	jv enc = jv_invalid(), replies = carried ? jv_object() : jv_invalid();
	*too_large = false;
	/* Bounded evidence (issue 15): each slot as delivered, once, by hash. */
	if (!inl) {
		snapshot(in->served.slot, &s0, &snap[0]);
		snapshot(in->comparing.slot, &s1, &snap[1]);
	}
	if (carried && carry(snap, &enc, f) < 0) {
		jv_free(replies);
		return -1;
	}
	/* version 6 keeps the comparing copy's transcript unless that alone
	 * takes the record past the per-witness cap: then it goes, not the
	 * witness (no mirror run is all that is lost) */
	if (sealed(in, inl ? NULL : snap, enc, carried, replies, &b, f) < 0 ||
	    (carried && b.len > GL_WITNESS_MAX &&
	     sealed(in, snap, enc, false, replies, &b, f) < 0)) {
		jv_free(enc);
		jv_free(replies);
		return -1;
	}
	jv_free(enc);
	jv_free(replies);
	autofree char *dir = gl_xasprintf("%s/witnesses", home);
	char *p = NULL;
	if (!inl) {
		if (b.len > GL_WITNESS_MAX) {
			*too_large = true;
			return gl_fail(f, GL_E_TOO_LARGE, "%s", GL_WITNESS_TOO_LARGE_TEXT);
		}
		/* carried: the record is all there is to store and to count */
		if (gl_witness_store(home, in->id, in->release, b.data, b.len, snap,
				     carried ? 0 : 2, in->caps, &p, too_large, f) < 0)
			return -1; /* too_large or io, as *too_large says */
	} else {
		if (gl_mkdir_p(dir, 0700) < 0)
			return gl_fail_errno(f, GL_E_IO, "%s", dir);
		p = gl_xasprintf("%s/%s.json", dir, in->id);
		if (gl_atomic_write(p, b.data, b.len, 0600) < 0) {
			gl_fail_errno(f, GL_E_IO, "%s", p);
			free(p);
			return -1;
		}
	}
	unsigned char h[32];
	gl_sha256(h, (unsigned char *)b.data, b.len);
	gl_hex(h, 32, sha256);
	*path = p;
	return 0;
}
