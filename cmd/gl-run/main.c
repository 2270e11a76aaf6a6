/* gl-run — planned envelopes in, result records out (SPEC §6).
 *
 * Reads JSON Lines on stdin; for each planned envelope runs the call as
 * germline execution (paper Algorithm 1, lib/broker/broker.c) and writes one
 * result record, flushed. One germline per release is launched on first
 * use and kept resident while stdin is open. The plan is recomputed here
 * from the policy (lib/plan/plan.c): an envelope whose given plan differs is
 * refused ("bad_plan"), so a plan tampered with upstream never runs. A bad
 * record yields {"ok":false,"error","detail"} and the stream goes on; the
 * exit status is then 1. docs/gl-run.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>

#include "broker/broker.h"
#include "plan/call.h"
#include "damp/damp.h"
#include "runtime/exec.h"
#include "runtime/germline.h"
#include "broker/http.h"
#include "broker/itempath.h"
#include "json/json.h"
#include "json/jsonl.h"
#include "sign/keys.h"
#include "runtime/launch.h"
#include "json/log.h"
#include "release/manifest.h"
#include "broker/mcp.h"
#include "session/mcp_serve.h"
#include "json/msg.h"
#include "plan/plan.h"
#include "plan/policy.h"
#include "plan/readpaths.h"
#include "runtime/receipt.h"
#include "json/refusal.h"
#include "core/util.h"

#include "run.h"

static const char usage[] =
    "usage: gl-run --policy FILE [--mode MODE] [--deadline SECONDS]\n"
    "              [--damp FILE] [--releases DIR] [--witness-items] [--no-twin]\n"
    "              [--receipts DIR --host-key KEY] [--profile full|no-scope]\n"
    "              [--pool] [--witness-cap-mb N] [--witness-release-cap-mb N]\n"
    "              [--log FILE]\n"
    "\n"
    "Reads planned call envelopes (JSON Lines, from gl-plan) on stdin, runs each\n"
    "call in sandboxed copies forked from the release's germline, and writes one\n"
    "result record per call (paper Algorithm 1; SPEC §6).\n"
    "\n"
    "  --policy FILE       clearances and routes (SPEC §4, docs/formats.md)\n"
    "  --mode MODE         germline (default): one copy per plan group;\n"
    "                      nosplit: one copy holding every item and member;\n"
    "                      lazy: a destination's copy only if the full-view\n"
    "                      copy contacts it (Lemma 2 ablation); baselines:\n"
    "                      fresh (a fresh confined process per call),\n"
    "                      confined (one persistent confined process per\n"
    "                      release, destination allowlist, per-call labels),\n"
    "                      sigifc (one persistent unconfined process, per-call\n"
    "                      labels), sigpin (the same, no labels)\n"
    "  --deadline SECONDS  budget of each copy from its fork (default 30)\n"
    "  --pool              keep one data-free copy of each resident germline\n"
    "                      forked ahead of its call (modes germline, nosplit,\n"
    "                      lazy; python releases; docs/gl-run.md)\n"
    "  --damp FILE         refuse calls to releases this state suppresses\n"
    "  --releases DIR      releases in DIR/<sha256>/ (default: $GL_HOME/releases)\n"
    "  --witness-items     put the items' contents in witness records (for a\n"
    "                      verifier cleared for them; docs/witness.md)\n"
    "  --witness-cap-mb N  bytes of all witnesses under GL_HOME/witnesses, in MiB\n"
    "                      (default 1024): the oldest are removed first\n"
    "  --witness-release-cap-mb N\n"
    "                      the same per release (default 256); a witness larger\n"
    "                      than either cap is not written (docs/witness.md)\n"
    "  --no-twin           ablation: each copy gets its own clock and seed\n"
    "                      (false triggers; for experiments only)\n"
    "  --serve-mcp         be an MCP server on stdio for one release instead\n"
    "                      (with --release H [--consumer NAME]; docs/mcp.md)\n"
    "  --receipts DIR      write one signed receipt per launch into DIR (SPEC §9,\n"
    "                      docs/receipts.md); needs --host-key\n"
    "  --log FILE          append JSON Lines events (calls, refusals, triggers,\n"
    "                      limits; never item contents) to FILE (or GL_LOG)\n"
    "  --host-key KEY      the host key (gl-sign keygen); its passphrase from\n"
    "                      GL_PASSPHRASE, else the terminal\n"
    "  --profile NAME      full (default): Landlock ABI >= 6, seccomp, namespaces;\n"
    "                      no-scope: accepts Landlock ABI 4-5 (no scoping of\n"
    "                      abstract sockets and signals), stated in every receipt\n"
    "\n"
    "Exit status: 0 every record ok, 1 some record refused, 2 usage or I/O error.\n";

#define MAX_GERMLINES 256

struct resident {
	char release[65];
	jv manifest; /* owned: read_paths point into it */
	const char **read_paths;
	struct gl_germline g;
	struct gl_launch_ev ev; /* what g's launch bound (its receipts) */
	bool up;
	struct gl_session_proc sp; /* confined, sigifc, sigpin: the release's process */
	bool discovered;           /* mcp-stdio: the discovery check passed (lib/broker/mcp.h) */
	jv tools;                  /* owned: the server's tools/list, once discovered */
	char *refused;             /* the discovery check refused the release: why */
	char *rp_refused;          /* its read_paths are not granted: why (lib/plan/readpaths.h) */
};

