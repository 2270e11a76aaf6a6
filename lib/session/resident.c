/* resident.c — the resident-release registry of a gl-run session: one
 * record per release, its germline launched on first use and kept while
 * the session lasts (paper Algorithm 1 lines 1–4: the germline is
 * initialised once, data-free, before any call; A1, A2), again after it
 * was lost; an mcp-stdio release's discovery check before its first call
 * (SPEC §11); the pool filled between calls. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "broker/mcp.h"
#include "damp/damp.h"
#include "json/json.h"
#include "json/log.h"
#include "json/refusal.h"
#include "runtime/exec.h"
#include "session/session_impl.h"

/* A release whose read_paths the policy does not grant is never launched
 * (SPEC §4, §5; lib/plan/readpaths.h; A1, A2: what initialisation and every copy
 * may read is the deployer's choice). NULL with f (read_paths) then. */
static struct gl_resident *admitted(struct gl_resident *r, struct gl_fail *f)
{
	if (!r->rp_refused)
		return r;
	gl_fail_set(f, GL_E_READ_PATHS, "%s", r->rp_refused);
	return NULL;
}

struct gl_resident *gl_session_resident(struct gl_session *s, const char *release, jv manifest,
					struct gl_fail *f)
{
	for (size_t i = 0; i < s->nres; i++)
		if (!strcmp(s->res[i].release, release)) {
			s->res[i].used = ++s->tick; /* a hit's one bookkeeping step */
			return admitted(&s->res[i], f);
		}
	if (s->nres == GL_SESSION_RELEASES_MAX) {
		gl_fail_set(f, GL_E_LAUNCH, "more than %d releases in one session",
			    GL_SESSION_RELEASES_MAX);
		return NULL;
	}
	struct gl_resident *r = &s->res[s->nres++];
	memset(r, 0, sizeof *r);
	r->sp = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
	r->tools = jv_null();
	r->server = jv_null();
	r->used = ++s->tick;
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
	autofail struct gl_fail why = {0};
	if (gl_readpaths_check(s->pol, s->state, r->manifest, &why) < 0)
		r->rp_refused = gl_fail_steal(&why);
	return admitted(r, f);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

uint64_t gl_session_fingerprint(const struct gl_session *s)
{
	uint64_t h = mix(0xcbf29ce484222325ull, s->nres);
	for (size_t i = 0; i < s->nres; i++) { /* O(releases) <= 256, per dispatch */
		const struct gl_resident *r = &s->res[i];
		const struct gl_germline *g = &r->g;
		uint64_t flags = (uint64_t)r->up | (uint64_t)r->discovered << 1 |
				 (uint64_t)r->sp.up << 2 | (uint64_t)g->pooled << 3 |
				 (uint64_t)(g->exec != NULL) << 4 | (uint64_t)(r->refused != NULL) << 5 |
				 (uint64_t)(r->rp_refused != NULL) << 6;
		h = mix(h, flags);
		h = mix(h, (uint64_t)(uint32_t)g->pid << 32 | (uint32_t)g->gpid);
		h = mix(h, (uint64_t)(uint32_t)g->ctl << 32 | (uint32_t)g->pidfd);
		h = mix(h, g->ctl_ino);
		h = mix(h, (uint64_t)(uint32_t)r->sp.pid << 32 | (uint32_t)r->sp.sock);
	}
	return h;
}

bool gl_session_is_resident(const struct gl_resident *r)
{
	return r->sp.up || (r->up && !r->g.exec);
}

/* Stop r's persistent processes as gl_session_end does: the germline's
 * "exited" receipt closes its launch receipt and belongs to no call (it
 * is not in the record that caused the eviction). Its slots are files
 * under GL_HOME (lib/broker/slots.h): a later call of r's release is a
 * new verified launch (admission, receipts, G1–G3, as always; Algorithm 1
 * lines 1–4 run again, data-free) that finds them as they were. */
static void evict(struct gl_session *s, struct gl_resident *r)
{
	gl_log_event("resident_evicted",
		     JV_OBJECT(jv_string("release"), jv_string(r->release), jv_string("max_resident"),
			       jv_number(s->max_resident)));
	gl_session_stop(&r->sp);
	if (r->up && !r->g.exec) {
		jv none = jv_array();
		gl_launch_end(&s->launcher, &r->g, &r->ev, &none);
		jv_free(none);
		r->up = false;
		r->discovered = false; /* mcp-stdio: the new germline is checked again */
	}
}

int gl_session_room(struct gl_session *s, const struct gl_resident *r, struct gl_fail *f)
{
	if (gl_session_is_resident(r))
		return 0;
	unsigned k = s->max_resident ? s->max_resident : GL_SESSION_RELEASES_MAX, up = 0;
	struct gl_resident *lru = NULL;
	for (size_t i = 0; i < s->nres; i++) { /* O(releases) <= 256, per launch only */
		struct gl_resident *o = &s->res[i];
		if (o == r || !gl_session_is_resident(o))
			continue;
		up++;
		if (!o->busy && (!lru || o->used < lru->used))
			lru = o;
	}
	if (up < k)
		return 0;
	if (!lru)
		return gl_fail(f, GL_E_LAUNCH,
			       "--max-resident %u: every resident release has a call in flight", k);
	evict(s, lru);
	return 0;
}

bool gl_session_room_waits(const struct gl_session *s, const char *release)
{
#ifdef GL_TESTING
	const char *t = getenv("GL_TEST_ROOM_WAIT_OFF");
	if (t && !strcmp(t, "1"))
		return false;
#endif
	if (s->run == GL_RUN_FRESH)
		return false; /* a germline per call, inside the call: none resident */
	unsigned k = s->max_resident ? s->max_resident : GL_SESSION_RELEASES_MAX, up = 0;
	bool idle = false;
	for (size_t i = 0; i < s->nres; i++) { /* O(releases) <= 256, per queued call */
		const struct gl_resident *o = &s->res[i];
		if (!strcmp(o->release, release)) {
			bool exec = jv_get_kind(o->manifest) == JV_KIND_OBJECT &&
				    gl_runtime_ops_for(gl_manifest_runtime(o->manifest)) == &gl_exec_ops;
			if (gl_session_is_resident(o) ||
			    (exec && s->run != GL_RUN_SIGIFC && s->run != GL_RUN_SIGPIN))
				return false; /* a hit, or an exec release: no process to room */
			continue;
		}
		if (gl_session_is_resident(o)) {
			up++;
			idle |= !o->busy;
		}
	}
	return up >= k && !idle;
}

struct gl_launch_spec gl_session_launch_spec(const struct gl_session *s,
					     const struct gl_resident *r, char **dir)
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
	    .uids = &s->uids,
	    .config = gl_policy_config(s->pol, gl_json_get_str(r->manifest, "name")),
	};
}

