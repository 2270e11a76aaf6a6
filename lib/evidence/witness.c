/* witness.c — strictly read witness records (gl-replay: every field
 * checked); see witness.h and docs/witness.md (paper §IV-F, Definition 6).
 * Building and writing them is lib/evidence/witness_write.c. */
#define _GNU_SOURCE
#include "evidence/witness.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
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

/* ---- reading (gl-replay): every field checked ------------------------- */

struct rd {
	struct gl_fail *f; /* the first failure, bad_witness */
	int bad;
};

GL_PRINTF(2, 3)
static int fail(struct rd *r, const char *fmt, ...)
{
	if (r->bad++)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	gl_fail_vset(r->f, GL_E_BAD_WITNESS, fmt, ap);
	va_end(ap);
	return -1;
}

/* Exactly these keys (and, optionally, those in opt). */
static int keys(struct rd *r, jv o, const char *where, const char *const *req,
		const char *const *opt)
{
	if (jv_get_kind(o) != JV_KIND_OBJECT)
		return fail(r, "%s: not an object", where);
	size_t n = 0;
	for (; req[n]; n++)
		if (!jv_object_has(jv_copy(o), jv_string(req[n])))
			return fail(r, "%s: field \"%s\" missing", where, req[n]);
	jv_object_foreach(o, k, v)
	{
		bool known = false;
		for (size_t i = 0; req[i] && !known; i++)
			known = !strcmp(jv_string_value(k), req[i]);
		for (size_t i = 0; opt && opt[i] && !known; i++)
			known = !strcmp(jv_string_value(k), opt[i]);
		if (!known) {
			autofree char *q = gl_quote(jv_string_value(k),
						    (size_t)jv_string_length_bytes(jv_copy(k)));
			fail(r, "%s: unknown field %s", where, q);
		}
		jv_free(k);
		jv_free(v);
	}
	return r->bad ? -1 : 0;
}

static const char *str(struct rd *r, jv o, const char *key, const char *where)
{
	const char *s = gl_json_get_str(o, key);
	if (!s)
		fail(r, "%s.%s: not a string", where, key);
	return s;
}

static bool hex64(const char *s)
{
	return s && gl_sha256_hex_ok(s, strlen(s));
}

static int64_t integer(struct rd *r, jv o, const char *key, const char *where, int64_t lo,
		       int64_t hi)
{
	int64_t v = 0;
	if (gl_json_get_int(o, key, &v) < 0 || v < lo || v > hi)
		fail(r, "%s.%s: not an integer in [%lld, %lld]", where, key, (long long)lo,
		     (long long)hi);
	return v;
}

/* An array of at most max strings, each accepted by ok (NULL: any). */
static jv strings(struct rd *r, jv o, const char *key, const char *where, size_t max,
		  bool (*ok)(const char *))
{
	jv a = jv_object_get(jv_copy(o), jv_string(key));
	if (jv_get_kind(a) != JV_KIND_ARRAY || (size_t)jv_array_length(jv_copy(a)) > max) {
		fail(r, "%s.%s: not an array of at most %zu strings", where, key, max);
	} else {
		jv_array_foreach(a, i, s)
		{
			if (jv_get_kind(s) != JV_KIND_STRING || (ok && !ok(jv_string_value(s))))
				fail(r, "%s.%s[%d]: not a valid string here", where, key, i);
			jv_free(s);
		}
	}
	jv_free(a); /* the doc holds it */
	return jv_object_get(jv_copy(o), jv_string(key));
}

static bool host_ok(const char *s) { return gl_dest_ok(s, strlen(s)); }
static bool tag_ok(const char *s) { return gl_tag_ok(s, strlen(s)); }
static bool name_ok(const char *s) { return *s && strlen(s) <= 4096; }

/* JSON text in a string field, parsed (owned), of the given kind. */
static jv text(struct rd *r, jv o, const char *key, const char *where, jv_kind kind)
{
	const char *s = str(r, o, key, where);
	if (!s)
		return jv_invalid();
	jv v = gl_json_parse(s, strlen(s));
	if (!jv_is_valid(v) || jv_get_kind(v) != kind) {
		jv_free(v);
		fail(r, "%s.%s: not JSON text of the right kind", where, key);
		return jv_invalid();
	}
	return v;
}

static bool in_names(jv names, const char *s)
{
	bool found = false;
	jv_array_foreach(names, i, n)
	{
		found |= !strcmp(jv_string_value(n), s);
		jv_free(n);
	}
	return found;
}

