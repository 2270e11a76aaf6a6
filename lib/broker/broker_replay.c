/* broker_replay.c — the broker's replay mode, for gl-replay (paper §IV-F,
 * Definition 6, (P4) of Appendix A; docs/witness.md): one copy, forked from
 * the release's germline in the same confinement as under gl-run and
 * served by the same loop (gl_broker_serve), but nothing is ever
 * delivered: every request to a declared host is answered from the reply
 * environment R(d) by the positional rule of Definition 4, any other host
 * is denied, and state writes are acknowledged and dropped. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#include "broker/broker_impl.h"
#include "runtime/exec.h"
#include "broker/http.h"

/* R(d): the k-th request to e gets the reply d's copy got for its k-th
 * request to e when the digests are equal, else the placeholder ⊥. */
jv gl_broker_replay_effect(struct run *r, const struct gl_msg *m)
{
	struct gl_replay_in *in = r->replay;
	struct gl_http_req req;
	char *err = NULL;
	if (gl_http_req_init(&req, m, &err) < 0) {
		free(err);
		gl_http_req_free(&req);
		return gl_broker_denied();
	}
	struct gl_replay_host *h = NULL;
	for (size_t i = 0; i < in->nhost && req.http && !req.host_header_conflict; i++)
		if (!strcmp(in->host[i].host, req.host))
			h = &in->host[i];
	jv reply;
	if (!h) {
		reply = gl_broker_denied(); /* line 22: not in D_f */
	} else {
		size_t k = h->k++;
		if (!strcmp(h->host, in->dest)) {
			char hex[65];
			gl_hex(req.digest, 32, hex);
			r->replay_seq = jv_array_append(r->replay_seq, jv_string(hex));
		}
		if (k < h->n && !memcmp(h->digest[k], req.digest, 32) &&
		    jv_get_kind(h->reply[k]) == JV_KIND_OBJECT)
			reply = jv_copy(h->reply[k]);
		else
			reply = gl_broker_placeholder();
	}
	gl_http_req_free(&req);
	return reply;
}

/* An exec release's run (lib/runtime/exec.h): a fresh verified launch, as gl-run's
 * exec_copy (lib/broker/broker_copy.c), reading exactly in->files, with D_f
 * resolving to its relay. */
static int exec_run(struct gl_germline *g, const struct gl_replay_in *in, int chan, int *pidfd,
		    char **scratch, char **err)
{
	const char **hosts = gl_xcalloc(in->nhost + 1, sizeof *hosts);
	for (size_t i = 0; i < in->nhost; i++)
		hosts[i] = in->host[i].host;
	int rc = gl_exec_copy(g->exec, in->files, in->nfiles, hosts, in->nhost, chan, pidfd,
			      scratch, err);
	free(hosts);
	return rc;
}

int gl_broker_replay(struct gl_germline *g, struct gl_replay_in *in, jv *seq,
		     const char **outcome, bool *germline_lost, char **err)
{
	struct gl_broker b = {.deadline_s = in->deadline_s};
	struct run r = {.b = &b, .sock = -1, .replay = in, .replay_seq = jv_array()};
	*germline_lost = false;
	for (size_t i = 0; i < in->nhost; i++)
		in->host[i].k = 0;
	/* Algorithm 1 line 8: the germline must still be data-free (A2). An
	 * exec release has none: each run is its own verified launch. */
	if (!g->exec && gl_germline_check(g, err) < 0) {
		jv_free(r.replay_seq);
		return -1;
	}
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		gl_die_errno(GL_EXIT_USAGE, "socketpair");
	int pidfd = -1;
	if (g->exec ? exec_run(g, in, sp[1], &pidfd, &r.scratch, err) < 0
		    : gl_germline_fork(g, sp[1], sp[0], &pidfd, err) < 0) {
		close(sp[0]);
		*germline_lost = true;
		jv_free(r.replay_seq);
		return -1;
	}
	r.sock = sp[0];
	fcntl(r.sock, F_SETFL, O_NONBLOCK);
	r.deadline = gl_mono_ns() + (int64_t)(in->deadline_s * 1e9);
	autobuf struct gl_buf msg = {0};
	gl_callmsg(&msg, in->function, in->args, in->item, in->nitem, in->state, in->twin);
	enum outcome o =
	    gl_broker_reply_status(gl_msg_write(r.sock, r.deadline, msg.data, msg.len));
	struct gl_msg result = {.doc = jv_invalid(), .value = jv_invalid()};
	if (o == COPY_RESULT)
		o = gl_broker_serve(&r, &result);
	/* Line 27: the copy and its descendants are gone before the next run. */
	if (g->exec)
		gl_exec_copy_done(pidfd, r.scratch); /* killed, reaped, scratch removed */
	else
		gl_copy_kill(pidfd);
	close(pidfd);
	close(r.sock);
	gl_msg_free(&result);
	free(r.why);
	*outcome = gl_broker_outcome_name[o];
	*seq = r.replay_seq;
	return 0;
}