/* runtime exec: no germline; the release is verified and its executables
 * retained here, each copy is a verified launch (lib/runtime/exec.h,
 * docs/exec.md). Its receipts are per copy, written by the broker
 * (docs/receipts.md); a refusal here is one. */
static int open_exec(struct gl_session *s, const struct gl_resident *r, const char *dir,
		     struct gl_germline *g, struct gl_fail *f)
{
	memset(g, 0, sizeof *g);
	g->pid = g->pidfd = g->ctl = -1;
	g->exec = gl_xcalloc(1, sizeof *g->exec);
	autofree char *host = gl_xasprintf("%s/gl-exec-host", s->host_dir);
	const struct gl_config *cfg = gl_policy_config(s->pol, gl_json_get_str(r->manifest, "name"));
	if (gl_exec_open(g->exec, dir, r->manifest, host, s->broker.home, cfg, f) < 0) {
		/* rejected or bootstrap_failed */
		gl_launch_exec_refused(&s->launcher, r->release, g->exec, gl_fail_detail(f),
				       &s->ids);
		free(g->exec);
		g->exec = NULL;
		return -1;
	}
	g->enf = g->exec->enf;
	g->config = cfg;
	g->cg = &s->cg; /* its copies' bounds (lib/sandbox/cgroup.h) */
	g->lim = *gl_policy_limits(s->pol, gl_json_get_str(r->manifest, "name"));
	g->exec->tmp_mb = g->lim.tmp_mb;
	g->exec->workspace_mb = g->lim.workspace_mb;
	return 0;
}