/* τ = {"seed","sec","usec"} at o[key] into *t. */
static void twin_in(struct rd *r, jv o, const char *key, const char *tw, struct gl_twin *t)
{
	static const char *const treq[] = {"sec", "seed", "usec", NULL};
	jv v = jv_object_get(jv_copy(o), jv_string(key));
	if (keys(r, v, tw, treq, NULL) == 0) {
		const char *seed = str(r, v, "seed", tw);
		if (seed && !hex64(seed))
			fail(r, "%s.seed: not 64 lowercase hex", tw);
		else if (seed)
			memcpy(t->seed, seed, 65);
		t->sec = integer(r, v, "sec", tw, 0, (int64_t)1 << 40);
		t->usec = integer(r, v, "usec", tw, 0, 999999);
	}
	jv_free(v);
}

/* GL_TESTING builds with GL_TEST_WITNESS_VIEWS_OFF=1: a group's view is
 * taken as the record says (the framing by a view tests/witness-trust.bats
 * shows). Always false otherwise. */
static bool views_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_WITNESS_VIEWS_OFF");
}

/* Is every tag of label (an array of strings, borrowed) in set? */
static bool within(jv label, jv set)
{
	bool all = true;
	jv_array_foreach(label, i, t)
	{
		all = all && in_names(set, jv_string_value(t));
		jv_free(t);
	}
	return all;
}

/* A group's view is derived, never taken: V(g) = {x : ℓ(x) ⊆ κ(g)}
 * (Definition 2; the plan's groups share one view, and κ(g) is the meet
 * of their clearances, lib/plan/plan.c), from the record's own labels and
 * horizon. A view that leaves out an item its horizon covers would make an
 * honest request to d look like a leak (framing by a view); one that holds
 * an item its horizon does not cover, a leak look honest. Either is
 * refused by name. */
static void derived_view(struct rd *r, jv o, const char *where, const struct gl_witness_grp *g,
			 const struct gl_witness *w)
{
	if (r->bad || views_off())
		return;
	jv hz = jv_object_get(jv_copy(o), jv_string("horizon"));
	for (size_t i = 0; i < w->nitem && !r->bad; i++) {
		bool covered = within(w->item[i].label, hz);
		if (covered != in_names(g->view, w->item[i].name)) {
			autofree char *q = gl_quote(w->item[i].name, strlen(w->item[i].name));
			fail(r, "%s.view: %s item %s, whose label the horizon %s (V = {x : label(x) "
				"within horizon}, Definition 2)",
			     where, covered ? "leaves out" : "holds", q,
			     covered ? "covers" : "does not cover");
		}
	}
	jv_free(hz);
}

static void group_in(struct rd *r, jv doc, const char *where, struct gl_witness_grp *g,
		     const struct gl_witness *w)
{
	static const char *const req[] = {"consumers", "destinations", "horizon", "slot",
					  "twin", "view", NULL};
	static const char *const req3[] = {"consumers", "destinations", "horizon",
					   "slot_sha256", "twin", "view", NULL};
	jv o = jv_object_get(jv_copy(doc), jv_string(where));
	g->view = jv_invalid();
	g->slot = jv_invalid();
	g->slot_sha256 = NULL;
	if (keys(r, o, where, w->version >= 3 ? req3 : req, NULL) == 0) {
		jv_free(strings(r, o, "destinations", where, 64, host_ok));
		jv_free(strings(r, o, "consumers", where, 64, name_ok));
		jv_free(strings(r, o, "horizon", where, 64, tag_ok));
		g->view = strings(r, o, "view", where, 1024, name_ok);
		if (!r->bad)
			jv_array_foreach(g->view, i, n)
			{
				if (gl_witness_item(w, jv_string_value(n)) < 0)
					fail(r, "%s.view[%d]: not an item of the call", where, i);
				jv_free(n);
			}
		derived_view(r, o, where, g, w);
		if (w->version >= 3) {
			g->slot_sha256 = str(r, o, "slot_sha256", where);
			if (g->slot_sha256 && !hex64(g->slot_sha256))
				fail(r, "%s.slot_sha256: not 64 lowercase hex", where);
		} else {
			g->slot = text(r, o, "slot", where, JV_KIND_OBJECT);
		}
		autofree char *tw = gl_xasprintf("%s.twin", where);
		twin_in(r, o, "twin", tw, &g->twin);
	}
	jv_free(o);
}

