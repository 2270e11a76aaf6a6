/* receipt.c — writing and verifying enforcement receipts (SPEC §9, seed
 * 002; see receipt.h and docs/receipts.md). Canonical JSON and signatures
 * are lib/json/json.c's and lib/sign/tuf.c's: there is one canonicaliser. */
#define _GNU_SOURCE
#include "runtime/receipt.h"

#include <errno.h>
#include <sodium.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/sha.h"
#include "json/json.h"
#include "release/manifest.h"
#include "sign/tuf.h"
#include "core/util.h"

static const struct gl_profile profiles[] = {
    {"full", 6},
    {"no-scope", 4},
};

const struct gl_profile *gl_profile_find(const char *name)
{
	for (size_t i = 0; i < sizeof profiles / sizeof *profiles; i++)
		if (name && !strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

enum gl_key_status gl_receipts_load_key(struct gl_receipts *r, const char *arg, struct gl_fail *f)
{
	if (gl_keys_harden(f) < 0) { /* issue 18: sign/ returns its failure */
		f->code = GL_E_IO;
		return GL_KEY_IO;
	}
	enum gl_code kc = gl_key_load(arg, GL_KEY_SECRET, &r->key, f);
	if (kc != GL_E_OK) { /* the callers know these two (gl-run's exit and hint) */
		f->code = kc == GL_E_BAD_PASSPHRASE ? GL_E_BAD_PASSPHRASE : GL_E_IO;
		return kc == GL_E_BAD_PASSPHRASE ? GL_KEY_BAD_PASSPHRASE : GL_KEY_IO;
	}
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)r->key.sk & ~(uintptr_t)(pg - 1);
	uintptr_t b = ((uintptr_t)r->key.sk + 64 + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	if (madvise((void *)a, b - a, MADV_WIPEONFORK) < 0) {
		gl_key_free(&r->key);
		return gl_fail_errno(f, GL_E_IO, "MADV_WIPEONFORK"), GL_KEY_IO;
	}
	return GL_KEY_OK;
}

void gl_launch_ev_init(struct gl_launch_ev *ev, const char *release)
{
	memset(ev, 0, sizeof *ev);
	unsigned char r[16];
	randombytes_buf(r, sizeof r);
	gl_hex(r, sizeof r, ev->launch);
	ev->release = release;
}

const char *gl_receipt_missing(enum gl_launch_step step, int landlock_abi)
{
	switch (step) {
	case GL_LAUNCH_USERNS: return "user_namespace";
	case GL_LAUNCH_NAMESPACES: return "net_ipc_namespaces";
	case GL_LAUNCH_LANDLOCK:
		if (landlock_abi <= 0)
			return "landlock";
		return landlock_abi < 4 ? "landlock_network" : "landlock_scope";
	case GL_LAUNCH_SECCOMP: return "seccomp";
	case GL_LAUNCH_NO_NEW_PRIVS: return "no_new_privs";
	case GL_LAUNCH_DESCRIPTORS: return "descriptors";
	case GL_LAUNCH_EXEC: return "exec";
	case GL_LAUNCH_OPEN_INTERPRETER: return "interpreter";
	default: return gl_launch_step_name(step);
	}
}

static jv str_or_skip(jv o, const char *k, const char *v)
{
	return v && *v ? jv_object_set(o, jv_string(k), jv_string(v)) : o;
}

static jv enf_fields(jv o, const struct gl_enforcement *e)
{
#define STATE(b) jv_string((b) ? "enforced" : "not_enforced")
	jv ns = jv_array();
	for (size_t i = 0; i < 6 && e->namespaces[i]; i++)
		ns = jv_array_append(ns, jv_string(e->namespaces[i]));
	o = jv_object_set(o, jv_string("landlock_abi"), jv_number(e->landlock_abi));
	o = jv_object_set(o, jv_string("filesystem"), STATE(e->fs_enforced));
	o = jv_object_set(o, jv_string("network"), STATE(e->net_enforced));
	o = jv_object_set(o, jv_string("scoped"), STATE(e->scoped_enforced));
	o = jv_object_set(o, jv_string("seccomp"), STATE(e->seccomp_enforced));
	o = jv_object_set(o, jv_string("seccomp_filter_sha256"), jv_string(e->seccomp_filter_sha256));
	return jv_object_set(o, jv_string("namespaces"), ns);
#undef STATE
}

int gl_receipt_write(const struct gl_receipts *r, struct gl_launch_ev *ev, const char *state,
		     jv extra, char id_out[65], struct gl_fail *f)
{
	char at[21];
	int64_t now = gl_now();
	gl_time_format(now, at);
	jv s = JV_OBJECT(jv_string("_type"), jv_string(GL_RECEIPT_TYPE), jv_string("state"),
			 jv_string(state), jv_string("at"), jv_string(at), jv_string("launch"),
			 jv_string(ev->launch), jv_string("release"), jv_string(ev->release),
			 jv_string("mode"), jv_string(r->mode), jv_string("profile"),
			 jv_string(r->profile));
	s = str_or_skip(s, "target", ev->target);
	s = str_or_skip(s, "target_sha256", ev->target_sha256);
	s = str_or_skip(s, "interpreter_sha256", ev->interpreter_sha256);
	s = str_or_skip(s, "manifest_sha256", ev->manifest_sha256);
	s = str_or_skip(s, "tree_sha256", ev->tree_sha256);
	s = str_or_skip(s, "config_sha256", ev->config_sha256);
	if (ev->enf)
		s = enf_fields(s, ev->enf);
	if (jv_get_kind(extra) == JV_KIND_OBJECT)
		s = jv_object_merge(s, extra);
	else
		jv_free(extra);
	autobuf struct gl_buf b = {0};
	if (gl_canon_dump(&b, s, f) < 0) {
		jv_free(s);
		f->code = GL_E_IO; /* the launch is refused as "io" (launch.c) */
		return -1;
	}
	unsigned char h[32];
	gl_sha256(h, (const unsigned char *)b.data, b.len);
	gl_hex(h, 32, id_out);
	if (!strcmp(state, "fully_enforced")) {
		memcpy(ev->launched_id, id_out, 65);
		ev->launched_at = now;
	}
	jv doc = gl_tuf_sign(s, &r->key, 1, f);
	autofree char *path = gl_xasprintf("%s/%s.json", r->dir, id_out);
	int rc = jv_is_valid(doc) ? gl_tuf_write(path, doc, f) : -1; /* temporary file, fsync, rename */
	jv_free(doc);
	if (rc < 0)
		f->code = GL_E_IO;
	return rc;
}

/* ---- verifying -------------------------------------------------------- */

struct vctx {
	jv checks;
	const char *error;
	char failed[64]; /* the check that failed (copied: some names are built) */
	char *detail;
};

static bool fail(struct vctx *v, const char *error, const char *check, const char *fmt, ...)
    GL_PRINTF(4, 5);
static bool fail(struct vctx *v, const char *error, const char *check, const char *fmt, ...)
{
	if (v->error)
		return false;
	v->error = error;
	snprintf(v->failed, sizeof v->failed, "%s", check);
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&v->detail, fmt, ap) < 0)
		v->detail = NULL;
	va_end(ap);
	return false;
}