int gl_session_launch(struct gl_session *s, const struct gl_resident *r, struct gl_germline *g,
		      struct gl_launch_ev *ev, struct gl_fail *f)
{
	autofree char *dir = NULL;
	struct gl_launch_spec spec = gl_session_launch_spec(s, r, &dir);
	/* the one choice of a runtime (lib/runtime/runtime.h); the broker then
	 * reaches it through gl_germline_runtime */
	if (gl_runtime_ops_for(gl_manifest_runtime(r->manifest)) == &gl_exec_ops)
		return open_exec(s, r, dir, g, f);
	/* rejected, bootstrap_failed, launch or io */
	if (gl_launch_release(&s->launcher, &spec, r->release, g, ev, &s->ids, f) < 0)
		return -1;
	/* its copies' bounds: the policy's for this release name (lib/release/bounds.h) */
	g->cg = &s->cg;
	g->lim = *gl_policy_limits(s->pol, gl_json_get_str(r->manifest, "name"));
	g->config = spec.config;
	return 0;
}

struct gl_resident *gl_session_germline(struct gl_session *s, const char *release, jv manifest,
					struct gl_fail *f)
{
	struct gl_resident *r = gl_session_resident(s, release, manifest, f);
	if (!r || r->up)
		return r;
	/* a python germline is a resident process (an exec release is not) */
	bool proc = gl_runtime_ops_for(gl_manifest_runtime(r->manifest)) != &gl_exec_ops;
	if ((proc && gl_session_room(s, r, f) < 0) || gl_session_launch(s, r, &r->g, &r->ev, f) < 0)
		return NULL;
	r->up = true;
	return r;
}

bool gl_session_starts_release(const struct gl_session *s, const char *release)
{
	if (s->run != GL_RUN_GERMLINE)
		return false; /* the baselines: their own processes, outside this rule */
	for (size_t i = 0; i < s->nres; i++) {
		const struct gl_resident *r = &s->res[i];
		if (strcmp(r->release, release))
			continue;
		if (!r->up)
			return true;
		return gl_manifest_protocol(r->manifest) == GL_PROTO_MCP_STDIO && !r->discovered &&
		       !r->refused;
	}
	return true;
}

/* The discovery check forks a copy from the release's germline, or, for
 * runtime exec, launches one (gl_session_fork through the runtime seam,
 * lib/runtime/runtime.h; docs/exec.md). A changed tool list refuses the
 * release for the session. */
int gl_session_mcp_ready(struct gl_session *s, struct gl_resident *r, struct gl_fail *f)
{
	if (r->refused)
		return gl_fail(f, GL_E_DISCOVERY_CHANGED, "%s", r->refused);
	if (r->discovered || gl_manifest_protocol(r->manifest) != GL_PROTO_MCP_STDIO)
		return 0;
	bool lost = false;
	jv tools, server = jv_null();
	enum gl_code dc =
	    gl_mcp_discover(&s->broker, &r->g, r->manifest, s->broker.deadline_s, &tools, &server,
			    &lost, f);
	if (dc == GL_E_OK) {
		jv_free(r->tools);
		jv_free(r->server);
		r->tools = tools;
		r->server = server;
		r->discovered = true;
		return 0;
	}
	if (dc == GL_E_DISCOVERY_CHANGED) {
		r->refused = gl_xstrdup(gl_fail_detail(f));
		return -1;
	}
	if (lost) {
		gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
		r->up = false;
	}
	return -1; /* f: germline (lost) or germline_check */
}