/* A copy's transcript t (in doc), named name in errors, into *out. A
 * reply is required of a delivered or recorded entry in a complete
 * witness, and of every one in the comparing copy's (mirror: kept whole or
 * not at all). */
static void transcript_in(struct rd *r, struct gl_witness *w, jv t, const char *name,
			  bool whole, struct gl_witness_trans *out)
{
	static const char *const req[] = {"digest", "host", "method", "source", NULL};
	static const char *const opt[] = {"reply", "reply_sha256", NULL};
	out->entries = t;
	if (jv_get_kind(t) != JV_KIND_ARRAY ||
	    jv_array_length(jv_copy(t)) > GL_WITNESS_REQUESTS_MAX) {
		fail(r, "%s: not an array of at most %d entries", name, GL_WITNESS_REQUESTS_MAX);
		return;
	}
	out->n = (size_t)jv_array_length(jv_copy(t));
	out->reply = gl_xcalloc(out->n ? out->n : 1, sizeof *out->reply);
	out->reply_sha = gl_xcalloc(out->n ? out->n : 1, sizeof *out->reply_sha);
	for (size_t i = 0; i < out->n; i++)
		out->reply[i] = jv_null();
	jv_array_foreach(t, i, e)
	{
		char where[48];
		snprintf(where, sizeof where, "%s[%d]", name, i);
		if (keys(r, e, where, req, opt) == 0) {
			const char *src = str(r, e, "source", where), *dg = str(r, e, "digest", where);
			str(r, e, "host", where);
			str(r, e, "method", where);
			bool replied = src && (!strcmp(src, "delivered") || !strcmp(src, "recorded"));
			bool inl = jv_object_has(jv_copy(e), jv_string("reply")),
			     byhash = jv_object_has(jv_copy(e), jv_string("reply_sha256"));
			if (src && !replied && strcmp(src, "placeholder") && strcmp(src, "denied"))
				fail(r, "%s.source: unknown", where);
			else if (dg && !hex64(dg) && !(src && !strcmp(src, "denied") && !*dg))
				fail(r, "%s.digest: not 64 lowercase hex", where);
			else if ((inl || byhash) && !replied)
				fail(r, "%s.reply: only delivered and recorded requests have one", where);
			else if (inl && byhash)
				fail(r, "%s: both reply and reply_sha256", where);
			else if (byhash && w->version < 5)
				fail(r, "%s.reply_sha256: not in a version %lld witness", where,
				     (long long)w->version);
			else if (replied && (w->complete || whole) && !inl && !byhash)
				fail(r, "%s.reply: missing in a complete transcript", where);
			else if (inl) {
				jv_free(out->reply[i]);
				out->reply[i] = text(r, e, "reply", where, JV_KIND_OBJECT);
			} else if (byhash) {
				out->reply_sha[i] = str(r, e, "reply_sha256", where);
				if (out->reply_sha[i] && !hex64(out->reply_sha[i]))
					fail(r, "%s.reply_sha256: not 64 lowercase hex", where);
			}
		}
		jv_free(e);
	}
}

/* Version 6: "comparing_transcript", the comparing copy's transcript (the
 * mirror run's inputs), or null when it did not fit; older versions have
 * none. */
static void mirror_in(struct rd *r, struct gl_witness *w, jv d)
{
	jv t = jv_object_get(jv_copy(d), jv_string("comparing_transcript"));
	bool has = jv_is_valid(t);
	w->ctrans.entries = jv_invalid();
	if (w->version < 6 && has)
		fail(r, "comparing_transcript: not in a version %lld witness",
		     (long long)w->version);
	else if (w->version >= 6 && !has)
		fail(r, "witness: field \"comparing_transcript\" missing");
	else if (has && jv_get_kind(t) != JV_KIND_NULL) {
		w->mirrored = true;
		transcript_in(r, w, t, "comparing_transcript", true, &w->ctrans);
		return; /* t kept in w->ctrans */
	}
	jv_free(t);
}

/* An item's optional "path" (absolute, clean, at most GL_PATH_MAX bytes)
 * and "dir" (true, only with a path). */
static void item_path_in(struct rd *r, jv it, const char *where, struct gl_witness *w, int i)
{
	jv d = jv_object_get(jv_copy(it), jv_string("dir"));
	const char *p = gl_json_get_str(it, "path");
	if (jv_object_has(jv_copy(it), jv_string("path")) &&
	    (!p || !gl_path_clean(p, strlen(p)) || strlen(p) > GL_PATH_MAX))
		fail(r, "%s.path: not an absolute normalised path", where);
	if (jv_is_valid(d) && (jv_get_kind(d) != JV_KIND_TRUE || !p))
		fail(r, "%s.dir: not true, or without a path", where);
	w->path[i] = p;
	w->dir[i] = jv_get_kind(d) == JV_KIND_TRUE;
	jv_free(d);
}

