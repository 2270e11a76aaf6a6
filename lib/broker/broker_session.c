/* broker_session.c — the baselines of SPEC §6 (gl-run --mode fresh,
 * confined, sigifc, sigpin): the runtimes of paper §VII-A "Runtimes" that
 * Fig. 3 compares germline execution with, in the same code base and
 * behind the same broker, so that the only difference a test sees is the
 * object each runtime binds:
 *
 *   sigpin    Sig+Pin: one persistent process per release after signature
 *             verification and key pinning; no labels; any host.
 *   sigifc    Sig+IFC: the same process, plus per-call output labels as in
 *             FIDES and CaMeL (the join of the call's inputs' labels).
 *   confined  Confined+IFC: one persistent process per release confined like
 *             a germline copy (network namespace, Landlock, seccomp) with
 *             the broker's egress allowlist (the declared destinations D_f).
 *   fresh     Fresh+IFC: a fresh confined process per call (a germline
 *             launched for the call, one copy with every item), allowlist.
 *
 * None of them splits by destination, compares requests or keeps slots:
 * one process holds every item of a call and serves every member, and what
 * it keeps between calls is its own memory (state writes are acknowledged
 * and dropped). See broker.h and docs/gl-run.md "Modes". */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/json.h"
#include "plan/labels.h"
#include "core/util.h"

/* ---- processes -------------------------------------------------------------- */

int gl_session_launch_unconfined(const struct gl_launch_spec *spec, struct gl_session_proc *p,
				 struct gl_fail *f)
{
	*p = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
	/* The interpreter is opened once and run from that descriptor, as a
	 * verified launch runs it (SPEC §9), but nothing is restricted: no
	 * namespaces, no Landlock, no seccomp, no no_new_privs. A baseline that
	 * inherited the germline's confinement would hide what it must show
	 * (paper Fig. 3: Sig+Pin and Sig+IFC disclose through a direct
	 * connection, an unlisted host, a child or a thread). */
	int ifd = open(spec->interpreter, O_PATH | O_CLOEXEC);
	if (ifd < 0)
		return gl_fail_errno(f, GL_E_LAUNCH, "open %s", spec->interpreter);
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		gl_fail_errno(f, GL_E_LAUNCH, "socketpair");
		close(ifd);
		return -1;
	}
	char *script = gl_xasprintf("%s/germline_host.py", spec->host_dir);
	char *argv[] = {"python3", "-I", "-B", script, "--session", (char *)spec->release_dir,
			(char *)spec->entry, NULL};
	/* the operator's env and placeholders, as a germline gets them */
	char *envp[4 + GL_CONFIG_ENV_MAX + GL_CONFIG_SECRETS_MAX + 1] = {
	    "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/nonexistent", NULL};
	size_t ne = 3;
	for (size_t k = 0; spec->config && k < spec->config->ncopy_env; k++)
		envp[ne++] = spec->config->copy_env[k];
	if (spec->config && spec->config->args_env)
		envp[ne++] = spec->config->args_env;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		gl_fail_errno(f, GL_E_LAUNCH, "fork");
		free(script);
		close(ifd);
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0) {
		/* Dies with the broker (not a restriction: a lifetime). */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(127);
		/* move both out of the way before placing them on 3 and 4 */
		int hs = fcntl(sp[1], F_DUPFD_CLOEXEC, 10), hi = fcntl(ifd, F_DUPFD_CLOEXEC, 10);
		int null = open("/dev/null", O_RDWR);
		if (hs < 0 || hi < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(hs, 3) < 0 || dup2(hi, 4) < 0)
			_exit(127);
		fcntl(4, F_SETFD, FD_CLOEXEC); /* the interpreter; not inherited */
		syscall(SYS_close_range, 5u, ~0u, 0u);
		syscall(SYS_execveat, 4, "", argv, envp, AT_EMPTY_PATH);
		_exit(127);
	}
	free(script);
	close(ifd);
	close(sp[1]);
	p->pid = pid;
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	p->sock = sp[0];
	fcntl(p->sock, F_SETFL, O_NONBLOCK);
	p->up = p->started = true;
	return 0;
}

/* gl_session_fork but for its code (the caller's: germline or
 * germline_check). */
