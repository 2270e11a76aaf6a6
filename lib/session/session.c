/* session.c — a gl-run session's settings and its own state: the modes
 * (SPEC §6), the dampening state re-read when gl-damp changes it, the
 * enforcement object of a record, and the one refusal record. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "damp/damp.h"
#include "json/json.h"
#include "plan/labels.h"
#include "runtime/germline.h"
#include "sign/keys.h"
#include "session/session_impl.h"

int gl_session_mode(struct gl_session *s, const char *name)
{
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
	for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
		if (!strcmp(modes[i].name, name)) {
			s->mode_name = modes[i].name;
			s->run = modes[i].run;
			s->mode = modes[i].plan;
			s->broker.lazy = s->run == GL_RUN_LAZY;
			return 0;
		}
	return -1;
}

bool gl_session_baseline(const struct gl_session *s)
{
	return s->run == GL_RUN_FRESH || s->run == GL_RUN_CONFINED || s->run == GL_RUN_SIGIFC ||
	       s->run == GL_RUN_SIGPIN;
}

/* The file is re-read when it changed, so a gl-damp running alongside
 * takes effect at once (SPEC §7). Fail closed when it cannot be read. */
int gl_session_suppressed(struct gl_session *s, const char *release, struct gl_fail *f)
{
	if (!s->damp_path)
		return 0;
	struct stat st = {0};
	if (stat(s->damp_path, &st) < 0 && errno != ENOENT)
		return gl_fail_errno(f, GL_E_DAMP, "%s", s->damp_path);
	if (!s->damp || st.st_ino != s->damp_st.st_ino || st.st_size != s->damp_st.st_size ||
	    st.st_mtim.tv_sec != s->damp_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != s->damp_st.st_mtim.tv_nsec) {
		gl_damp_free(s->damp);
		s->damp = gl_damp_load(s->damp_path, f);
		if (!s->damp) { /* its detail under the code gl-run refuses a call with */
			f->code = GL_E_DAMP;
			return -1;
		}
		s->damp_st = st;
	}
	return gl_damp_is_suppressed(s->damp, release) ? 1 : 0;
}

int gl_session_damp_check(struct gl_session *s, struct gl_fail *f)
{
	return gl_session_suppressed(s, "", f) < 0 ? -1 : 0;
}

int gl_session_places(struct gl_session *s, const char *releases, const char *receipts,
		      const char *host_key, struct gl_fail *f)
{
	char *home = s->own[0] = gl_home(); /* first: it exits when no home is set */
	s->host_dir = s->own[2] = gl_host_dir();
	struct stat st;
	if (releases && (stat(releases, &st) < 0 || !S_ISDIR(st.st_mode)))
		return gl_fail(f, GL_E_USAGE, "--releases %s: not a directory", releases);
	char *dir = s->own[1] = releases ? gl_xstrdup(releases) : gl_xasprintf("%s/releases", home);
	s->broker.home = home;
	s->releases_dir = s->launcher.releases_dir = dir;
	if (host_key)
		gl_key_paths(host_key, &s->own[3], &s->own[4]);
	const char *const sp[] = {home, dir, s->damp_path, receipts, host_key, s->own[3]};
	for (size_t k = 0, n = 0; k < sizeof sp / sizeof *sp; k++)
		if (sp[k])
			s->state[n++] = sp[k];
	gl_state_roots_init(&s->roots, s->state);
	s->broker.roots = &s->roots;
	s->rel = gl_releases_new(dir);
	s->broker.launcher = &s->launcher; /* exec copies' receipts (lib/runtime/launch.h) */
	s->broker.ids = &s->ids;
	/* a host uid per copy (lib/sandbox/uids.h): a range that exists but
	 * cannot be used safely stops gl-run here */
	if (gl_uids_open(&s->uids, gl_uids_subuid_path(), gl_uids_subgid_path(), f) < 0)
		return -1;
	return 0;
}

void gl_session_start(struct gl_session *s)
{
	gl_cg_open(&s->cg); /* the slots, made before any call (lib/sandbox/cgroup.h) */
	s->res = gl_xcalloc(GL_SESSION_RELEASES_MAX, sizeof *s->res);
	s->nres = 0;
	s->ids = jv_array(); /* reset by gl_session_line for each call */
}

jv gl_session_enforcement(const struct gl_enforcement *e)
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
	if (e->uid) /* how the copies' host uids were kept apart (lib/sandbox/uids.h) */
		o = jv_object_set(o, jv_string("uid"), jv_string(e->uid));
	return o;
}

bool gl_session_serialize(struct gl_session *s)
{
	s->serial = !s->uids.on && !s->uids.off && !gl_session_baseline(s);
	return s->serial;
}

int gl_session_serial_take(const struct gl_session *s, bool exec)
{
	if (s->uids.off || (!s->serial && !exec))
		return -1;
	struct gl_fail f = {0};
	int fd = gl_uids_serial_take(&s->uids, &f);
	if (fd < 0)
		gl_die(GL_EXIT_USAGE, "the serial lock of release code: %s", gl_fail_detail(&f));
	return fd;
}

jv gl_session_refusal(jv out, const char *code, jv detail)
{
	return jv_object_merge(out, JV_OBJECT(jv_string("ok"), jv_false(), jv_string("error"),
					      jv_string(code), jv_string("detail"), detail));
}

jv gl_session_clearance(const struct gl_session *s, const char *name)
{
	return gl_labels_to_jv(gl_policy_clearance(s->pol, name));
}

/* gl_session_call_bound into *L (empty, the caller frees it). */
static void call_bound(const struct gl_session *s, const struct gl_session_call *k,
		       struct gl_labels *L)
{
	if (k->have_call) {
		for (size_t i = 0; i < k->c.nitem; i++)
			gl_labels_join(L, &k->c.item[i].label);
		for (size_t d = 0; d < k->c.ndest; d++)
			gl_labels_join(L, gl_policy_clearance(s->pol, k->c.dest[d]));
	}
	for (size_t g = 0; k->have_plan && g < k->plan.ngroup; g++)
		gl_labels_join(L, &k->plan.group[g].horizon);
}

jv gl_session_call_bound(const struct gl_session *s, const struct gl_session_call *k)
{
	struct gl_labels L = {0};
	call_bound(s, k, &L);
	jv out = gl_labels_to_jv(&L);
	gl_labels_free(&L);
	return out;
}

bool gl_session_call_cleared(const struct gl_session *s, const struct gl_session_call *k)
{
	if (k->state == GL_CALL_DONE)
		return true; /* refused as read: its record is the envelope's */
	struct gl_labels L = {0};
	call_bound(s, k, &L);
	bool ok = true;
	for (size_t u = 0; ok && u < k->c.nconsumer; u++)
		ok = gl_labels_subset(&L, gl_policy_clearance(s->pol, k->c.consumer[u]));
	gl_labels_free(&L);
	return ok;
}

void gl_session_set_cancel(struct gl_session *s, struct gl_cancel *c)
{
	s->broker.cancel = c;
}