static void items_in(struct rd *r, struct gl_witness *w)
{
	static const char *const req[] = {"label", "name", NULL};
	static const char *const opt[] = {"data", "dir", "path", NULL};
	jv a = jv_object_get(jv_copy(w->doc), jv_string("items"));
	if (jv_get_kind(a) != JV_KIND_ARRAY || jv_array_length(jv_copy(a)) > 1024) {
		fail(r, "items: not an array of at most 1024 items");
		jv_free(a);
		return;
	}
	w->nitem = (size_t)jv_array_length(jv_copy(a));
	w->item = gl_xcalloc(w->nitem ? w->nitem : 1, sizeof *w->item);
	w->path = gl_xcalloc(w->nitem ? w->nitem : 1, sizeof *w->path);
	w->dir = gl_xcalloc(w->nitem ? w->nitem : 1, sizeof *w->dir);
	const char *prev = NULL;
	jv_array_foreach(a, i, it)
	{
		char where[32];
		snprintf(where, sizeof where, "items[%d]", i);
		w->item[i].label = jv_null();
		if (keys(r, it, where, req, opt) == 0) {
			const char *name = str(r, it, "name", where);
			jv_free(strings(r, it, "label", where, 64, tag_ok));
			const char *d = gl_json_get_str(it, "data");
			if (name && (!name_ok(name) || (prev && strcmp(prev, name) >= 0)))
				fail(r, "%s.name: empty, too long, or not in strict name order", where);
			if (jv_object_has(jv_copy(it), jv_string("data")) &&
			    (!d || !w->items_included))
				fail(r, "%s.data: present although items_included is false", where);
			if (d) {
				size_t n;
				unsigned char *raw = gl_b64_decode(d, strlen(d), &n);
				if (!raw)
					fail(r, "%s.data: not standard base64", where);
				free(raw);
			}
			item_path_in(r, it, where, w, i);
			w->item[i].name = prev = name;
			w->item[i].label = jv_object_get(jv_copy(it), jv_string("label"));
			w->item[i].b64 = d;
		}
		jv_free(it); /* strings stay alive in w->doc */
	}
	jv_free(a);
}

int gl_witness_item(const struct gl_witness *w, const char *name)
{
	for (size_t i = 0; i < w->nitem; i++)
		if (w->item[i].name && !strcmp(w->item[i].name, name))
			return (int)i;
	return -1;
}

static bool digests_ok(struct rd *r, jv a, const char *key)
{
	if (jv_get_kind(a) != JV_KIND_ARRAY ||
	    jv_array_length(jv_copy(a)) > GL_WITNESS_REQUESTS_MAX)
		return fail(r, "%s: not an array of digests", key), false;
	jv_array_foreach(a, i, s)
	{
		if (jv_get_kind(s) != JV_KIND_STRING || !hex64(jv_string_value(s)))
			fail(r, "%s[%d]: not 64 lowercase hex", key, i);
		jv_free(s);
	}
	return !r->bad;
}

/* The call a witness is about: its id, release, function, mode, call id,
 * arguments, destinations and trigger. */
static void call_fields(struct rd *r, struct gl_witness *w, jv d)
{
	static const char *const treq[] = {"kind", "position", NULL};
	w->id = str(r, d, "id", "witness");
	if (w->id && (strlen(w->id) != 32 || strspn(w->id, "0123456789abcdef") != 32))
		fail(r, "id: not 32 lowercase hex");
	w->release = str(r, d, "release", "witness");
	if (w->release && !hex64(w->release))
		fail(r, "release: not a SHA-256 in lowercase hex");
	w->function = str(r, d, "function", "witness");
	if (w->function && (!*w->function || strlen(w->function) > 128))
		fail(r, "function: empty or longer than 128 bytes");
	w->mode = str(r, d, "mode", "witness");
	if (w->mode && strcmp(w->mode, "germline") && strcmp(w->mode, "no_twin"))
		fail(r, "mode: not germline or no_twin");
	const char *cs = str(r, d, "call", "witness");
	w->call = cs ? gl_json_parse(cs, strlen(cs)) : jv_invalid();
	jv_kind ck = jv_get_kind(w->call);
	if (ck != JV_KIND_STRING && ck != JV_KIND_NUMBER && ck != JV_KIND_NULL) {
		jv_free(w->call);
		w->call = jv_null();
		fail(r, "call: not JSON text of a string, number or null");
	}
	w->args = text(r, d, "args", "witness", JV_KIND_OBJECT);
	w->dests = strings(r, d, "destinations", "witness", 64, host_ok);
	w->destination = str(r, d, "destination", "witness");
	if (w->destination && jv_is_valid(w->dests) && !r->bad &&
	    !in_names(w->dests, w->destination))
		fail(r, "destination: not one of destinations");
	jv t = jv_object_get(jv_copy(d), jv_string("trigger"));
	if (keys(r, t, "trigger", treq, NULL) == 0) {
		w->kind = str(r, t, "kind", "trigger");
		if (w->kind && strcmp(w->kind, "mismatch") && strcmp(w->kind, "extra") &&
		    strcmp(w->kind, "missing"))
			fail(r, "trigger.kind: not mismatch, extra or missing");
		w->position = integer(r, t, "position", "trigger", 1, GL_WITNESS_REQUESTS_MAX + 1);
	}
	jv_free(t);
}