static int session_fork(struct gl_germline *g, bool one_call, const char *const *hosts,
			size_t nhost, struct gl_session_proc *p, bool *germline_lost,
			struct gl_fail *f)
{
	*p = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
	struct gl_runtime *rt = gl_germline_runtime(g);
	bool forks = gl_runtime_forks(rt);
	/* Algorithm 1 line 8's check holds for the baselines' germline too:
	 * the confined process starts from a data-free image (runtime exec has
	 * no germline to check). */
	if (gl_runtime_check(rt, f) < 0)
		return -1;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "socketpair");
	/* Line 9: a fork is bounded by gl_germline_fork before it runs release
	 * code, with the session's limits while it spawns; an exec copy (a
	 * verified launch with no item) below, before its call message starts
	 * the release's target. */
	struct gl_limits keep = g->lim;
	if (forks && !one_call)
		gl_cg_session_limits(&keep, &g->lim);
	struct gl_copy cp = {.pidfd = -1, .scratch = NULL};
	int rc = gl_runtime_spawn(rt,
				  &(struct gl_spawn){.chan = sp[1], .broker_sock = sp[0], .hosts = hosts,
						     .nhost = nhost},
				  &cp, f);
	g->lim = keep;
	p->pidfd = cp.pidfd;
	p->scratch = cp.scratch;
	if (rc < 0) {
		close(sp[0]);
		if (forks) /* a failed launch leaves no germline to lose */
			*germline_lost = true;
		return -1;
	}
	p->rt = rt;
	p->exec = !forks;
	if (!forks) {
		struct gl_limits lim = g->lim;
		if (!one_call)
			gl_cg_session_limits(&g->lim, &lim);
		struct gl_cg_copy cc;
		if (g->cg && gl_cg_bound_pidfd(g->cg, &lim, p->pidfd, true, &cc, f) < 0) {
			close(sp[0]);
			gl_runtime_end(rt, &cp);
			p->pidfd = -1;
			p->scratch = NULL;
			return -1;
		}
	}
	p->sock = sp[0];
	fcntl(p->sock, F_SETFL, O_NONBLOCK);
	p->up = p->started = p->confined = true;
	return 0;
}

void gl_session_stop(struct gl_session_proc *p)
{
	if (!p->up)
		return;
	if (p->sock >= 0)
		close(p->sock);
	/* a copy with its descendants (PID 1 of its namespace), an exec copy
	 * reaped with its scratch removed, or the unconfined child reaped */
	gl_broker_kill_wait(p->pidfd, p->pid, p->rt, p->scratch);
	*p = (struct gl_session_proc){.pid = -1, .pidfd = -1, .sock = -1};
}

/* ---- requests: the baselines' modes ------------------------------------------ */

/* sigpin and sigifc deliver every request (a host without a route is
 * attempted as named); fresh and confined only to D_f, the destination
 * allowlist. Nothing is recorded or compared: what is delivered is only
 * counted. */
static jv session_effect(struct run *r, const struct gl_msg *m, enum outcome *o, bool any_host)
{
	if (m->type == GL_MSG_STREAM) /* a declared port: its listener is the relay's */
		return gl_stream_effect(r, m, o, STREAM_DELIVER);
	struct gl_http_req req;
	autofail struct gl_fail f = {0};
	if (gl_http_req_init(&req, m, &f) < 0) {
		gl_broker_tally(&r->denied, 0, NULL);
		gl_http_req_free(&req);
		return gl_broker_denied();
	}
	jv reply;
	bool allowed = any_host || dest_index(r->c, req.host) >= 0;
	if (!allowed || !req.http || req.host_header_conflict) {
		gl_broker_tally(&r->denied, 0, req.host);
		reply = gl_broker_denied();
	} else {
		bool no_time = false;
		reply = gl_broker_deliver(r, &req, &no_time);
		if (no_time)
			*o = COPY_DEADLINE;
		else
			gl_broker_tally(&r->sent, 0, req.host);
	}
	gl_http_req_free(&req);
	return reply;
}

static jv allowlist_effect(struct run *r, const struct gl_msg *m, enum outcome *o)
{
	return session_effect(r, m, o, false);
}

static jv any_host_effect(struct run *r, const struct gl_msg *m, enum outcome *o)
{
	return session_effect(r, m, o, true);
}

/* A baseline's state is the process's own memory: state_put is dropped. */
const struct mode gl_mode_allowlist = {.name = "allowlist", .effect = allowlist_effect};
const struct mode gl_mode_any_host = {.name = "any host", .effect = any_host_effect};

/* ---- one call ----------------------------------------------------------------- */

/* The call message: every item with its contents, no slot. The twin
 * inputs are sent (the message's shape) but a session process ignores
 * them: a baseline reads the real clocks. */