struct session {
	const struct gl_policy *pol;
	struct gl_releases *rel;
	const char *releases_dir, *host_dir, *mode_name;
	enum gl_plan_mode mode; /* the plan of gl_broker_call (germline, nosplit, lazy) */
	enum gl_run_mode run;
	struct gl_broker broker;
	const char *damp_path;
	struct gl_damp_state *damp;
	struct stat damp_st;
	struct gl_launcher launcher; /* admission, profile, receipts (lib/runtime/launch.h) */
	const char *state[GL_READPATHS_STATE_MAX + 1]; /* host state paths, GL_HOME first */
	jv ids;                      /* receipts of the launches serving this call */
	struct resident res[MAX_GERMLINES];
	size_t nres;
	struct gl_cg cg; /* the per-copy cgroup pool (lib/sandbox/cgroup.h) */
};

static GL_NORETURN void bad_usage(const char *what)
{
	gl_warn("%s", what);
	fputs(usage, stderr);
	exit(GL_EXIT_USAGE);
}

/* A witness cap in MiB (1..GL_WITNESS_CAP_MB_MAX), as bytes. */
static uint64_t cap_mb(const char *flag, const char *v)
{
	char *end = NULL;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > GL_WITNESS_CAP_MB_MAX)
		bad_usage(gl_xasprintf("%s must be MiB in 1..%u, not '%s'", flag,
				       GL_WITNESS_CAP_MB_MAX, v));
	return (uint64_t)n << 20;
}

static jv enforcement(const struct gl_enforcement *e)
{
#define STATE(b) jv_string((b) ? "enforced" : "not_enforced")
	jv ns = jv_array();
	for (size_t i = 0; i < 6 && e->namespaces[i]; i++)
		ns = jv_array_append(ns, jv_string(e->namespaces[i]));
	jv o = JV_OBJECT(jv_string("landlock_abi"), jv_number(e->landlock_abi),
			 jv_string("filesystem"), STATE(e->fs_enforced), jv_string("network"),
			 STATE(e->net_enforced), jv_string("scoped"), STATE(e->scoped_enforced),
			 jv_string("seccomp"), STATE(e->seccomp_enforced), jv_string("namespaces"),
			 ns);
#undef STATE
	/* which mechanism bounded the copies (SPEC §4 limits; lib/sandbox/cgroup.h):
	 * the host's and this gl-run's, fixed before any item is read */
	if (e->limits_memory)
		o = jv_object_set(o, jv_string("limits"),
				  JV_OBJECT(jv_string("memory"), jv_string(e->limits_memory),
					    jv_string("pids"), jv_string(e->limits_pids),
					    jv_string("cpu"), jv_string(e->limits_cpu)));
	return o;
}

/* A release whose read_paths the policy does not grant is never launched
 * (SPEC §4, §5; lib/plan/readpaths.h; A1, A2: what initialisation and every copy
 * may read is the deployer's choice). NULL with *err and *code then. */
static struct resident *admitted(struct resident *r, char **err, const char **code)
{
	if (!r->rp_refused)
		return r;
	*err = gl_xstrdup(r->rp_refused);
	*code = GL_ERR_READ_PATHS;
	return NULL;
}

/* The resident record of a release (created on first use). NULL with *err
 * and *code when there are too many ("launch") or its read_paths are not
 * granted ("read_paths"). */
static struct resident *resident_for(struct session *s, const char *release, jv manifest,
				     char **err, const char **code)
{
	for (size_t i = 0; i < s->nres; i++)
		if (!strcmp(s->res[i].release, release))
			return admitted(&s->res[i], err, code);
	if (s->nres == MAX_GERMLINES) {
		*err = gl_xasprintf("more than %d releases in one session", MAX_GERMLINES);
		*code = "launch";
		return NULL;
	}
	struct resident *r = &s->res[s->nres++];
	memset(r, 0, sizeof *r);
	r->sp = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
	r->tools = jv_null();
	snprintf(r->release, sizeof r->release, "%s", release);
	r->manifest = jv_copy(manifest);
	jv rp = gl_json_get(r->manifest, "read_paths");
	int n = jv_is_valid(rp) ? jv_array_length(jv_copy(rp)) : 0;
	r->read_paths = gl_xcalloc((size_t)n + 1, sizeof *r->read_paths);
	for (int i = 0; i < n; i++) {
		jv p = jv_array_get(jv_copy(rp), i);
		r->read_paths[i] = jv_string_value(p); /* r->manifest holds it */
		jv_free(p);
	}
	jv_free(rp);
	char *why = NULL;
	if (gl_readpaths_check(s->pol, s->state, r->manifest, &why) < 0)
		r->rp_refused = why;
	return admitted(r, err, code);
}

