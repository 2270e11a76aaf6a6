/* replay_stream.c — gl-replay's stdin (replay_stream.h): result records
 * passed on byte for byte, then one verdict per trigger (SPEC §7; paper
 * §IV-F, Definition 6; docs/damp.md "Pairing"). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "core/sha.h"
#include "core/util.h"
#include "evidence/trigger_list.h"
#include "evidence/witness_store.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "json/log.h"
#include "replay/replay_stream.h"

/* GL_TESTING builds with GL_TEST_REPLAY_TRIGGERS_UNSIGNED=1: the landed
 * behaviour — a result record's trigger believed without a signature when
 * its witness was never written for its size, and a witness file that
 * cannot be read or has changed counting for nothing (tests/witness-trust.bats). */
static bool triggers_unsigned(void) { return GL_TEST_SWITCH("GL_TEST_REPLAY_TRIGGERS_UNSIGNED"); }

static bool unreplayed_code(const char *code)
{
	static const char *const codes[] = {"too_large", "no_witness", "io", "tampered_witness"};
	for (size_t i = 0; code && i < sizeof codes / sizeof *codes; i++)
		if (!strcmp(code, codes[i]))
			return true;
	return false;
}

/* A trigger its witness file could not answer — never written (too_large,
 * no_witness), pruned by a cap, deleted or unreadable (io), changed
 * (tampered_witness) — is known from the result record alone, which names
 * its release. A trigger is never free: the refusal is an unverified event
 * gl-damp counts when the record's triggers are signed by a key x trusts
 * (lib/evidence/trigger_list.h), and a claim nobody vouches for otherwise
 * (weight 0, "trusted":false: reported, never added). A refusal that
 * already has an event (its witness was read) stays as it is. rec and t
 * borrowed. */
static jv unreplayed(struct gl_replay *x, jv out, jv rec, jv t)
{
	const char *code = gl_json_get_str(out, "error");
	const char *rel = gl_json_get_str(rec, "release"), *d = gl_json_get_str(t, "destination");
	if (!unreplayed_code(code) || jv_object_has(jv_copy(out), jv_string("event")) || !rel ||
	    !gl_sha256_hex_ok(rel, strlen(rel)) || !d)
		return out;
	bool off = triggers_unsigned();
	if (off && strcmp(code, "too_large"))
		return out;
	char keyid[GL_KEYID_HEX];
	bool sig = !off && gl_triggers_signer(rec, keyid) == 0;
	bool trust = off || (sig && gl_replay_key_trusted(x, keyid));
	out = jv_object_set(out, jv_string("release"), jv_string(rel));
	out = jv_object_set(out, jv_string("destination"), jv_string(d));
	out = jv_object_set(out, jv_string("event"), jv_string("unverified"));
	out = jv_object_set(out, jv_string("weight"), jv_number(trust ? GL_REPLAY_WEIGHT_W : 0));
	if (off)
		return out;
	out = jv_object_set(out, jv_string("producer"), sig ? jv_string(keyid) : jv_null());
	return jv_object_set(out, jv_string("trusted"), jv_bool(trust));
}

/* The verdict of one trigger object t (borrowed) of the result record rec
 * (borrowed; jv_null() for a bare trigger record): its witness replayed,
 * or an error record when the trigger names none. */
static int trigger_verdict(struct gl_replay *x, jv rec, jv t)
{
	bool obj = jv_get_kind(t) == JV_KIND_OBJECT;
	const char *path = obj ? gl_json_get_str(t, "witness") : NULL;
	const char *id = obj ? gl_json_get_str(t, "id") : NULL;
	const char *sha = obj ? gl_json_get_str(t, "witness_sha256") : NULL;
	enum gl_replay_status st = GL_REPLAY_REFUSED;
	jv out;
	if (!path || (!id && jv_get_kind(rec) != JV_KIND_NULL)) {
		const char *why = obj ? gl_json_get_str(t, "witness_error") : NULL;
		/* not written, too large: counted like a refused file */
		bool big = why && id && !strcmp(why, GL_WITNESS_TOO_LARGE_TEXT);
		out = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
				jv_string(big ? "too_large" : "no_witness"), jv_string("detail"),
				jv_string(why ? why : "the trigger names no witness file"),
				jv_string("witness"), id ? jv_string(id) : jv_null());
	} else {
		out = gl_replay_file(x, path, sha, id, &st);
	}
	if (jv_get_kind(rec) == JV_KIND_OBJECT)
		out = unreplayed(x, out, rec, t);
	gl_log_event(gl_json_get_bool(out, "ok", 1) == 0 ? "refusal" : "verdict",
		     JV_OBJECT(jv_string("witness"), id ? jv_string(id) : jv_null(),
			       jv_string("release"), gl_log_field(out, "release"),
			       jv_string("destination"), gl_log_field(out, "destination"),
			       jv_string("outcome"), gl_log_field(out, "outcome"),
			       jv_string("verdict_event"), gl_log_field(out, "event"),
			       jv_string("weight"), gl_log_field(out, "weight"), jv_string("error"),
			       gl_log_field(out, "error")));
	gl_json_emit(out);
	return (int)st;
}

