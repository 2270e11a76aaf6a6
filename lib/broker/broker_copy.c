/* broker_copy.c — one copy's life for the broker (Algorithm 1 lines 8, 9
 * and 27) through the runtime seam (lib/runtime/runtime.h): its check
 * (the germline's G1–G3), its spawn (a fork, or for runtime exec a verified
 * launch; or with gl-run --pool the pooled copy) and its end with its
 * descendants (A1). What the seam has no op for, because it is one
 * runtime's, is asked of gl_runtime_forks: the pool (a germline's), a
 * launch's receipts and an exec copy's bound after its spawn.
 * See broker_impl.h. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cancel.h"
#include "json/json.h"
#include "runtime/launch.h"
#include "sandbox/live.h"
#include "core/util.h"

/* Line 8: the germline must still be data-free (A2). 0, or -1 with *f
 * (germline_check) naming the check. With gl-run --pool the next copy
 * is the pooled one when it is alive: the germline passed this check just
 * before that copy was forked (gl_germline_prefork). */
int gl_broker_check_germline(struct run *r, struct gl_germline *gm, struct gl_fail *f)
{
	struct gl_runtime *rt = gl_germline_runtime(gm);
	if (gl_runtime_forks(rt)) { /* the pool is the germline's (§VI) */
		if (r->b->pool && gm->pooled)
			return 0;
		gl_germline_settle(gm); /* the last copy is gone before G1 looks (A1) */
	}
	/* exec checks nothing here: each copy is a verified launch, checked
	 * by gl_proc_check_exec after it */
	if (gl_runtime_check(rt, f) < 0) {
		f->code = GL_E_GERMLINE_CHECK;
		return -1;
	}
	return 0;
}

/* Line 9 through the seam: the copy on channel sp (its end sp[1] closed by
 * the spawn), into r->pidfd and r->scratch. An exec copy is a verified
 * launch (lib/runtime/exec.h) that can read exactly the item files and
 * directories of its view (all of them for lazy's probe); a fork gets its
 * items in the call message and ignores .items. 0, or -1 with f. */
static int spawn_copy(struct run *r, struct gl_germline *gm, const int sp[2], struct gl_fail *f)
{
	struct gl_runtime *rt = gl_germline_runtime(gm);
	const struct gl_call *c = r->c;
	struct gl_exec_item *items = gl_xcalloc(c->nitem + 1, sizeof *items);
	size_t n = 0;
	jv_array_foreach(c->items, i, it)
	{
		const char *name = gl_json_get_str(it, "name");
		int k = name ? gl_broker_item_index(c, name) : -1;
		if (k >= 0 && r->item_fd[k] >= 0 &&
		    (r->mode->full_view || in_view(&r->plan->group[r->gi], (size_t)k)))
			items[n++] = (struct gl_exec_item){.fd = r->item_fd[k], .dir = gl_json_get_bool(it, "dir", 0)};
		jv_free(it);
	}
	struct gl_spawn s = {.items = items,
			     .nitem = n,
			     .hosts = (const char *const *)c->dest,
			     .nhost = c->ndest,
			     .chan = sp[1],
			     .broker_sock = sp[0]};
	struct gl_copy cp = {.pidfd = -1, .scratch = NULL};
	gm->lane = r->b->lane; /* this call's copy number (gl-run --jobs) */
	int rc = gl_runtime_spawn(rt, &s, &cp, f);
	free(items);
	r->pidfd = cp.pidfd;
	r->scratch = cp.scratch;
	/* One signed receipt per launch (SPEC §9, seed 002): this copy's. */
	if (!gl_runtime_forks(rt) && r->b->launcher)
		gl_launch_exec_copy(r->b->launcher, c->release, gm->exec, rc,
				    rc < 0 ? gl_fail_detail(f) : NULL, &r->ev, r->b->ids);
	return rc;
}

enum outcome gl_broker_limit_outcome(struct gl_germline *gm, int pidfd, enum outcome o)
{
	if (!gm->cg || pidfd < 0)
		return o;
	/* A copy that ended without a result may have been killed by its bound;
	 * one that is alive may have met it (a failed fork or allocation). */
	const char *why = gl_cg_reached(gm->cg, &gm->cc, o == COPY_RESULT || o == COPY_PROTOCOL,
					pidfd);
	if (!why)
		return o;
	return !strcmp(why, "memory") ? COPY_MEMORY : !strcmp(why, "pids") ? COPY_PIDS : COPY_CPU;
}

int gl_broker_kill_wait(int pidfd, pid_t child, struct gl_runtime *rt, char *scratch)
{
	int ws = -1;
	if (rt) {
		/* gone with its descendants (A1); exec: reaped, scratch removed */
		struct gl_copy cp = {.pidfd = pidfd, .scratch = scratch};
		ws = gl_runtime_end(rt, &cp);
	} else if (pidfd >= 0)
		gl_copy_kill(pidfd); /* returns once it and its descendants are gone */
	else if (child > 0)
		kill(child, SIGKILL);
	if (!rt && child > 0)
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	if (pidfd >= 0)
		close(pidfd);
	return ws;
}

/* Line 27 for one copy: it and its descendants are gone (A1). With gl-run
 * --pool the copy is killed here and awaited before the next copy starts
 * (gl_copy_retire), so the call's record need not wait for the kernel's
 * teardown of its namespaces. A bounded mode's copy leaves nothing in its
 * cgroup (lib/sandbox/cgroup.h). */