/* What a launch of r's release needs; *dir (malloc'd) holds release_dir. */
static struct gl_launch_spec launch_spec(const struct session *s, const struct resident *r,
					 char **dir)
{
	*dir = gl_xasprintf("%s/%s", s->releases_dir, r->release);
	return (struct gl_launch_spec){
	    .release_dir = *dir,
	    .entry = gl_json_get_str(r->manifest, "entry"),
	    .read_paths = r->read_paths,
	    .host_dir = s->host_dir,
	    .interpreter = "/usr/bin/python3",
	    .tmp_mb = gl_policy_limits(s->pol, gl_json_get_str(r->manifest, "name"))->tmp_mb,
	    /* bounded from before the exec (lib/sandbox/cgroup.h gl_cg_bound_launch) */
	    .cg = (struct gl_cg *)&s->cg,
	    .limits = gl_policy_limits(s->pol, gl_json_get_str(r->manifest, "name")),
	};
}

/* A verified launch of r's release into g, admitted and receipted
 * (lib/runtime/launch.h). 0, or -1 with *err and *code ("rejected",
 * "bootstrap_failed", "launch"). */
static int launch(struct session *s, const struct resident *r, struct gl_germline *g,
		  struct gl_launch_ev *ev, char **err, const char **code)
{
	autofree char *dir = NULL;
	struct gl_launch_spec spec = launch_spec(s, r, &dir);
	const char *rt = gl_json_get_str(r->manifest, "runtime");
	if (rt && !strcmp(rt, "exec")) {
		/* runtime exec: no germline; the release is verified and its
		 * executables retained here, each copy is a verified launch
		 * (lib/runtime/exec.h, docs/exec.md). Its receipts are per copy, written
		 * by the broker (docs/receipts.md); a refusal here is one. */
		memset(g, 0, sizeof *g);
		g->pid = g->pidfd = g->ctl = -1;
		g->exec = gl_xcalloc(1, sizeof *g->exec);
		autofree char *host = gl_xasprintf("%s/gl-exec-host", s->host_dir);
		if (gl_exec_open(g->exec, dir, r->manifest, host, s->broker.home, err) < 0) {
			gl_launch_exec_refused(&s->launcher, r->release, g->exec, *err, &s->ids);
			*code = g->exec->fail_rejected ? "rejected" : "bootstrap_failed";
			free(g->exec);
			g->exec = NULL;
			return -1;
		}
		g->enf = g->exec->enf;
		g->cg = &s->cg; /* its copies' bounds (lib/sandbox/cgroup.h) */
		g->lim = *gl_policy_limits(s->pol, gl_json_get_str(r->manifest, "name"));
		g->exec->tmp_mb = g->lim.tmp_mb;
		g->exec->workspace_mb = g->lim.workspace_mb;
		return 0;
	}
	if (gl_launch_release(&s->launcher, &spec, r->release, g, ev, &s->ids, err, code) < 0)
		return -1;
	/* its copies' bounds: the policy's for this release name (lib/release/bounds.h) */
	g->cg = &s->cg;
	g->lim = *gl_policy_limits(s->pol, gl_json_get_str(r->manifest, "name"));
	return 0;
}

/* The germline of a release, launched on first use (and again after it was
 * lost). NULL with *err when the launch fails. */
static struct resident *germline_for(struct session *s, const char *release, jv manifest,
				     char **err, const char **code)
{
	struct resident *r = resident_for(s, release, manifest, err, code);
	if (!r || r->up)
		return r;
	if (launch(s, r, &r->g, &r->ev, err, code) < 0)
		return NULL;
	r->up = true;
	return r;
}

/* Is the release suppressed by the dampening state? The file is re-read
 * when it changed, so a gl-damp running alongside takes effect at once.
 * -1 with *err when the state cannot be read (fail closed). */
static int suppressed(struct session *s, const char *release, char **err)
{
	if (!s->damp_path)
		return 0;
	struct stat st = {0};
	if (stat(s->damp_path, &st) < 0 && errno != ENOENT) {
		*err = gl_xasprintf("%s: %s", s->damp_path, strerror(errno));
		return -1;
	}
	if (!s->damp || st.st_ino != s->damp_st.st_ino || st.st_size != s->damp_st.st_size ||
	    st.st_mtim.tv_sec != s->damp_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != s->damp_st.st_mtim.tv_nsec) {
		gl_damp_free(s->damp);
		s->damp = gl_damp_load(s->damp_path, err);
		if (!s->damp)
			return -1;
		s->damp_st = st;
	}
	return gl_damp_is_suppressed(s->damp, release) ? 1 : 0;
}