/* What a stdin record is (SPEC §7): a result record of gl-run (it has
 * "ok"), a bare trigger record (SPEC §6's trigger object: "witness" or
 * "witness_error", no "ok"), a verdict of an earlier gl-replay ("event"),
 * or none of these. */
enum kind { K_RESULT, K_TRIGGER, K_VERDICT, K_OTHER };

static enum kind kind_of(jv rec)
{
	if (jv_get_kind(rec) != JV_KIND_OBJECT)
		return K_OTHER;
	if (jv_object_has(jv_copy(rec), jv_string("ok")))
		return K_RESULT;
	if (jv_object_has(jv_copy(rec), jv_string("event")))
		return K_VERDICT;
	jv w = gl_json_get(rec, "witness"), we = gl_json_get(rec, "witness_error");
	bool t = jv_get_kind(w) == JV_KIND_STRING || jv_get_kind(we) == JV_KIND_STRING;
	jv_free(w);
	jv_free(we);
	return t ? K_TRIGGER : K_OTHER;
}

/* A line the reader refuses (why: its message). No stage of ours writes
 * one; a result record that a copy made unreadable would otherwise take
 * its triggers out of replay and damping. When its top level names a
 * release, the answer is an unverified event of that release, which gl-damp
 * counts (the weight of a trigger that cannot be replayed), naming as its
 * witness the SHA-256 of the line; the line itself is not passed on, so it
 * is counted once. */
static int bad_line(const struct gl_buf *line, const char *why)
{
	jv named = gl_jsonl_named(line->data, line->len);
	const char *rel = gl_json_get_str(named, "release");
	jv out = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string("bad_json"),
			   jv_string("detail"),
			   jv_string_fmt("%s%s", why,
					 rel ? "; an unverified event of the release it names" : ""));
	if (rel) {
		/* a verdict names its evidence: here the line itself, by its hash */
		unsigned char d[GL_SHA256_BYTES];
		char sha[65];
		gl_sha256(d, line->data, line->len);
		gl_hex(d, sizeof d, sha);
		out = jv_object_set(out, jv_string("witness"), jv_string(sha));
		out = jv_object_set(out, jv_string("release"), jv_string(rel));
		out = jv_object_set(out, jv_string("event"), jv_string("unverified"));
		out = jv_object_set(out, jv_string("weight"), jv_number(GL_REPLAY_WEIGHT_W));
		jv id = gl_json_get(named, "id");
		if (jv_is_valid(id))
			out = jv_object_set(out, jv_string("call"), id);
		else
			jv_free(id);
	}
	jv_free(named);
	gl_log_event("refusal", JV_OBJECT(jv_string("release"), gl_log_field(out, "release"),
					  jv_string("error"), jv_string("bad_json")));
	autofail struct gl_fail f = {0};
	return gl_json_put(out, &f) < 0 ? -1 : GL_EXIT_REFUSED;
}

int gl_replay_stream_line(struct gl_replay *x, const struct gl_buf *line)
{
	jv rec = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(rec)) {
		jv msg = jv_invalid_get_msg(rec);
		int st = bad_line(line, jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "?");
		jv_free(msg);
		return st;
	}
	enum kind k = kind_of(rec);
	if (k == K_TRIGGER) {
		int st = trigger_verdict(x, jv_null(), rec);
		jv_free(rec);
		return st;
	}
	if (k == K_OTHER) {
		gl_json_emit_error(jv_null(), "bad_record", "%s",
				   "neither a result record, a trigger record nor a verdict (SPEC §7)");
		gl_log_event("refusal", JV_OBJECT(jv_string("error"), jv_string("bad_record")));
		jv_free(rec);
		return GL_EXIT_REFUSED;
	}
	/* The record itself, unchanged (byte for byte). */
	if (fwrite(line->data, 1, line->len, stdout) != line->len || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0) {
		jv_free(rec);
		return -1;
	}
	int worst = GL_EXIT_OK;
	jv trig = k == K_RESULT ? gl_json_get(rec, "triggers") : jv_invalid();
	if (jv_get_kind(trig) == JV_KIND_ARRAY) {
		jv_array_foreach(trig, i, t)
		{
			(void)i;
			int st = trigger_verdict(x, rec, t);
			worst = st > worst ? st : worst;
			jv_free(t);
		}
	}
	jv_free(trig);
	jv_free(rec);
	return worst;
}