void gl_broker_end_copy(struct run *r, struct gl_germline *gm)
{
	int pidfd = r->pidfd;
	struct gl_runtime *rt = gl_germline_runtime(gm);
	bool forks = gl_runtime_forks(rt);
	gl_cancel_disarm(r->b->cancel, pidfd); /* before its pidfd is closed */
	/* gl-run --jobs: killed first, out of the shared table once gone (a
	 * worker killed between the two leaves no copy running, and G1 in
	 * another worker never meets a dying copy it does not know;
	 * lib/sandbox/live.h) */
	pid_t live = r->live_pid; /* read while it ran: a reaped copy's pidfd names no pid */
	r->live_pid = -1;
	if (pidfd >= 0 && gl_live_on() && forks) /* an exec copy: its exit for its receipt */
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	if (forks && r->b->pool) {
		gl_live_remove_pid(live); /* --pool keeps one call per release (jobs.c) */
		gl_copy_retire(gm, pidfd);
	} else {
		int ws = gl_broker_kill_wait(pidfd, -1, rt, r->scratch);
		if (!forks && r->b->launcher) /* the launch receipt's "exited" (SPEC §9) */
			gl_launch_exec_end(r->b->launcher, &r->ev, ws, r->b->ids);
		gl_live_remove_pid(live);
		if (gm->cg && r->mode->bounded)
			gl_cg_drain(gm->cg, &gm->cc);
	}
	r->scratch = NULL;
	r->pidfd = -1;
	if (r->sock >= 0)
		close(r->sock);
	r->sock = -1;
}

/* An exec copy's bound (lib/sandbox/cgroup.h), before its call message, for which
 * gl-exec-host waits before it starts the release's target. 0, or -1 with
 * f. */
static int exec_bound(struct gl_germline *gm, int pidfd, struct gl_fail *f)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
	autofree char *info = NULL;
	size_t len;
	const char *p = NULL;
	if (gl_read_file_capped(path, 64 * 1024, &info, &len) == 0)
		p = strstr(info, "\nPid:");
	long pid = p ? strtol(p + 5, NULL, 10) : 0;
	if (pid <= 0)
		return gl_fail(f, GL_E_LAUNCH, "limits: the exec copy's pid is unknown");
	if (gl_cg_bound_copy(gm->cg, &gm->lim, (pid_t)pid, true, &gm->cc, f) < 0)
		return -1;
	gm->enf.limits_memory = gm->cc.mem;
	gm->enf.limits_pids = gm->cc.pids;
	gm->enf.limits_cpu = gm->cc.cpu;
	return 0;
}

/* Line 9: fork a copy on a fresh channel (r->sock); its absolute budget
 * starts now. 0 with *pidfd, or -1 with *f, a refusal of the call (germline
 * or launch; *lost: the germline is to be relaunched). */
int gl_broker_fork_copy(struct run *r, struct gl_germline *gm, bool *lost, size_t *copies,
			struct gl_fail *f)
{
	int sp[2];
	int *pidfd = &r->pidfd;
	*pidfd = -1;
	bool forks = gl_runtime_forks(gl_germline_runtime(gm));
	bool pooled = forks && r->b->pool && gm->pooled, took = false;
	if (pooled && gl_germline_take(gm, &sp[0], pidfd)) {
		/* the pooled copy: forked, confined and checked before this call */
		took = true;
	} else {
		if (pooled && gl_broker_check_germline(r, gm, f) < 0)
			return -1; /* it died while it waited: line 8 for a fork now */
		/* no channel, no copy: the call is refused as a failed fork or
		 * launch would be, but the germline is not lost */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
			return gl_fail(f, forks ? GL_E_GERMLINE : GL_E_LAUNCH, "socketpair: %s",
				       strerror(errno));
		if (spawn_copy(r, gm, sp, f) < 0) {
			close(sp[0]);
			*lost = true;
			if (!forks) { /* an exec copy's launch */
				f->code = GL_E_LAUNCH;
				return -1;
			}
			autofree char *d = gl_fail_steal(f);
			return gl_fail(f, GL_E_GERMLINE, "fork request failed: %s", d);
		}
	}
	/* a fork bounded itself before release code ran (gl_germline_fork); an
	 * exec copy is bounded now, after its spawn */
	if (!forks && gm->cg && exec_bound(gm, *pidfd, f) < 0) {
		/* its target has not started: it waits for the call message */
		gl_broker_kill_wait(*pidfd, -1, gl_germline_runtime(gm), r->scratch);
		r->scratch = NULL;
		*pidfd = -1;
		close(sp[0]);
		f->code = GL_E_LAUNCH;
		return -1;
	}
	/* gl-run --jobs (lib/sandbox/live.h): the copy is this worker's in the
	 * shared table, so the main process kills it should the worker die;
	 * one it could not register never runs (its call message is unsent).
	 * A fork registered itself under the fork lock (gl_germline_fork); a
	 * pooled copy and an exec copy are registered here. */
	if ((!forks || took) && gl_live_add(*pidfd) < 0) {
		gl_broker_kill_wait(*pidfd, -1, gl_germline_runtime(gm), r->scratch);
		r->scratch = NULL;
		*pidfd = -1;
		close(sp[0]);
		return gl_fail(f, forks ? GL_E_GERMLINE : GL_E_LAUNCH,
			       "the table of live copies is full (%d)", GL_LIVE_COPIES_MAX);
	}
	r->live_pid = gl_live_pid(*pidfd); /* alive: it waits for its call message */
	(*copies)++;
	gl_cancel_arm(r->b->cancel, *pidfd); /* a cancelled call kills it (lib/core/cancel.h) */
	r->sock = sp[0];
	fcntl(r->sock, F_SETFL, O_NONBLOCK);
	r->deadline = gl_mono_ns() + (int64_t)(r->b->deadline_s * 1e9);
	return 0;
}