jv gl_session_tools(struct gl_session *s, const char *release, struct gl_fail *f)
{
	jv manifest = jv_invalid();
	if (gl_releases_get(s->rel, release, &manifest, f) != GL_E_OK) {
		f->code = GL_E_UNKNOWN_RELEASE; /* a bad manifest too, as before */
		return jv_invalid();
	}
	jv tools = jv_null();
	if (gl_manifest_protocol(manifest) == GL_PROTO_MCP_STDIO && !gl_session_baseline(s)) {
		/* a launch and a discovery copy: alone host-wide without a
		 * delegated range, and an exec release's always (line.c) */
		int serial = gl_session_serial_take(s, false);
		struct gl_resident *r = gl_session_germline(s, release, manifest, f);
		if (r && r->g.exec && serial < 0)
			serial = gl_session_serial_take(s, true);
		int rc = !r || gl_session_mcp_ready(s, r, f) < 0 ? -1 : 0;
		gl_uids_serial_give(serial);
		if (rc < 0)
			return jv_invalid();
		tools = jv_copy(r->tools);
	}
	jv out = gl_mcp_tools_list(manifest, tools);
	jv_free(tools);
	return out;
}

jv gl_session_server(struct gl_session *s, const char *release)
{
	for (size_t i = 0; i < s->nres; i++)
		if (!strcmp(s->res[i].release, release) && s->res[i].discovered)
			return jv_copy(s->res[i].server);
	return jv_null();
}

void gl_session_idle(struct gl_session *s)
{
	if (!s->broker.pool)
		return;
	/* held until its call (gl_germline_prefork) but under "any": the
	 * rule of which copies may run beside which (docs/gl-run.md "--jobs")
	 * lets a copy start only with its call, and a pooled copy would
	 * otherwise run its at-fork hooks and server start, then wait, beside
	 * the calls that come before its own — of other releases, and of
	 * other gl-run processes */
	bool hold = s->pol->concurrency != GL_CONCURRENCY_ANY;
#ifdef GL_TESTING
	const char *off = getenv("GL_TEST_POOL_HOLD_OFF");
	hold = hold && !(off && !strcmp(off, "1")); /* the damage: started at once */
#endif
	for (size_t i = 0; i < s->nres; i++) {
		struct gl_resident *r = &s->res[i];
		struct gl_fail f = {0};
		/* A failure here (the germline no longer passes G1–G3, or is gone)
		 * is met again, and reported, by the next call's own fork. The pool
		 * is a germline's (paper §VI): exec copies are each launched. */
		if (r->up && !r->refused && gl_runtime_forks(gl_germline_runtime(&r->g)) &&
		    gl_germline_prefork(&r->g, hold, &f) < 0)
			gl_fail_clear(&f);
	}
}

void gl_session_end(struct gl_session *s)
{
	jv_free(s->ids);
	s->ids = jv_array(); /* the exits at the end of the session belong to no call */
	for (size_t i = 0; i < s->nres; i++) {
		struct gl_resident *r = &s->res[i];
		gl_session_stop(&r->sp);
		if (r->up)
			gl_launch_end(&s->launcher, &r->g, &r->ev, &s->ids);
		jv_free(r->manifest);
		jv_free(r->tools);
		jv_free(r->server);
		free(r->refused);
		free(r->read_paths);
		free(r->rp_refused);
	}
	jv_free(s->ids);
	s->ids = jv_invalid();
	free(s->res);
	s->res = NULL;
	s->nres = 0;
	gl_damp_free(s->damp);
	s->damp = NULL;
	gl_cg_close(&s->cg);
	gl_uids_close(&s->uids);
	gl_releases_free(s->rel);
	s->rel = NULL;
	gl_state_roots_free(&s->roots);
	for (size_t i = 0; i < sizeof s->own / sizeof *s->own; i++) {
		free(s->own[i]);
		s->own[i] = NULL;
	}
}