static void pass(struct vctx *v, const char *check)
{
	if (!v->error)
		v->checks = jv_array_append(v->checks, jv_string(check));
}

static bool is_hex(const char *s, size_t n)
{
	return s && strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

/* Field k of o, if a string of at most max bytes; else NULL. */
static const char *sfield(jv o, const char *k, size_t max)
{
	const char *s = gl_json_get_str(o, k);
	return s && strlen(s) <= max ? s : NULL;
}

static const char *const states[] = {"rejected", "bootstrap_failed", "fully_enforced", "exited"};
static const char *const known[] = {
    "_type", "state", "at", "launch", "release", "mode", "profile", "target", "target_sha256",
    "interpreter_sha256", "manifest_sha256", "tree_sha256", "landlock_abi", "filesystem",
    "network", "scoped", "seccomp", "seccomp_filter_sha256", "namespaces", "binding", "detail",
    "step", "missing", "closes", "launched_at", "exit", "stopped_by_host", "config_sha256"};

/* Every field known, the hashes 64 lowercase hex digits, the bindings and
 * the profile present. */
static bool shape_fields(struct vctx *v, jv s)
{
	jv_object_foreach(s, k, val)
	{
		bool ok = false;
		for (size_t i = 0; i < sizeof known / sizeof *known; i++)
			ok |= !strcmp(jv_string_value(k), known[i]);
		if (!ok) {
			autofree char *n = gl_quote(jv_string_value(k), strlen(jv_string_value(k)));
			fail(v, "bad_receipt", "shape", "unknown field %s", n);
		}
		jv_free(k);
		jv_free(val);
	}
	if (v->error)
		return false;
	const char *hexes[] = {"target_sha256", "interpreter_sha256", "manifest_sha256", "tree_sha256",
			       "closes", "config_sha256"};
	for (size_t i = 0; i < sizeof hexes / sizeof *hexes; i++) {
		jv f = gl_json_get(s, hexes[i]);
		bool present = jv_is_valid(f);
		jv_free(f);
		if (present && !is_hex(sfield(s, hexes[i], 64), 64))
			return fail(v, "bad_receipt", "shape", "%s is not 64 lowercase hex digits",
				    hexes[i]);
	}
	if (!is_hex(sfield(s, "launch", 32), 32) || !is_hex(sfield(s, "release", 64), 64) ||
	    !sfield(s, "mode", 32) || !sfield(s, "at", 32))
		return fail(v, "bad_receipt", "shape", "launch, release, mode or at missing or malformed");
	if (!gl_profile_find(sfield(s, "profile", 32)))
		return fail(v, "bad_receipt", "shape", "profile missing or unknown");
	jv sf = gl_json_get(s, "seccomp_filter_sha256");
	bool sf_bad = jv_is_valid(sf) && (jv_get_kind(sf) != JV_KIND_STRING ||
					  (jv_string_length_bytes(jv_copy(sf)) &&
					   !is_hex(jv_string_value(sf), 64)));
	jv_free(sf);
	if (sf_bad)
		return fail(v, "bad_receipt", "shape", "seccomp_filter_sha256 malformed");
	return true;
}

/* The enforcement fields: all of them in an enforcing state (fully_enforced,
 * exited), and well-formed wherever landlock_abi is present. */
static bool shape_enforcement(struct vctx *v, jv s, const char *state, bool enforcing)
{
	if (enforcing) {
		const char *need[] = {"target", "target_sha256", "interpreter_sha256", "manifest_sha256",
				      "tree_sha256", "seccomp_filter_sha256"};
		for (size_t i = 0; i < sizeof need / sizeof *need; i++)
			if (!sfield(s, need[i], 4096))
				return fail(v, "bad_receipt", "shape", "%s state without %s", state,
					    need[i]);
	}
	const char *mandatory_enf[] = {"filesystem", "network", "scoped", "seccomp"};
	jv abi = gl_json_get(s, "landlock_abi");
	bool has_enf = jv_is_valid(abi);
	jv_free(abi);
	if (!has_enf && !enforcing)
		return true;
	int64_t a;
	if (gl_json_get_int(s, "landlock_abi", &a) < 0 || a < 0 || a > 1000)
		return fail(v, "bad_receipt", "shape", "landlock_abi missing or not an integer");
	for (size_t i = 0; i < 4; i++) {
		const char *x = sfield(s, mandatory_enf[i], 32);
		if (!x || (strcmp(x, "enforced") && strcmp(x, "not_enforced")))
			return fail(v, "bad_receipt", "shape", "%s must be enforced or not_enforced",
				    mandatory_enf[i]);
	}
	jv ns = gl_json_get(s, "namespaces");
	bool ok = gl_json_is_str_array(ns) && jv_array_length(jv_copy(ns)) <= 16;
	jv_free(ns);
	if (!ok)
		return fail(v, "bad_receipt", "shape", "namespaces must be an array of strings");
	return true;
}

/* The fields of the state's own event (receipt.h): rejected,
 * bootstrap_failed, exited. */
static bool shape_state(struct vctx *v, jv s, const char *state)
{
	if (!strcmp(state, "rejected") && (!sfield(s, "binding", 64) || !sfield(s, "detail", 4096)))
		return fail(v, "bad_receipt", "shape", "rejected without binding and detail");
	if (!strcmp(state, "bootstrap_failed")) {
		jv m = gl_json_get(s, "missing");
		bool ok = gl_json_is_str_array(m) && jv_array_length(jv_copy(m)) > 0 &&
			  jv_array_length(jv_copy(m)) <= 16;
		jv_free(m);
		if (!ok || !sfield(s, "step", 64) || !sfield(s, "detail", 4096))
			return fail(v, "bad_receipt", "shape",
				    "bootstrap_failed without step, missing and detail");
	}
	if (!strcmp(state, "exited")) {
		jv e = gl_json_get(s, "exit"), sb = gl_json_get(s, "stopped_by_host");
		int64_t code = -1, sig = -1, la;
		bool ok = jv_get_kind(e) == JV_KIND_OBJECT && jv_object_length(jv_copy(e)) == 1 &&
			  ((gl_json_get_int(e, "code", &code) == 0 && code >= 0 && code <= 255) ||
			   (gl_json_get_int(e, "signal", &sig) == 0 && sig > 0 && sig < 65)) &&
			  (jv_get_kind(sb) == JV_KIND_TRUE || jv_get_kind(sb) == JV_KIND_FALSE) &&
			  sfield(s, "closes", 64) && gl_json_get_int(s, "launched_at", &la) == 0;
		jv_free(e);
		jv_free(sb);
		if (!ok)
			return fail(v, "bad_receipt", "shape",
				    "exited without exit {code|signal}, stopped_by_host, closes, launched_at");
	}
	return true;
}

/* The shape check, in this order: the fields, the enforcement, the state's own. */
static bool shape(struct vctx *v, jv s, const char *state)
{
	bool enforcing = !strcmp(state, "fully_enforced") || !strcmp(state, "exited");
	return shape_fields(v, s) && shape_enforcement(v, s, state, enforcing) &&
	       shape_state(v, s, state);
}

/* A fully_enforced or exited receipt says every restriction of its profile
 * was installed (SPEC §9: anything less is not a launch). */
static bool state_consistent(struct vctx *v, jv s, const char *state)
{
	if (strcmp(state, "fully_enforced") && strcmp(state, "exited"))
		return true;
	const struct gl_profile *p = gl_profile_find(gl_json_get_str(s, "profile"));
	int64_t abi = 0;
	gl_json_get_int(s, "landlock_abi", &abi);
	if (abi < p->min_landlock_abi)
		return fail(v, "bad_state", "state", "%s at Landlock ABI %lld, below profile %s's %d",
			    state, (long long)abi, p->name, p->min_landlock_abi);
	const char *must[] = {"filesystem", "network", "seccomp", "scoped"};
	size_t nmust = p->min_landlock_abi >= 6 ? 4 : 3;
	for (size_t i = 0; i < nmust; i++)
		if (strcmp(gl_json_get_str(s, must[i]), "enforced"))
			return fail(v, "bad_state", "state", "%s with %s not enforced (profile %s)",
				    state, must[i], p->name);
	if (!is_hex(gl_json_get_str(s, "seccomp_filter_sha256"), 64))
		return fail(v, "bad_state", "state", "%s without a seccomp filter hash", state);
	const char *ns[] = {"ipc", "net", "pid", "user"};
	jv have = gl_json_get(s, "namespaces");
	for (size_t i = 0; i < 4; i++) {
		bool found = false;
		jv_array_foreach(have, j, x)
		{
			found |= !strcmp(jv_string_value(x), ns[i]);
			jv_free(x);
		}
		if (!found) {
			jv_free(have);
			return fail(v, "bad_state", "state", "%s without the %s namespace", state, ns[i]);
		}
	}
	jv_free(have);
	return true;
}

static bool timestamps(struct vctx *v, jv s, const char *state, int64_t now)
{
	int64_t at, la;
	const int64_t floor = 1577836800; /* 2020-01-01: older is not a receipt of this toolkit */
	if (gl_time_parse(gl_json_get_str(s, "at"), &at) < 0)
		return fail(v, "bad_time", "timestamps", "at is not RFC 3339 UTC");
	if (at < floor || at > now + GL_RECEIPT_SKEW)
		return fail(v, "bad_time", "timestamps", "at lies %s",
			    at < floor ? "before 2020" : "in the future beyond the allowed skew");
	if (!strcmp(state, "exited")) {
		gl_json_get_int(s, "launched_at", &la);
		if (la < floor || la > at)
			return fail(v, "bad_time", "timestamps", "launched_at is not before at");
	}
	return true;
}

static bool expect(struct vctx *v, jv s, const char *field, const char *want, jv *unchecked)
{
	autofree char *name = gl_xasprintf("%s_binding", field);
	if (!want) {
		*unchecked = jv_array_append(*unchecked, jv_string(name));
		return true;
	}
	const char *got = gl_json_get_str(s, field);
	if (!got) {
		/* an older receipt, or a state that binds no such field: it
		 * cannot be checked, so it does not pass */
		*unchecked = jv_array_append(*unchecked, jv_string(name));
		return fail(v, "mismatch", name,
			    "%s is absent from this receipt, so it cannot be checked (expected %.64s)",
			    field, want);
	}
	if (strcmp(got, want))
		return fail(v, "mismatch", name, "%s is %.64s, expected %.64s", field, got, want);
	pass(v, name);
	return true;
}

static bool signature(struct vctx *v, jv doc, const struct gl_buf *signed_bytes,
		      const unsigned char pk[32])
{
	char keyid[GL_KEYID_HEX];
	gl_keyid(pk, keyid);
	jv sigs = gl_json_get(doc, "signatures");
	bool good = false, bad = false;
	int n = jv_get_kind(sigs) == JV_KIND_ARRAY ? jv_array_length(jv_copy(sigs)) : -1;
	if (n < 0 || n > 16) {
		jv_free(sigs);
		return fail(v, "bad_receipt", "shape", "signatures must be an array of at most 16");
	}
	jv_array_foreach(sigs, i, sg)
	{
		const char *kid = jv_get_kind(sg) == JV_KIND_OBJECT ? sfield(sg, "keyid", 64) : NULL;
		const char *hex = kid ? sfield(sg, "sig", 128) : NULL;
		unsigned char raw[64];
		if (!kid || !hex || jv_object_length(jv_copy(sg)) != 2)
			bad = true;
		else if (!strcmp(kid, keyid)) {
			if (strlen(hex) == 128 && gl_unhex(hex, 128, raw, 64) == 0 &&
			    gl_key_verify(pk, signed_bytes->data, signed_bytes->len, raw))
				good = true;
			else
				bad = true;
		}
		jv_free(sg);
	}
	jv_free(sigs);
	if (bad)
		return fail(v, "bad_signature", "signature",
			    "a signature is malformed or does not verify with the host key");
	if (!good)
		return fail(v, "bad_signature", "signature", "not signed by the host key %s", keyid);
	return true;
}

/* The envelope, up to the signed bytes: size, canonical form,
 * {"signed","signatures"}, _type, a known state, the canonical bytes of
 * "signed" into *sb. *doc and *s (owned) and *state (borrowed from *s) are
 * set as far as they were read. false at the first check that fails. */
static bool envelope(struct vctx *v, const char *buf, size_t len, jv *doc, jv *s,
		     const char **state, struct gl_buf *sb)
{
	if (len > GL_RECEIPT_MAX)
		return fail(v, "bad_receipt", "size", "larger than %u bytes", GL_RECEIPT_MAX);
	pass(v, "size");
	*doc = gl_canon_parse(buf, len);
	if (!jv_is_valid(*doc)) {
		jv m = jv_invalid_get_msg(jv_copy(*doc));
		const char *ms = jv_get_kind(m) == JV_KIND_STRING ? jv_string_value(m) : "not JSON";
		autofree char *san = gl_sanitize(ms, strlen(ms));
		fail(v, "bad_receipt", "canonical_form", "not canonical JSON: %.200s", san);
		jv_free(m);
		return false;
	}
	pass(v, "canonical_form");
	*s = jv_get_kind(*doc) == JV_KIND_OBJECT ? gl_json_get(*doc, "signed") : jv_invalid();
	if (jv_get_kind(*doc) != JV_KIND_OBJECT || jv_object_length(jv_copy(*doc)) != 2 ||
	    jv_get_kind(*s) != JV_KIND_OBJECT)
		return fail(v, "bad_receipt", "shape", "expected {\"signed\":{…},\"signatures\":[…]}");
	const char *type = gl_json_get_str(*s, "_type");
	if (!type || strcmp(type, GL_RECEIPT_TYPE))
		return fail(v, "bad_receipt", "shape", "_type is not %s", GL_RECEIPT_TYPE);
	*state = gl_json_get_str(*s, "state");
	bool known_state = false;
	for (size_t i = 0; *state && i < sizeof states / sizeof *states; i++)
		known_state |= !strcmp(*state, states[i]);
	if (!known_state)
		return fail(v, "bad_receipt", "shape", "state is not one of rejected, bootstrap_failed, "
						      "fully_enforced, exited");
	autofail struct gl_fail cf = {0};
	if (gl_canon_dump(sb, *s, &cf) < 0)
		return fail(v, "bad_receipt", "canonical_form", "signed: %s", gl_fail_detail(&cf));
	return true;
}

/* The contents, in this order: the signature before they mean anything,
 * shape, state, timestamps, then each expected binding (those not asked
 * for go to *unchecked). false at the first check that fails. */
static bool contents(struct vctx *v, jv doc, jv s, const char *state, const struct gl_buf *sb,
		     const unsigned char host_pk[32], const struct gl_receipt_expect *x, int64_t now,
		     jv *unchecked)
{
	if (!signature(v, doc, sb, host_pk))
		return false;
	pass(v, "signature");
	if (!shape(v, s, state))
		return false;
	pass(v, "shape");
	if (!state_consistent(v, s, state))
		return false;
	if (x->state && strcmp(state, x->state))
		return fail(v, "mismatch", "state", "state is %s, expected %s", state, x->state);
	pass(v, "state");
	if (!timestamps(v, s, state, now))
		return false;
	pass(v, "timestamps");
	expect(v, s, "release", x->release, unchecked);
	expect(v, s, "target_sha256", x->target_sha256, unchecked);
	expect(v, s, "manifest_sha256", x->manifest_sha256, unchecked);
	expect(v, s, "interpreter_sha256", x->interpreter_sha256, unchecked);
	/* the launch mode (a nosplit launch is no germline launch) and the
	 * release tree as admitted (docs/receipts.md) */
	expect(v, s, "mode", x->mode, unchecked);
	expect(v, s, "tree_sha256", x->tree_sha256, unchecked);
	expect(v, s, "config_sha256", x->config_sha256, unchecked);
	/* the restrictions asked of the launch (a profile that asks fewer is
	 * a weaker launch, fully enforced all the same) */
	expect(v, s, "profile", x->profile, unchecked);
	return true;
}

/* What the record says of a receipt read as far as its state (s borrowed):
 * its id, and unless it is malformed its state, release, launch, mode and
 * tree. out consumed, returned. */
static jv identify(jv out, const struct vctx *v, jv s, const char *state, const struct gl_buf *sb)
{
	if (sb->len) {
		unsigned char h[32];
		gl_sha256(h, (const unsigned char *)sb->data, sb->len);
		char id[65];
		gl_hex(h, 32, id);
		out = jv_object_set(out, jv_string("receipt"), jv_string(id));
	}
	if (v->error && !strcmp(v->error, "bad_receipt"))
		return out;
	out = jv_object_set(out, jv_string("state"), jv_string(state));
	const char *rel = sfield(s, "release", 64), *l = sfield(s, "launch", 32);
	if (rel && is_hex(rel, 64))
		out = jv_object_set(out, jv_string("release"), jv_string(rel));
	if (l && is_hex(l, 32))
		out = jv_object_set(out, jv_string("launch"), jv_string(l));
	const char *m = sfield(s, "mode", 32), *t = sfield(s, "tree_sha256", 64);
	if (m) {
		autofree char *ms = gl_sanitize(m, strlen(m));
		out = jv_object_set(out, jv_string("mode"), jv_string(ms));
	}
	if (t && is_hex(t, 64))
		out = jv_object_set(out, jv_string("tree_sha256"), jv_string(t));
	const char *c = sfield(s, "config_sha256", 64);
	if (c && is_hex(c, 64))
		out = jv_object_set(out, jv_string("config_sha256"), jv_string(c));
	return out;
}

jv gl_receipt_verify(const char *buf, size_t len, const unsigned char host_pk[32],
		     const struct gl_receipt_expect *x, int64_t now, jv *body)
{
	*body = jv_invalid();
	struct vctx v = {.checks = jv_array()};
	jv unchecked = JV_ARRAY(jv_string("live_pid_linkage"), jv_string("target_death"),
				jv_string("call_completion"), jv_string("terminal_outcome"),
				jv_string("log_inclusion"), jv_string("receipt_completeness"));
	jv out = JV_OBJECT(jv_string("ok"), jv_false());
	jv doc = jv_invalid(), s = jv_invalid();
	autobuf struct gl_buf sb = {0};
	const char *state = NULL;
	if (envelope(&v, buf, len, &doc, &s, &state, &sb))
		contents(&v, doc, s, state, &sb, host_pk, x, now, &unchecked);
	if (jv_is_valid(s) && state)
		out = identify(out, &v, s, state, &sb);
	if (v.error) {
		autofree char *d = v.detail ? gl_sanitize(v.detail, strlen(v.detail)) : NULL;
		out = jv_object_set(out, jv_string("error"), jv_string(v.error));
		out = jv_object_set(out, jv_string("failed"), jv_string(v.failed));
		out = jv_object_set(out, jv_string("detail"), jv_string(d ? d : "?"));
		jv_free(s);
	} else {
		out = jv_object_set(out, jv_string("ok"), jv_true());
		if (gl_json_get_str(s, "profile"))
			out = jv_object_set(out, jv_string("profile"),
					    jv_string(gl_json_get_str(s, "profile")));
		*body = s;
	}
	free(v.detail);
	jv_free(doc);
	out = jv_object_set(out, jv_string("checks"), v.checks);
	return jv_object_set(out, jv_string("unchecked"), unchecked);
}

int gl_receipt_check_pair(jv exited, jv launched, const char *launched_id, struct gl_fail *f)
{
	const char *same[] = {"launch", "release", "target_sha256", "interpreter_sha256",
			      "manifest_sha256", "tree_sha256", "profile", "seccomp_filter_sha256"};
	const char *same_if_any[] = {"config_sha256"}; /* absent from both: none bound */
	if (strcmp(gl_json_get_str(launched, "state"), "fully_enforced"))
		return gl_fail(f, GL_E_MISMATCH, "the launch receipt is %s, not fully_enforced",
			       gl_json_get_str(launched, "state"));
	const char *closes = gl_json_get_str(exited, "closes");
	if (!closes || strcmp(closes, launched_id))
		return gl_fail(f, GL_E_MISMATCH, "closes names another launch receipt");
	for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
		const char *a = gl_json_get_str(exited, same[i]), *b = gl_json_get_str(launched, same[i]);
		if (!a || !b || strcmp(a, b))
			return gl_fail(f, GL_E_MISMATCH, "%s differs between the exit and the launch",
				       same[i]);
	}
	for (size_t i = 0; i < sizeof same_if_any / sizeof *same_if_any; i++) {
		const char *k = same_if_any[i];
		const char *a = gl_json_get_str(exited, k), *b = gl_json_get_str(launched, k);
		if ((a || b) && (!a || !b || strcmp(a, b)))
			return gl_fail(f, GL_E_MISMATCH, "%s differs between the exit and the launch", k);
	}
	int64_t t_l, t_e, la;
	if (gl_time_parse(gl_json_get_str(launched, "at"), &t_l) < 0 ||
	    gl_time_parse(gl_json_get_str(exited, "at"), &t_e) < 0 ||
	    gl_json_get_int(exited, "launched_at", &la) < 0 || t_e < t_l || la != t_l)
		return gl_fail(f, GL_E_MISMATCH, "the exit is not after the launch it closes");
	return 0;
}