/* Does the envelope's plan (borrowed; absent is allowed) equal ours? */
static bool plan_matches(jv given, const struct gl_plan *plan, const struct gl_call *c)
{
	if (!jv_is_valid(given))
		return true;
	autobuf struct gl_buf a = {0}, b = {0};
	gl_json_dump(&a, given); /* keys sorted, as gl_plan_dump writes them */
	gl_plan_dump(&b, plan, c);
	return a.len == b.len && !memcmp(a.data, b.data, a.len);
}

/* A release speaking MCP: the discovery check forks a copy from its
 * germline, or, for runtime exec, launches one (gl_session_fork's exec
 * branch, lib/runtime/exec.h; docs/exec.md). */
static bool is_mcp(jv manifest)
{
	const char *proto = gl_json_get_str(manifest, "protocol");
	return proto && !strcmp(proto, "mcp-stdio");
}

/* An mcp-stdio release's discovery check (SPEC §11; lib/broker/mcp.h), once per
 * germline, before its first call: 0 when r may serve calls, else -1 with
 * *code and *detail (malloc'd). A changed tool list refuses the release
 * for the session. */
static int mcp_ready(struct session *s, struct resident *r, const char **code, char **detail)
{
	if (r->refused) {
		*code = GL_ERR_DISCOVERY;
		*detail = gl_xstrdup(r->refused);
		return -1;
	}
	if (r->discovered || !is_mcp(r->manifest))
		return 0;
	bool lost = false;
	jv tools;
	char *err = NULL;
	switch (gl_mcp_discover(&r->g, r->manifest, s->broker.deadline_s, &tools, &lost, &err)) {
	case GL_MCP_DISCOVERY_OK:
		jv_free(r->tools);
		r->tools = tools;
		r->discovered = true;
		return 0;
	case GL_MCP_DISCOVERY_CHANGED:
		r->refused = err;
		*code = GL_ERR_DISCOVERY;
		*detail = gl_xstrdup(err);
		return -1;
	case GL_MCP_DISCOVERY_FAILED:
		break;
	}
	if (lost) {
		gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
		r->up = false;
	}
	*code = lost ? "germline" : "germline_check";
	*detail = err;
	return -1;
}

static bool baseline(enum gl_run_mode m)
{
	return m == GL_RUN_FRESH || m == GL_RUN_CONFINED || m == GL_RUN_SIGIFC ||
	       m == GL_RUN_SIGPIN;
}

static jv fail(const char *code, char *detail)
{
	jv out = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string(code),
			   jv_string("detail"), jv_string(detail ? detail : "failed"));
	free(detail);
	return out;
}

/* The baselines (SPEC §6; paper §VII-A "Runtimes"; docs/gl-run.md
 * "Modes"): find or start the process that serves the call, then run it
 * (lib/broker/broker_session.c). Returns the body of the record (owned). */
jv gl_run_tools(struct session *s, const char *release, char **code, char **detail)
{
	jv manifest = jv_invalid();
	char *err = NULL;
	*code = NULL;
	if (gl_releases_get(s->rel, release, &manifest, &err) != GL_MANIFEST_OK) {
		*code = gl_xstrdup("unknown_release");
		*detail = err;
		return jv_invalid();
	}
	jv tools = jv_null();
	if (is_mcp(manifest) && !baseline(s->run)) {
		const char *c = "launch";
		struct resident *r = germline_for(s, release, manifest, &err, &c);
		if (!r || mcp_ready(s, r, &c, &err) < 0) {
			*code = gl_xstrdup(c);
			*detail = err;
			return jv_invalid();
		}
		tools = jv_copy(r->tools);
	}
	jv out = gl_mcp_tools_list(manifest, tools);
	jv_free(tools);
	return out;
}

