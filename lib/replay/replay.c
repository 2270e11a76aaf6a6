/* replay.c — probe replay for gl-replay; see replay.h and docs/witness.md. */
#define _GNU_SOURCE
#include "replay/replay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "broker/broker.h"
#include "runtime/exec.h"
#include "json/json.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "plan/readpaths.h"
#include "evidence/witness.h"

/* {"ok":false,"error","detail","witness"} — never "release" alone, so
 * gl-damp does not take it for a call. */
jv gl_replay_failure(const char *who, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *d = NULL;
	if (vasprintf(&d, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	jv r = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string(code),
			 jv_string("detail"), jv_string(d), jv_string("witness"), jv_string(who));
	free(d);
	return r;
}

void gl_replay_stop(struct gl_replay *x)
{
	if (x->up)
		gl_germline_stop(&x->g);
	x->up = false;
	x->release[0] = 0;
	x->config = NULL; /* the witness's, borrowed for a launch */
	jv_free(x->config_pub);
	x->config_pub = jv_null();
	jv_free(x->manifest);
	x->manifest = jv_invalid();
	free(x->read_paths);
	x->read_paths = NULL;
	free(x->release_dir);
	x->release_dir = NULL;
}

/* Was g's release imported under itw (NULL: the real clock)? */
static bool same_import(const struct gl_germline *g, const struct gl_twin *itw)
{
	if (!itw || !g->import_twinned)
		return !itw && !g->import_twinned;
	return g->import_twin.sec == itw->sec && g->import_twin.usec == itw->usec &&
	       !strcmp(g->import_twin.seed, itw->seed);
}

/* x->read_paths: the manifest's granted read_paths, NULL-terminated (the
 * strings are x->manifest's). */
static void read_paths(struct gl_replay *x)
{
	jv rp = gl_json_get(x->manifest, "read_paths");
	int n = jv_get_kind(rp) == JV_KIND_ARRAY ? jv_array_length(jv_copy(rp)) : 0;
	x->read_paths = gl_xcalloc((size_t)n + 1, sizeof *x->read_paths);
	for (int i = 0; i < n; i++) {
		jv p = jv_array_get(jv_copy(rp), i);
		x->read_paths[i] = jv_string_value(p); /* x->manifest holds it */
		jv_free(p);
	}
	jv_free(rp);
}

/* The verified release's germline, launched as gl-run launches it, its
 * import under the witness's import twin itw (A2, A4: the image the call's
 * copies were forked from; NULL for a version 1 witness: the real clock,
 * as gl-run then did). Kept while witnesses name the same release and
 * import twin. NULL with f on refusal. */
static struct gl_germline *germline(struct gl_replay *x, const struct gl_witness *w,
				    const struct gl_twin *itw, struct gl_fail *f)
{
	const char *sha = w->release;
	/* the operator's public configuration the call's germline had (its
	 * args and env, its secrets' placeholders: never a value) */
	jv cfg = w->configured ? gl_config_public(&w->config) : jv_null();
	if (x->up && !strcmp(x->release, sha) && same_import(&x->g, itw) &&
	    jv_equal(jv_copy(x->config_pub), jv_copy(cfg))) {
		jv_free(cfg);
		return &x->g;
	}
	gl_replay_stop(x);
	x->config = w->configured ? &w->config : NULL;
	x->config_pub = cfg;
	if (gl_replay_release_verify(x, sha, f) < 0)
		return NULL;
	x->manifest = gl_manifest_load(x->release_dir);
	const char *rt = gl_json_get_str(x->manifest, "runtime");
	const char *proto = gl_json_get_str(x->manifest, "protocol");
	if (!jv_is_valid(x->manifest) || !gl_replay_runtime_ok(x->manifest)) {
		gl_fail(f, GL_E_UNSUPPORTED_RUNTIME, "runtime %s with protocol %s is not replayed",
			rt ? rt : "?", proto ? proto : "germline");
		gl_replay_stop(x);
		return NULL;
	}
	/* read_paths are granted as gl-run grants them: by --policy, none
	 * without one (SPEC §7; lib/plan/readpaths.h). */
	const char *state[] = {x->home, x->items_dir, NULL}; /* items_dir may be NULL */
	if (gl_readpaths_check(x->pol, state, x->manifest, f) < 0) {
		gl_replay_stop(x);
		return NULL;
	}
	read_paths(x);
	/* the auditor's bounds for this release (not the witness's: the
	 * release wrote what a witness says; docs/witness.md) */
	const char *name = gl_json_get_str(x->manifest, "name");
	x->lim = x->pol ? *gl_policy_limits(x->pol, name) : GL_LIMITS_DEFAULT;
	struct gl_launch_spec spec = {.release_dir = x->release_dir,
				      .entry = gl_json_get_str(x->manifest, "entry"),
				      .read_paths = x->read_paths,
				      .host_dir = x->host_dir,
				      .interpreter = "/usr/bin/python3",
				      .import_twin = itw,
				      .import_real = !itw,
				      .tmp_mb = x->lim.tmp_mb,
				      .cg = x->cg,
				      .limits = &x->lim,
				      .uids = x->uids,
				      .config = x->config};
	autofail struct gl_fail why = {0};
	enum gl_launch_step st = GL_LAUNCH_OK;
	if (gl_replay_is_exec(x)) { /* each run a verified launch (lib/replay/replay_exec.c) */
		if (gl_replay_exec_open(x, f) < 0) {
			gl_replay_stop(x);
			return NULL;
		}
	} else {
		st = gl_germline_launch(&spec, &x->g, &why);
	}
	if (st != GL_LAUNCH_OK) {
		gl_fail(f, GL_E_LAUNCH, "%s: %s", gl_launch_step_name(st),
			why.detail ? why.detail : "failed");
		gl_replay_stop(x);
		return NULL;
	}
	x->up = true;
	/* its copies' bounds (lib/sandbox/cgroup.h), as gl-run's launch() sets them */
	x->g.cg = x->cg;
	x->g.lim = x->lim;
	if (gl_replay_discover(x, GL_BROKER_DEADLINE_DEFAULT, f) < 0) {
		gl_replay_stop(x);
		return NULL;
	}
	snprintf(x->release, sizeof x->release, "%s", sha);
	return &x->g;
}

static bool in_list(jv names, const char *s)
{
	bool found = false;
	jv_array_foreach(names, i, n)
	{
		found |= !strcmp(jv_string_value(n), s);
		jv_free(n);
	}
	return found;
}

/* R(d) per declared host from T(d) (t: w's trans), or the comparing
 * copy's replies from its own transcript (t: w's ctrans, the mirror), or
 * (t NULL: --no-probe) empty: every declared host answers with the
 * placeholder. */
static void environment(const struct gl_witness *w, const struct gl_witness_trans *t,
			struct gl_replay_host *h, size_t nh)
{
	size_t n = t ? t->n : 0;
	for (size_t i = 0; i < nh; i++) {
		jv name = jv_array_get(jv_copy(w->dests), (int)i);
		h[i] = (struct gl_replay_host){.host = jv_string_value(name)}; /* doc holds it */
		jv_free(name);
		h[i].digest = gl_xcalloc(n ? n : 1, sizeof *h[i].digest);
		h[i].reply = gl_xcalloc(n ? n : 1, sizeof *h[i].reply);
		for (size_t k = 0; k < n; k++) {
			jv e = jv_array_get(jv_copy(t->entries), (int)k);
			const char *host = gl_json_get_str(e, "host"), *src = gl_json_get_str(e, "source");
			const char *dg = gl_json_get_str(e, "digest");
			if (!strcmp(host, h[i].host) && strcmp(src, "denied")) {
				gl_unhex(dg, 64, h[i].digest[h[i].n], 32);
				h[i].reply[h[i].n++] = t->reply[k]; /* jv_null(): the placeholder */
			}
			jv_free(e);
		}
	}
}

/* Is w's producer one the auditor trusts? An unsigned (older) witness
 * never is; the test build's GL_TEST_WITNESS_TRUST_OFF takes every one. */
bool gl_replay_key_trusted(const struct gl_replay *x, const char *keyid)
{
	if (gl_witness_trust_off())
		return true;
	return keyid && x->trust && gl_witness_trusted_home(x->trust, x->home, keyid);
}

static bool trusted(const struct gl_replay *x, const struct gl_witness *w)
{
	return gl_replay_key_trusted(x, w->producer);
}

/* out (consumed) names w's producer and whether it is trusted; an
 * untrusted witness's event weighs nothing (SPEC §7: a forged witness
 * must not move a release's penalty). */
static jv stamp(jv out, const char *producer, bool trust)
{
	out = jv_object_set(out, jv_string("producer"),
			    producer ? jv_string(producer) : jv_null());
	out = jv_object_set(out, jv_string("trusted"), jv_bool(trust));
	if (!trust && jv_object_has(jv_copy(out), jv_string("weight")))
		out = jv_object_set(out, jv_string("weight"), jv_number(0));
	return out;
}

/* The record of a witness no trusted key signed: not replayed (running a
 * release on a stranger's inputs buys nothing that could count), an
 * unverified event of weight 0 that gl-damp reports and never adds. */
static jv untrusted(const struct gl_witness *w)
{
	const char *why = w->producer ? "its producer's key is not trusted here (gl-replay --trust)"
				      : "it is not signed (a version 1 to 3 witness)";
	jv out = gl_replay_failure(w->id, "untrusted_witness", "not replayed: %s", why);
	return gl_replay_as_unverified(out, w);
}

/* GL_TESTING builds with GL_TEST_REPLAY_FOREIGN_STORE=1: a version 3 or 4
 * witness of another host looks its snapshots up in this host's store too
 * (the landed behaviour, tests/witness-trust.bats: the store answers
 * whether a slot text guessed in a witness was ever delivered here). */
static bool foreign_store(void)
{
#ifdef GL_TESTING
	return getenv("GL_TEST_REPLAY_FOREIGN_STORE") != NULL;
#else
	return false;
#endif
}

/* The witness at path loaded (into *w) and checked: jv_invalid() when it
 * may be replayed, else the error record (w freed). */
static jv load(struct gl_replay *x, const char *path, const char *expect_sha256,
	       const char *expect_id, struct gl_witness *w, enum gl_replay_status *status)
{
	char sha[65] = "";
	const char *who = expect_id ? expect_id : path;
	autofail struct gl_fail f = {0};
	int rc = gl_witness_load(path, w, sha, &f);
	jv out = jv_invalid();
	autofree char *qp = gl_sanitize(path, strlen(path));
	if (rc < 0 && f.code == GL_E_IO) {
		*status = GL_REPLAY_IO;
		out = gl_replay_failure(who, "io", "%s: %s", qp, gl_fail_detail(&f));
	} else if (rc < 0 && f.code == GL_E_TOO_LARGE) { /* never read whole (issue 15) */
		out = gl_replay_failure(who, "too_large", "%s: %s", qp, gl_fail_detail(&f));
	} else if (expect_sha256 && strcmp(expect_sha256, sha)) {
		out = gl_replay_failure(who, "tampered_witness",
			      "%s: SHA-256 %s is not the trigger's witness_sha256 %s", qp, sha,
			      expect_sha256);
	} else if (rc < 0) {
		out = gl_replay_failure(who, "bad_witness", "%s: %s", qp, gl_fail_detail(&f));
	} else if (expect_id && strcmp(expect_id, w->id)) {
		out = gl_replay_failure(who, "tampered_witness", "%s: holds trigger %s, not %s", qp,
					w->id, expect_id);
	} else if (!trusted(x, w)) {
		/* before its snapshots: a forger learns nothing from the store */
		out = untrusted(w);
	} else if (!w->complete) {
		/* a trigger is never free: a bound cut its replies, and the
		 * trusted witness still counts as an unverified event */
		out = gl_replay_as_unverified(
		    gl_replay_failure(w->id, "incomplete_witness",
			    "%s: a bound cut the transcript's replies; it cannot be verified", qp),
		    w);
	}
	/* a witness carries its snapshots; an older one signed here names
	 * this host's store, and only then is the store read (SPEC §7) */
	bool from_store = !jv_is_valid(out) && (gl_witness_trust_off() || foreign_store() ||
						gl_witness_key_local(x->home, w->producer));
	if (!jv_is_valid(out) && gl_witness_snapshots(path, x->home, from_store, w, &f) < 0)
		out = gl_replay_as_unverified(
		    gl_replay_failure(w->id, gl_code_name(f.code), "%s", gl_fail_detail(&f)), w);
	if (rc == 0 && jv_is_valid(out))
		out = stamp(out, w->producer, trusted(x, w));
	if (jv_is_valid(out))
		gl_witness_free(w);
	return out;
}

/* What one witness's runs use: the items' contents, the probe's and the
 * control's views (Definition 6), R(d), the empty environment and the
 * mirror's (the comparing copy's replies), the files of an exec run.
 * Freed by runs_free. */
struct runs {
	char **own;        /* contents read from --items */
	const char **b64;  /* per witness item */
	struct gl_callmsg_item *probe, *control;
	struct gl_replay_host *rd, *none, *mir; /* mir: the mirror's (or NULL) */
	size_t nh;
	struct gl_replay_files pf, cf;
};

static void runs_free(struct runs *r, size_t nitem)
{
	gl_replay_files_free(&r->pf);
	gl_replay_files_free(&r->cf);
	for (size_t i = 0; i < r->nh; i++) {
		free(r->rd[i].digest);
		free(r->rd[i].reply);
		free(r->none[i].digest);
		free(r->none[i].reply);
		if (r->mir) {
			free(r->mir[i].digest);
			free(r->mir[i].reply);
		}
	}
	free(r->rd);
	free(r->none);
	free(r->mir);
	free(r->probe);
	free(r->control);
	for (size_t i = 0; r->own && i < nitem; i++)
		free(r->own[i]);
	free(r->own);
	free(r->b64);
}

/* Contents: from the witness, else from --items, for every item of W.
 * 0, or -1 with f. */
static int contents(const struct gl_replay *x, const struct gl_witness *w, struct runs *r,
		    struct gl_fail *f)
{
	size_t n = w->nitem ? w->nitem : 1;
	r->own = gl_xcalloc(n, sizeof *r->own);
	r->b64 = gl_xcalloc(n, sizeof *r->b64);
	for (size_t i = 0; i < w->nitem; i++) {
		if (!in_list(w->comparing.view, w->item[i].name))
			continue;
		/* a directory item's contents in a call message are empty; the
		 * directory itself comes from --items (lib/replay/replay_exec.c) */
		r->b64[i] = w->dir[i] ? "" : w->item[i].b64;
		if (!r->b64[i] &&
		    !(r->b64[i] = r->own[i] = gl_replay_item_file(x, w->item[i].name, f)))
			return -1;
	}
	return 0;
}

/* The probe's, the control's and the mirror's inputs. Definition 6: the
 * probe differs from g only in W \ V(d); the reference (--no-probe) also
 * in the slot, τ and the replies; the mirror is the comparing copy's. */
static void inputs(const struct gl_replay *x, const struct gl_witness *w, struct runs *r,
		   struct gl_replay_in *pin, struct gl_replay_in *cin, struct gl_replay_in *min)
{
	size_t n = w->nitem ? w->nitem : 1;
	r->probe = gl_xcalloc(n, sizeof *r->probe);
	r->control = gl_xcalloc(n, sizeof *r->control);
	for (size_t i = 0; i < w->nitem; i++) {
		r->probe[i] = r->control[i] = w->item[i];
		r->probe[i].b64 = r->b64[i];
		r->control[i].b64 = in_list(w->served.view, w->item[i].name) ? r->b64[i] : NULL;
	}
	r->nh = (size_t)jv_array_length(jv_copy(w->dests));
	r->rd = gl_xcalloc(r->nh ? r->nh : 1, sizeof *r->rd);
	r->none = gl_xcalloc(r->nh ? r->nh : 1, sizeof *r->none);
	environment(w, &w->trans, r->rd, r->nh);
	environment(w, NULL, r->none, r->nh);
	*pin = (struct gl_replay_in){
	    .function = w->function, .args = w->args, .item = r->probe, .nitem = w->nitem,
	    .state = x->no_probe ? w->comparing.slot : w->served.slot,
	    .twin = x->no_probe ? &w->comparing.twin : &w->served.twin,
	    .host = x->no_probe ? r->none : r->rd, .nhost = r->nh, .dest = w->destination,
	    .deadline_s = gl_replay_deadline(x, w), .files = r->pf.item,
	    .nfiles = r->pf.n};
	*cin = *pin;
	cin->files = r->cf.item;
	cin->nfiles = r->cf.n;
	cin->item = r->control;
	cin->state = w->served.slot;
	cin->twin = &w->served.twin;
	cin->host = r->rd;
	/* the mirror: the comparing copy's own inputs (W's files, as the probe) */
	*min = *pin;
	min->state = w->comparing.slot;
	min->twin = &w->comparing.twin;
	if (w->mirrored) {
		r->mir = gl_xcalloc(r->nh ? r->nh : 1, sizeof *r->mir);
		environment(w, &w->ctrans, r->mir, r->nh);
		min->host = r->mir;
	}
}

/* The serial lock (lib/sandbox/uids.h) around a witness's replay when no
 * range is delegated, or, with exec, for an exec release (its launches
 * take no lane's uid yet): its probe and control copies, and a germline's
 * launch, run alone host-wide, whatever gl-run runs beside it. -1: none
 * taken; gl-replay stops when it cannot be taken. */
static int serial_take(const struct gl_replay *x, bool exec)
{
	if (!x->uids || x->uids->off || (x->uids->on && !exec))
		return -1;
	struct gl_fail f = {0};
	int fd = gl_uids_serial_take(x->uids, &f);
	if (fd < 0)
		gl_die(GL_EXIT_USAGE, "the serial lock of release code: %s", gl_fail_detail(&f));
	return fd;
}

jv gl_replay_file(struct gl_replay *x, const char *path, const char *expect_sha256,
		  const char *expect_id, enum gl_replay_status *status)
{
	struct gl_witness w;
	*status = GL_REPLAY_REFUSED;
	jv out = load(x, path, expect_sha256, expect_id, &w, status);
	if (jv_is_valid(out))
		return out;
	x->local = gl_witness_trust_off() || gl_witness_key_local(x->home, w.producer);
	const char *who = w.id;
	autofail struct gl_fail f = {0};
	struct runs r = {0};
	const struct gl_twin *itw = w.import_twinned ? &w.import_twin : NULL;
	int serial = serial_take(x, false);
	struct gl_germline *g = contents(x, &w, &r, &f) < 0 ? NULL
							    : germline(x, &w, itw, &f);
	/* An exec run reads W's (probe) or V(d)'s (control) files at their
	 * paths, as gl-run's copies did. */
	bool launches = g && !gl_runtime_forks(gl_germline_runtime(g));
	if (launches && serial < 0)
		serial = serial_take(x, true);
	if (launches && gl_replay_make_tmp(x, &f) < 0) /* io */
		g = NULL;
	if (g && launches &&
	    (gl_replay_exec_files(x, &w, r.b64, w.comparing.view, &r.pf, &f) < 0 ||
	     gl_replay_exec_files(x, &w, r.b64, w.served.view, &r.cf, &f) < 0))
		g = NULL;
	if (!g && f.code != GL_E_OK)
		out = gl_replay_failure(who, gl_code_name(f.code), "%s", gl_fail_detail(&f));
	jv fn = g ? gl_manifest_function(x->manifest, w.function) : jv_invalid();
	if (g && !jv_is_valid(fn)) {
		g = NULL;
		out = gl_replay_failure(who, "unknown_function",
					"the release declares no function %s", w.function);
	}
	jv_free(fn);
	struct gl_replay_in pin, cin, min;
	struct gl_replay_counts n = {0, 0, -1};
	inputs(x, &w, &r, &pin, &cin, &min);
	if (g) {
		out = gl_replay_runs(x, g, &w, (struct gl_replay_in *[]){&pin, &cin, &min}, &n);
		if (jv_is_valid(out))
			g = NULL;
	}
	if (g) {
		out = gl_replay_verdict(&w, x, &n);
		*status = GL_REPLAY_VERDICT;
		/* evicted after the unverified (docs/witness.md "Caps") */
		const char *oc = gl_json_get_str(out, "outcome");
		if (!x->no_probe && oc && !strcmp(oc, "item_witness"))
			gl_witness_mark_verified(x->home, path);
	} else if (gl_replay_unverifiable(gl_json_get_str(out, "error"))) {
		out = gl_replay_as_unverified(out, &w); /* gl-damp counts it */
	}
	out = stamp(out, w.producer, true);
	gl_uids_serial_give(serial);
	runs_free(&r, w.nitem);
	gl_witness_free(&w);
	return out;
}

void gl_replay_end(struct gl_replay *x)
{
	gl_replay_stop(x);
	if (x->tmp) {
		gl_rm_rf(x->tmp);
		free(x->tmp);
		x->tmp = NULL;
	}
	free(x->found);
	x->found = NULL;
}