/* Version 4 has "producer" {"keyid","public"} (the keyid that of the
 * public key) and "signature" (128 hex); older versions have neither.
 * The signature itself is checked once the record is (gl_witness_parse). */
static void producer_in(struct rd *r, struct gl_witness *w, jv d)
{
	static const char *const preq[] = {"keyid", "public", NULL};
	bool has_p = jv_object_has(jv_copy(d), jv_string("producer"));
	bool has_s = jv_object_has(jv_copy(d), jv_string("signature"));
	if (w->version < 4) {
		if (has_p || has_s)
			fail(r, "producer, signature: not in a version %lld witness",
			     (long long)w->version);
		return;
	}
	if (!has_p || !has_s) {
		fail(r, "witness: field \"%s\" missing", has_p ? "signature" : "producer");
		return;
	}
	jv p = jv_object_get(jv_copy(d), jv_string("producer"));
	if (keys(r, p, "producer", preq, NULL) == 0) {
		const char *id = str(r, p, "keyid", "producer");
		const char *pub = str(r, p, "public", "producer");
		unsigned char pk[32];
		char want[GL_KEYID_HEX];
		if (!hex64(id) || !hex64(pub) || gl_unhex(pub, 64, pk, sizeof pk) < 0) {
			fail(r, "producer.keyid, producer.public: not 64 lowercase hex");
		} else {
			gl_keyid(pk, want);
			if (strcmp(want, id))
				fail(r, "producer.keyid: not the keyid of producer.public");
		}
		w->producer = id; /* in doc; trusted only once the signature verifies */
	}
	jv_free(p);
	const char *sig = gl_json_get_str(d, "signature");
	if (!sig || strlen(sig) != 128 || strspn(sig, "0123456789abcdef") != 128)
		fail(r, "signature: not 128 lowercase hex");
}

/* Version 4 records the bounds its copies ran under; older versions ran
 * under the defaults (or a policy nothing recorded). */
static void limits_in(struct rd *r, struct gl_witness *w, jv d)
{
	jv l = jv_object_get(jv_copy(d), jv_string("limits"));
	bool has = jv_is_valid(l);
	w->limits = GL_LIMITS_DEFAULT;
	autofail struct gl_fail lf = {0};
	if (w->version < 4 && has)
		fail(r, "limits: not in a version %lld witness", (long long)w->version);
	else if (w->version >= 4 && !has)
		fail(r, "witness: field \"limits\" missing");
	else if (has && gl_limits_read(l, &w->limits, "limits", &lf) < 0)
		fail(r, "%s", gl_fail_detail(&lf));
	jv_free(l);
}

/* The operator's public configuration the germline ran with (written since
 * it exists; never a secret's value: a record that carries one is refused). */
static void config_in(struct rd *r, struct gl_witness *w, jv d)
{
	jv c = jv_object_get(jv_copy(d), jv_string("config"));
	autofail struct gl_fail cf = {0};
	if (jv_is_valid(c) && !r->bad) {
		const char *rel = gl_json_get_str(d, "release");
		if (gl_config_parse(c, rel ? rel : "release", true, &w->config, &cf) < 0)
			fail(r, "%s", gl_fail_detail(&cf));
		else
			w->configured = true;
	}
	jv_free(c);
}