static jv run_baseline(struct session *s, const struct gl_call *c, const struct gl_plan *plan,
		       jv manifest)
{
	char *err = NULL;
	const char *rcode = "launch";
	struct resident *r = resident_for(s, c->release, manifest, &err, &rcode);
	if (!r)
		return fail(rcode, err);
	const char *rt = gl_json_get_str(manifest, "runtime");
	if (rt && !strcmp(rt, "exec") && !r->up) { /* the verified release (lib/runtime/exec.h) */
		const char *code = "launch";
		if (launch(s, r, &r->g, &r->ev, &err, &code) < 0)
			return fail(code, err);
		r->up = true;
	}
	if (s->run == GL_RUN_FRESH) {
		/* Fresh+IFC: a germline launched for this call (a verified
		 * launch), one confined copy with every item, both gone before
		 * the next call: no state survives, items of one call share a
		 * process. */
		struct gl_germline g;
		struct gl_launch_ev ev;
		struct gl_session_proc p;
		bool lost = false;
		const char *code = "launch";
		if (launch(s, r, &g, &ev, &err, &code) < 0)
			return fail(code, err);
		if (gl_session_fork(&g, true, &p, &lost, &err) < 0) {
			gl_launch_end(&s->launcher, &g, &ev, &s->ids);
			return fail(lost ? "germline" : "germline_check", err);
		}
		jv res = gl_broker_session_call(&s->broker, s->run, &p, c, plan);
		gl_session_stop(&p);
		res = jv_object_set(res, jv_string("enforcement"), enforcement(&g.enf));
		gl_launch_end(&s->launcher, &g, &ev, &s->ids);
		return res;
	}
	if (!r->sp.up && s->run == GL_RUN_CONFINED) {
		/* Confined+IFC: one copy of the germline, kept for the session. */
		if (!r->up) {
			const char *code = "launch";
			if (launch(s, r, &r->g, &r->ev, &err, &code) < 0)
				return fail(code, err);
			r->up = true;
		}
		bool lost = false;
		if (gl_session_fork(&r->g, false, &r->sp, &lost, &err) < 0) {
			if (lost) {
				gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
				r->up = false;
			}
			return fail(lost ? "germline" : "germline_check", err);
		}
	} else if (!r->sp.up && r->g.exec) {
		/* Sig+Pin, Sig+IFC of an exec release (lib/runtime/exec.h) */
		if (gl_exec_session_start(r->g.exec, (const char *const *)c->dest, c->ndest, &r->sp,
					  &err) < 0)
			return fail("launch", err);
	} else if (!r->sp.up) {
		/* Sig+Pin, Sig+IFC: one unconfined process, kept for the session. */
		autofree char *dir = NULL;
		struct gl_launch_spec spec = launch_spec(s, r, &dir);
		if (gl_session_launch_unconfined(&spec, &r->sp, &err) < 0)
			return fail("launch", err);
	}
	jv res = gl_broker_session_call(&s->broker, s->run, &r->sp, c, plan);
	if (s->run == GL_RUN_CONFINED)
		gl_ids_add(&s->ids, r->ev.launched_id);
	struct gl_enforcement none = {0}; /* nothing installed: the baseline */
	return jv_object_set(res, jv_string("enforcement"),
			     enforcement(s->run == GL_RUN_CONFINED ? &r->g.enf : &none));
}