static void session_message(struct run *r, enum gl_run_mode mode, struct gl_buf *msg)
{
	const struct gl_call *c = r->c;
	struct gl_twin twin;
	gl_twin_new(&twin);
	for (size_t x = 0; x < c->nitem; x++)
		r->items[x].b64 = r->b64[x];
	jv args = jv_is_valid(c->args) ? jv_copy(c->args) : jv_object();
	jv state = jv_object();
	gl_callmsg(msg, c->function, args, r->items, c->nitem, state, &twin);
	jv_free(args);
	jv_free(state);
	if (mode != GL_RUN_FRESH) {
		/* {…} -> {…,"session":true}: the host serves call after call on
		 * this channel (docs/design/run.md). */
		msg->len--;
		gl_buf_adds(msg, ",\"session\":true}");
	}
}

/* The record of a baseline's call that ran to o. */
static jv session_record(struct run *r, enum gl_run_mode mode, const struct gl_session_proc *p,
			 enum outcome o, const struct gl_msg *result)
{
	const struct gl_call *c = r->c;
	/* The per-call label (FIDES/CaMeL style, paper §VII-A): the join of
	 * the labels of the call's items. It says nothing of what the process
	 * kept from earlier calls, which is what Fig. 3 shows. */
	struct gl_labels L = {0};
	for (size_t x = 0; x < c->nitem; x++)
		gl_labels_join(&L, &c->item[x].label);
	const bool labelled = mode != GL_RUN_SIGPIN; /* Sig+Pin: no labels */
	jv results = jv_array();
	for (size_t i = 0; i < c->nconsumer; i++)
		results = jv_array_append(results,
					  gl_broker_consumer_record(c->consumer[i], o, result, r->why,
								    labelled ? &L : NULL, false));
	/* SPEC §6 for the baselines: every field the process chose carries
	 * the per-call label, which (as for their values) does not cover what
	 * it kept from earlier calls (docs/gl-run.md). */
	jv ls, lx;
	jv sent = gl_broker_tally_out(&r->sent, &L, &ls);
	jv denied = gl_broker_tally_out(&r->denied, &L, &lx);
	jv labels = JV_OBJECT(jv_string("call"), gl_labels_to_jv(&L), jv_string("delivered"), ls,
			      jv_string("denied"), lx, jv_string("triggers"), jv_array());
	gl_labels_free(&L);
	jv out = JV_OBJECT(jv_string("ok"), jv_true(), jv_string("copies"),
			   jv_number(p->started ? 1 : 0), jv_string("results"), results,
			   jv_string("delivered"), sent, jv_string("denied"), denied,
			   jv_string("triggers"), jv_array());
	/* Sig+Pin labels nothing, not even these (SPEC §6: "no labels") */
	if (labelled)
		out = jv_object_set(out, jv_string("labels"), labels);
	else
		jv_free(labels);
	return out;
}

jv gl_broker_session_call(const struct gl_broker *b, enum gl_run_mode mode,
			  struct gl_session_proc *p, const struct gl_call *c,
			  const struct gl_plan *plan,
			  const struct gl_config *cfg)
{
	bool any = mode == GL_RUN_SIGPIN || mode == GL_RUN_SIGIFC;
	struct run r;
	gl_broker_run_init(&r, any ? &gl_mode_any_host : &gl_mode_allowlist, b, c, plan, 0);
	r.sock = p->sock; /* the session's: the run never ends its process */
	r.config = cfg;
	autofail struct gl_fail why = {0};
	jv out;
	if (gl_broker_load_items(&r, &why) < 0) {
		out = gl_broker_refusal(&why);
	} else {
		autobuf struct gl_buf msg = {0};
		session_message(&r, mode, &msg);
		r.deadline = gl_mono_ns() + (int64_t)(b->deadline_s * 1e9);
		struct gl_msg result;
		enum outcome o = gl_broker_serve_copy(&r, NULL, &msg, &result);
		if (o != COPY_RESULT) {
			gl_warn("%s process: %s", mode == GL_RUN_FRESH ? "fresh" : "session",
				gl_broker_outcome_name[o]);
			gl_session_stop(p); /* the next call starts a new one */
		}
		out = session_record(&r, mode, p, o, &result);
		gl_msg_free(&result);
		p->started = false;
	}
	r.sock = -1;
	gl_broker_run_free(&r, NULL);
	return out;
}

int gl_session_fork(struct gl_germline *g, bool one_call, const char *const *hosts, size_t nhost,
		    struct gl_session_proc *p, bool *germline_lost, struct gl_fail *f)
{
	if (session_fork(g, one_call, hosts, nhost, p, germline_lost, f) == 0)
		return 0;
	f->code = *germline_lost ? GL_E_GERMLINE : GL_E_GERMLINE_CHECK;
	return -1;
}