/* Is name a slot snapshot one of w's groups names? */
static bool slot_named(const struct gl_witness *w, const char *name)
{
	return !strcmp(name, w->served.slot_sha256) || !strcmp(name, w->comparing.slot_sha256);
}

static bool trans_names(const struct gl_witness_trans *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->reply_sha[i] && !strcmp(t->reply_sha[i], name))
			return true;
	return false;
}

/* Is name a reply one of w's transcripts names by hash? */
static bool reply_named(const struct gl_witness *w, const char *name)
{
	return trans_names(&w->trans, name) || trans_names(&w->ctrans, name);
}

/* A version 5 record's carried texts, member "snapshots" (the slots its
 * groups name) or "replies" (those its transcript names by hash): exactly
 * those named (by named), each an encoded string; decoding, hashing and
 * parsing them is gl_witness_snapshots', whose errors (too_large,
 * bad_snapshot) are counted events for a trusted witness
 * (witness_snap.h). Older versions carry none. */
static void carried_in(struct rd *r, const struct gl_witness *w, jv d, const char *member,
		       bool (*named)(const struct gl_witness *, const char *), const char *by)
{
	jv s = jv_object_get(jv_copy(d), jv_string(member));
	bool has = jv_is_valid(s);
	if (w->version < 5 && has)
		fail(r, "%s: not in a version %lld witness", member, (long long)w->version);
	else if (w->version >= 5 && !has)
		fail(r, "witness: field \"%s\" missing", member);
	else if (has && jv_get_kind(s) != JV_KIND_OBJECT)
		fail(r, "%s: not an object", member);
	else if (has && !r->bad) {
		jv_object_foreach(s, k, v)
		{
			const char *name = jv_string_value(k);
			if (!named(w, name))
				fail(r, "%s: %s is named by %s", member, hex64(name) ? name : "a key",
				     by);
			else if (jv_get_kind(v) != JV_KIND_STRING)
				fail(r, "%s.%s: not a string", member, name);
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(s);
}

static void check(struct rd *r, struct gl_witness *w)
{
	static const char *const req[] = {
	    "args", "call", "compared", "comparing", "complete", "deadline_ms", "delivered",
	    "destination", "destinations", "format", "function", "id", "items", "items_included",
	    "mode", "record_sha256", "release", "served", "transcript", "trigger", "version",
	    NULL};
	static const char *const opt[] = {"comparing_transcript", "config", "import_twin", "limits",
					  "producer", "replies", "signature", "snapshots", NULL};
	jv d = w->doc;
	if (keys(r, d, "witness", req, opt) < 0)
		return;
	const char *fmt = str(r, d, "format", "witness");
	if (fmt && strcmp(fmt, GL_WITNESS_FORMAT))
		fail(r, "format: not \"%s\"", GL_WITNESS_FORMAT);
	w->version =
	    integer(r, d, "version", "witness", GL_WITNESS_VERSION_MIN, GL_WITNESS_VERSION);
	w->import_twinned = jv_object_has(jv_copy(d), jv_string("import_twin"));
	if (r->bad)
		return; /* the version decides the groups' fields */
	producer_in(r, w, d);
	limits_in(r, w, d);
	config_in(r, w, d);
	if (w->import_twinned && w->version < 2)
		fail(r, "import_twin: not in a version 1 witness");
	else if (w->import_twinned)
		twin_in(r, d, "import_twin", "import_twin", &w->import_twin);
	call_fields(r, w, d);
	w->deadline_ms = integer(r, d, "deadline_ms", "witness", 1, 3600000);
	int c = gl_json_get_bool(d, "complete", -1), wi = gl_json_get_bool(d, "items_included", -1);
	if (c < 0 || wi < 0)
		fail(r, "complete, items_included: not booleans");
	w->complete = c == 1;
	w->items_included = wi == 1;
	items_in(r, w);
	if (r->bad)
		return;
	group_in(r, d, "served", &w->served, w);
	group_in(r, d, "comparing", &w->comparing, w);
	if (!r->bad)
		jv_array_foreach(w->served.view, i, n)
		{
			if (!in_names(w->comparing.view, jv_string_value(n)))
				fail(r, "served.view[%d]: not in comparing.view (W must contain V(d))",
				     i);
			jv_free(n);
		}
	transcript_in(r, w, jv_object_get(jv_copy(d), jv_string("transcript")), "transcript", false,
		      &w->trans);
	mirror_in(r, w, d);
	w->delivered = jv_object_get(jv_copy(d), jv_string("delivered"));
	w->compared = jv_object_get(jv_copy(d), jv_string("compared"));
	digests_ok(r, w->delivered, "delivered");
	digests_ok(r, w->compared, "compared");
	carried_in(r, w, d, "snapshots", slot_named, "neither group");
	carried_in(r, w, d, "replies", reply_named, "no transcript entry");
}

/* An empty witness: every jv invalid, so gl_witness_free is safe. */
static void witness_init(struct gl_witness *w)
{
	memset(w, 0, sizeof *w);
	w->doc = w->call = w->args = w->dests = w->trans.entries = w->ctrans.entries =
	    w->delivered = w->compared = w->served.view = w->served.slot = w->comparing.view =
		w->comparing.slot = jv_invalid();
}

int gl_witness_load(const char *path, struct gl_witness *w, char sha256[65], struct gl_fail *f)
{
	witness_init(w);
	autofree char *buf = NULL;
	size_t len = 0;
	/* A regular file only: a FIFO or a device named by a stream must not
	 * block or feed the reader forever. */
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return gl_fail(f, GL_E_IO, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return gl_fail(f, GL_E_IO, "not a regular file");
	if ((uint64_t)st.st_size > GL_WITNESS_MAX) /* before reading it (issue 15) */
		return gl_fail(f, GL_E_TOO_LARGE, "%lld bytes, larger than %u",
			       (long long)st.st_size, GL_WITNESS_MAX);
	if (gl_read_fd_capped(fd, GL_WITNESS_MAX, &buf, &len) < 0) {
		if (errno == EFBIG)
			return gl_fail(f, GL_E_TOO_LARGE, "larger than %u bytes", GL_WITNESS_MAX);
		return gl_fail(f, GL_E_IO, "%s", strerror(errno));
	}
	return gl_witness_parse(buf, len, w, sha256, f);
}

/* A version 4 record's signature (its fields checked): over the digest
 * of the record without "record_sha256" and "signature"
 * (lib/evidence/witness_key.h). 0, or -1. */
static int signed_ok(const struct gl_witness *w)
{
	jv p = jv_object_get(jv_copy(w->doc), jv_string("producer"));
	const char *pub = gl_json_get_str(p, "public");
	unsigned char pk[32];
	int ok = pub && gl_unhex(pub, 64, pk, sizeof pk) == 0;
	jv_free(p);
	autofail struct gl_fail why = {0};
	char hex[65];
	if (!ok || gl_witness_digest(w->doc, true, hex, &why) < 0)
		return -1;
	return gl_witness_sig_ok(pk, hex, gl_json_get_str(w->doc, "signature")) ? 0 : -1;
}

int gl_witness_parse(const char *buf, size_t len, struct gl_witness *w, char sha256[65],
		     struct gl_fail *f)
{
	witness_init(w);
	unsigned char h[32];
	gl_sha256(h, (const unsigned char *)buf, len);
	gl_hex(h, 32, sha256);
	w->doc = gl_canon_parse(buf, len);
	if (!jv_is_valid(w->doc)) {
		jv msg = jv_invalid_get_msg(w->doc);
		w->doc = jv_invalid();
		gl_fail(f, GL_E_BAD_WITNESS, "not a canonical JSON record (truncated or edited?): %s",
			jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "invalid");
		jv_free(msg);
		return -1;
	}
	/* The self-digest first: a changed byte anywhere is named as such. */
	const char *rs = gl_json_get_str(w->doc, "record_sha256");
	if (jv_get_kind(w->doc) != JV_KIND_OBJECT || !hex64(rs))
		return gl_fail(f, GL_E_BAD_WITNESS, "record_sha256: missing or not 64 lowercase hex");
	autofail struct gl_fail why = {0}; /* a digest that cannot match says it */
	char hex[65] = "";
	int rc = gl_witness_digest(w->doc, false, hex, &why);
	if (rc < 0 || strcmp(hex, rs))
		return gl_fail(f, GL_E_BAD_WITNESS,
			       "record_sha256 does not match the record: the witness was "
			       "changed after gl-run wrote it");
	struct rd r = {.f = f};
	check(&r, w);
	if (!r.bad && w->version >= 4 && signed_ok(w) < 0) {
		w->producer = NULL;
		return gl_fail(f, GL_E_BAD_WITNESS,
			       "signature: does not verify with producer.public (the record was "
			       "changed after it was signed, or signed by another key)");
	}
	if (r.bad)
		w->producer = NULL;
	return r.bad ? -1 : 0;
}

/* The replies of transcript t carried by hash, into t->reply: each
 * distinct text decoded once (done: sha → parsed reply, shared by both
 * transcripts), at most GL_WITNESS_CARRIED_MAX bytes in all (*total). */
static int trans_replies(jv carried, jv *done, size_t *total, struct gl_witness_trans *t,
			 struct gl_fail *f)
{
	int rc = 0;
	for (size_t i = 0; i < t->n && rc == 0; i++) {
		const char *sha = t->reply_sha[i];
		if (!sha)
			continue;
		jv got = jv_object_get(jv_copy(*done), jv_string(sha));
		if (!jv_is_valid(got)) {
			jv_free(got);
			jv enc = jv_object_get(jv_copy(carried), jv_string(sha));
			size_t n = 0;
			if (!jv_is_valid(enc))
				rc = gl_fail(f, GL_E_MISSING_SNAPSHOT, "reply %s: not in the witness",
					     sha);
			else if (gl_witness_snap_decode(enc, sha, "reply", &got, &n, f) < 0)
				rc = -1;
			else if ((*total += n) > GL_WITNESS_CARRIED_MAX)
				rc = gl_fail(f, GL_E_TOO_LARGE,
					     "replies: more than %u bytes carried in all",
					     GL_WITNESS_CARRIED_MAX);
			jv_free(enc);
			if (rc < 0) {
				jv_free(got);
				break;
			}
			*done = jv_object_set(*done, jv_string(sha), jv_copy(got));
		}
		jv_free(t->reply[i]);
		t->reply[i] = got;
	}
	return rc;
}

/* The replies a version 5 or 6 witness carries by hash, into its
 * transcripts. */
static int replies_load(struct gl_witness *w, struct gl_fail *f)
{
	jv carried = jv_object_get(jv_copy(w->doc), jv_string("replies"));
	jv done = jv_object();
	size_t total = 0;
	int rc = trans_replies(carried, &done, &total, &w->trans, f);
	if (rc == 0)
		rc = trans_replies(carried, &done, &total, &w->ctrans, f);
	jv_free(done);
	jv_free(carried);
	return rc;
}

int gl_witness_snapshots(const char *path, const char *home, bool from_store,
			 struct gl_witness *w, struct gl_fail *f)
{
	struct gl_witness_grp *g[] = {&w->served, &w->comparing};
	jv carried = jv_object_get(jv_copy(w->doc), jv_string("snapshots"));
	int rc = 0;
	for (int i = 0; i < 2 && rc == 0 && w->version >= 3; i++) {
		jv_free(g[i]->slot);
		g[i]->slot = jv_invalid(); /* freed: never freed twice by gl_witness_free */
		const char *sha = g[i]->slot_sha256;
		if (w->version >= 5) { /* only what the witness carries */
			jv enc = jv_object_get(jv_copy(carried), jv_string(sha));
			if (jv_is_valid(enc))
				rc = gl_witness_snap_decode(enc, sha, "slot snapshot", &g[i]->slot,
							    NULL, f);
			else
				rc = gl_fail(f, GL_E_MISSING_SNAPSHOT,
					     "slot snapshot %s: not in the witness", sha);
			jv_free(enc);
		} else if (from_store) {
			rc = gl_witness_snapshot_load(path, home, sha, &g[i]->slot, f);
		} else {
			rc = gl_fail(f, GL_E_MISSING_SNAPSHOT,
				     "slot snapshot %s: a version %lld witness of another host names "
				     "it in that host's store, which is not read here",
				     sha, (long long)w->version);
		}
	}
	jv_free(carried);
	return rc < 0 ? -1 : replies_load(w, f);
}

static void trans_free(struct gl_witness_trans *t)
{
	jv_free(t->entries);
	for (size_t i = 0; i < t->n; i++)
		jv_free(t->reply[i]);
	free(t->reply);
	free(t->reply_sha);
}

void gl_witness_free(struct gl_witness *w)
{
	jv_free(w->doc);
	jv_free(w->call);
	jv_free(w->args);
	jv_free(w->dests);
	trans_free(&w->trans);
	trans_free(&w->ctrans);
	jv_free(w->delivered);
	jv_free(w->compared);
	jv_free(w->served.view);
	jv_free(w->served.slot);
	jv_free(w->comparing.view);
	jv_free(w->comparing.slot);
	for (size_t i = 0; i < w->nitem; i++)
		jv_free(w->item[i].label);
	free(w->item);
	free(w->path);
	free(w->dir);
	gl_config_free(&w->config);
	memset(w, 0, sizeof *w);
}