/* One envelope -> one record (owned). */
jv gl_run_line(struct session *s, const struct gl_buf *line)
{
	jv_free(s->ids);
	s->ids = jv_array(); /* the receipts of this call's launches */
	jv env = gl_json_parse(line->data, line->len);
	if (!jv_is_valid(env)) {
		jv msg = jv_invalid_get_msg(env);
		jv out = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
				   jv_string("bad_json"), jv_string("detail"), msg);
		return out;
	}
	if (jv_get_kind(env) == JV_KIND_OBJECT) {
		jv ok = gl_json_get(env, "ok");
		bool upstream = jv_get_kind(ok) == JV_KIND_FALSE && gl_json_get_str(env, "error");
		jv_free(ok);
		if (upstream)
			return env; /* an upstream refusal passes through */
	}
	jv given = jv_get_kind(env) == JV_KIND_OBJECT ? gl_json_get(env, "plan") : jv_invalid();
	struct gl_call c;
	struct gl_call_error ce = {0};
	jv out;
	/* item paths never name host state (lib/broker/itempath.h); the broker checks
	 * again on what it opens */
	if (gl_call_read(&c, env, s->pol, s->rel, &ce) < 0 ||
	    gl_itempath_check_call(&c, s->broker.roots, &ce) < 0) {
		out = JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"), jv_string(ce.code),
				jv_string("detail"), jv_string(ce.detail));
		if (c.release && !strcmp(ce.code, "unknown_release"))
			gl_launch_reject(&s->launcher, c.release, "release", ce.detail, &s->ids);
		free(ce.detail);
		if (c.release && gl_sha256_hex_ok(c.release, strlen(c.release)))
			out = jv_object_set(out, jv_string("release"), jv_string(c.release));
		goto done;
	}
	out = JV_OBJECT(jv_string("release"), jv_string(c.release), jv_string("function"),
			jv_string(c.function), jv_string("mode"), jv_string(s->mode_name));
	gl_log_event("call_start",
		     JV_OBJECT(jv_string("id"), jv_is_valid(c.id) ? jv_copy(c.id) : jv_null(),
			       jv_string("release"), jv_string(c.release), jv_string("function"),
			       jv_string(c.function), jv_string("mode"), jv_string(s->mode_name)));
	struct gl_plan plan;
	gl_plan_make(&plan, &c, s->pol, s->mode);
	jv manifest = jv_invalid();
	char *err = NULL;
	int sup;
	const char *rt, *proto;
	bool plan_ok = plan_matches(given, &plan, &c);
	if (!plan_ok && baseline(s->run)) {
		/* A baseline uses the plan for D_f only: an envelope planned
		 * for germline execution runs too. */
		struct gl_plan gp;
		gl_plan_make(&gp, &c, s->pol, GL_PLAN_GERMLINE);
		plan_ok = plan_matches(given, &gp, &c);
		gl_plan_free(&gp);
	}
	if (!plan_ok) {
		out = jv_object_merge(out, JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
						     jv_string("bad_plan"), jv_string("detail"),
						     jv_string("the envelope's plan is not the plan "
							       "of this policy and mode")));
	} else if ((sup = suppressed(s, c.release, &err)) != 0) {
		gl_launch_reject(&s->launcher, c.release, sup > 0 ? "suppressed" : "damp",
				 sup > 0 ? "suppressed by the dampening state" : err, &s->ids);
		out = jv_object_merge(
		    out, JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
				   jv_string(sup > 0 ? "suppressed" : "damp"), jv_string("detail"),
				   jv_string(sup > 0 ? "the release is suppressed by the "
						       "dampening state (gl-damp)"
						     : err)));
	} else if (gl_releases_get(s->rel, c.release, &manifest, &err) != GL_MANIFEST_OK) {
		gl_launch_reject(&s->launcher, c.release, "release", err, &s->ids);
		out = jv_object_merge(out, JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
						     jv_string("unknown_release"), jv_string("detail"),
						     jv_string(err)));
	} else if ((rt = gl_json_get_str(manifest, "runtime")) && !strcmp(rt, "exec") &&
		   (s->run == GL_RUN_FRESH || s->run == GL_RUN_CONFINED)) {
		out = jv_object_merge(
		    out, JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
				   jv_string("unsupported_runtime"), jv_string("detail"),
				   jv_string("runtime \"exec\" runs in modes germline, nosplit, lazy, "
					     "sigifc and sigpin only (docs/exec.md)")));
	} else if (!rt || (strcmp(rt, "python") && strcmp(rt, "exec")) ||
		   ((proto = gl_json_get_str(manifest, "protocol")) && strcmp(proto, "germline") &&
		    strcmp(proto, "mcp-stdio"))) {
		out = jv_object_merge(
		    out, JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
				   jv_string("unsupported_runtime"), jv_string("detail"),
				   jv_string("gl-run runs runtime \"python\" with protocol "
					     "\"germline\" or \"mcp-stdio\" only, for now")));
	} else if (baseline(s->run)) {
		out = jv_object_merge(out, run_baseline(s, &c, &plan, manifest));
	} else {
		const char *code = "launch";
		struct resident *r = germline_for(s, c.release, manifest, &err, &code);
		if (!r) {
			out = jv_object_merge(out, JV_OBJECT(jv_string("ok"), jv_false(),
							     jv_string("error"), jv_string(code),
							     jv_string("detail"), jv_string(err)));
		} else if (mcp_ready(s, r, &code, &err) < 0) {
			out = jv_object_merge(out, JV_OBJECT(jv_string("ok"), jv_false(),
							     jv_string("error"), jv_string(code),
							     jv_string("detail"), jv_string(err)));
		} else {
			bool lost = false;
			jv res = gl_broker_call(&s->broker, &r->g, &c, &plan, &lost);
			out = jv_object_merge(out, res);
			out = jv_object_set(out, jv_string("enforcement"), enforcement(&r->g.enf));
			gl_ids_add(&s->ids, r->ev.launched_id);
			if (lost) {
				gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
				r->up = false;
			}
		}
	}
	free(err);
	gl_plan_free(&plan);
done:
	if (s->launcher.rc)
		out = jv_object_set(out, jv_string("receipts"), jv_copy(s->ids));
	if (jv_is_valid(c.id))
		out = jv_object_set(out, jv_string("id"), jv_copy(c.id));
	jv_free(given);
	gl_call_free(&c);
	return out;
}

void gl_run_set_cancel(struct session *s, struct gl_cancel *c)
{
	s->broker.cancel = c;
}

jv gl_run_clearance(struct session *s, const char *name)
{
	return gl_labels_to_jv(gl_policy_clearance(s->pol, name));
}

void gl_run_idle(struct session *s)
{
	if (!s->broker.pool)
		return;
	for (size_t i = 0; i < s->nres; i++) {
		struct resident *r = &s->res[i];
		char *err = NULL;
		/* A failure here (the germline no longer passes G1–G3, or is gone)
		 * is met again, and reported, by the next call's own fork. */
		if (r->up && !r->g.exec && !r->refused && gl_germline_prefork(&r->g, &err) < 0)
			free(err);
	}
}

int main(int argc, char **argv)
{
	gl_stdio_init("gl-run");
	gl_std_flags(argc, argv, usage);
	gl_msg_test_usage(); /* GL_TESTING only: peak RSS and CPU at exit (lib/json/msg.h) */
	if (sodium_init() < 0)
		gl_die(GL_EXIT_USAGE, "libsodium: initialisation failed");
	gl_http_global_init();
	const char *policy_path = NULL, *releases = NULL, *v;
	const char *serve_release = NULL, *consumer = "agent";
	bool serve_mcp = false;
	const char *receipts = NULL, *host_key = NULL, *profile = "full", *log_path = NULL;
	struct session s = {.mode_name = "germline", .mode = GL_PLAN_GERMLINE};
	s.broker.deadline_s = GL_BROKER_DEADLINE_DEFAULT;
	for (int i = 1; i < argc; i++) {
		if ((v = gl_flag_value(argc, argv, &i, "--policy", usage))) {
			policy_path = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--mode", usage))) {
			s.mode_name = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--releases", usage))) {
			releases = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--damp", usage))) {
			s.damp_path = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--receipts", usage))) {
			receipts = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--host-key", usage))) {
			host_key = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--profile", usage))) {
			profile = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--log", usage))) {
			log_path = v;
		} else if (!strcmp(argv[i], "--witness-items")) {
			s.broker.witness_items = true;
		} else if ((v = gl_flag_value(argc, argv, &i, "--witness-cap-mb", usage))) {
			s.broker.witness_caps.total = cap_mb("--witness-cap-mb", v);
		} else if ((v = gl_flag_value(argc, argv, &i, "--witness-release-cap-mb", usage))) {
			s.broker.witness_caps.release = cap_mb("--witness-release-cap-mb", v);
		} else if (!strcmp(argv[i], "--no-twin")) {
			s.broker.no_twin = true;
		} else if (!strcmp(argv[i], "--pool")) {
			s.broker.pool = true;
		} else if (!strcmp(argv[i], "--serve-mcp")) {
			serve_mcp = true;
		} else if ((v = gl_flag_value(argc, argv, &i, "--release", usage))) {
			serve_release = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--consumer", usage))) {
			consumer = v;
		} else if ((v = gl_flag_value(argc, argv, &i, "--deadline", usage))) {
			char *end = NULL;
			errno = 0;
			double d = strtod(v, &end);
			if (errno || end == v || *end || !isfinite(d) || d <= 0 || d > 3600)
				bad_usage(gl_xasprintf("--deadline must be seconds in (0, 3600], not "
						       "'%s'",
						       v));
			s.broker.deadline_s = d;
		} else {
			bad_usage(gl_xasprintf("unknown argument '%s'", argv[i]));
		}
	}
	if (!policy_path)
		bad_usage("--policy is required");
	gl_log_open("gl-run", log_path); /* lib/json/log.h: exit 2 when it cannot be opened */
	if (serve_mcp && (!serve_release || !gl_sha256_hex_ok(serve_release, strlen(serve_release))))
		bad_usage("--serve-mcp needs --release with a release's sha256");
	if (!serve_mcp && serve_release)
		bad_usage("--release and --consumer go with --serve-mcp");
	if (!gl_profile_find(profile))
		bad_usage(gl_xasprintf("--profile must be full or no-scope, not '%s'", profile));
	if (!receipts != !host_key)
		bad_usage("--receipts and --host-key go together");
	s.launcher.profile = gl_profile_find(profile);
	struct gl_receipts rc = {.dir = receipts, .profile = profile};
	if (receipts) {
		struct stat st;
		if (stat(receipts, &st) < 0 || !S_ISDIR(st.st_mode))
			gl_die(GL_EXIT_USAGE, "--receipts %s: not a directory", receipts);
		char *kerr = NULL;
		enum gl_key_status ks = gl_receipts_load_key(&rc, host_key, &kerr);
		if (ks == GL_KEY_BAD_PASSPHRASE) {
			autofail struct gl_fail f = {0};
			gl_fail_set(&f, GL_R_BAD_PASSPHRASE, "%s", kerr);
			exit(gl_fail_report(&f));
		}
		if (ks != GL_KEY_OK)
			gl_die(GL_EXIT_USAGE, "--host-key %s", kerr);
		s.launcher.rc = &rc;
	}
	static const struct {
		const char *name;
		enum gl_run_mode run;
		enum gl_plan_mode plan;
	} modes[] = {
	    {"germline", GL_RUN_GERMLINE, GL_PLAN_GERMLINE},
	    {"nosplit", GL_RUN_NOSPLIT, GL_PLAN_NOSPLIT},
	    {"lazy", GL_RUN_LAZY, GL_PLAN_GERMLINE},
	    {"fresh", GL_RUN_FRESH, GL_PLAN_NOSPLIT},
	    {"confined", GL_RUN_CONFINED, GL_PLAN_NOSPLIT},
	    {"sigifc", GL_RUN_SIGIFC, GL_PLAN_NOSPLIT},
	    {"sigpin", GL_RUN_SIGPIN, GL_PLAN_NOSPLIT},
	};
	size_t mi = 0;
	while (mi < sizeof modes / sizeof *modes && strcmp(modes[mi].name, s.mode_name))
		mi++;
	if (mi == sizeof modes / sizeof *modes)
		bad_usage(gl_xasprintf("--mode must be germline, nosplit, lazy, fresh, confined, "
				       "sigifc or sigpin, not '%s'",
				       s.mode_name));
	s.run = modes[mi].run;
	s.mode = modes[mi].plan;
	s.broker.lazy = s.run == GL_RUN_LAZY;
	if (s.broker.pool && baseline(s.run))
		bad_usage(gl_xasprintf("--pool goes with modes germline, nosplit and lazy, not '%s'",
				       s.mode_name));

	struct gl_policy pol;
	char *err = NULL;
	if (gl_policy_load(&pol, policy_path, &err) < 0)
		gl_die(GL_EXIT_USAGE, "policy %s", err);
	s.pol = &pol;
	s.broker.pol = &pol;
	if (s.damp_path && suppressed(&s, "", &err) < 0)
		gl_die(GL_EXIT_USAGE, "--damp %s", err);

	autofree char *home = gl_home(), *dir = NULL, *host_dir = gl_host_dir();
	if (releases) {
		struct stat st;
		if (stat(releases, &st) < 0 || !S_ISDIR(st.st_mode))
			gl_die(GL_EXIT_USAGE, "--releases %s: not a directory", releases);
		dir = gl_xstrdup(releases);
	} else {
		dir = gl_xasprintf("%s/releases", home);
	}
	s.broker.home = home;
	s.releases_dir = dir;
	/* what no read path nor item path may reach (lib/plan/readpaths.h,
	 * lib/broker/itempath.h); the host key as given and its secret file */
	autofree char *hk_key = NULL, *hk_pub = NULL;
	if (host_key)
		gl_key_paths(host_key, &hk_key, &hk_pub);
	const char *const st[] = {home, dir, s.damp_path, receipts, host_key, hk_key};
	for (size_t k = 0, n = 0; k < sizeof st / sizeof *st; k++)
		if (st[k])
			s.state[n++] = st[k];
	struct gl_state_roots roots;
	gl_state_roots_init(&roots, s.state);
	s.broker.roots = &roots;
	s.host_dir = host_dir;
	s.rel = gl_releases_new(dir);
	s.launcher.releases_dir = dir;
	s.broker.launcher = &s.launcher; /* exec copies' receipts (lib/runtime/launch.h) */
	s.broker.ids = &s.ids;
	rc.mode = s.mode_name;
	/* --serve-mcp fails fast, before its first message and before any
	 * slot exists (issue 17): an agent host shows this stderr line, with
	 * the path, instead of an error at the first tools/list */
	if (serve_mcp && gl_mcp_serve_check(releases ? NULL : home, dir, s.rel, &pol, s.state,
					    !baseline(s.run), serve_release, &err) < 0)
		gl_die(GL_EXIT_USAGE, "%s", err);
	gl_cg_open(&s.cg); /* the slots, made before any call (lib/sandbox/cgroup.h) */

	struct gl_lines in;
	gl_lines_init(&in, 0);
	autobuf struct gl_buf line = {0};
	bool all_ok = true;
	bool too_long = false;
	unsigned long nrec = 0;
	s.ids = jv_array(); /* reset by gl_run_line for each call */
	if (serve_mcp)
		all_ok = gl_serve_mcp(&s, serve_release, consumer) == 0;
	while (!serve_mcp && gl_lines_record(&in, &line, &too_long)) {
		int64_t t0 = gl_mono_ns();
		jv rec = gl_run_line(&s, &line);
		double ms = (double)(gl_mono_ns() - t0) / 1e6;
		rec = jv_object_set(rec, jv_string("elapsed_ms"), jv_number(round(ms * 10) / 10));
		gl_log_result(rec);
		gl_log_progress("%lu records", ++nrec);
		jv ok = gl_json_get(rec, "ok");
		all_ok &= jv_get_kind(ok) == JV_KIND_TRUE;
		jv_free(ok);
		if (gl_jsonl_emit(jv_copy(rec))) {
			jv_free(rec);
		} else {
			gl_json_emit(gl_jsonl_oversized_result(rec)); /* SPEC §2 */
			all_ok = false;
		}
		gl_run_idle(&s);
	}
	jv_free(s.ids);
	s.ids = jv_array(); /* the exits at the end of the session belong to no call */
	for (size_t i = 0; i < s.nres; i++) {
		gl_session_stop(&s.res[i].sp);
		if (s.res[i].up)
			gl_launch_end(&s.launcher, &s.res[i].g, &s.res[i].ev, &s.ids);
		jv_free(s.res[i].manifest);
		jv_free(s.res[i].tools);
		free(s.res[i].refused);
		free(s.res[i].read_paths);
		free(s.res[i].rp_refused);
	}
	jv_free(s.ids);
	gl_key_free(&rc.key);
	gl_damp_free(s.damp);
	gl_releases_free(s.rel);
	gl_policy_free(&pol);
	gl_state_roots_free(&roots);
	gl_cg_close(&s.cg);
	gl_log_close();
	curl_global_cleanup();
	return all_ok && !too_long ? GL_EXIT_OK : GL_EXIT_REFUSED;
}
