/* broker_replay.c — the broker's replay mode, for gl-replay (paper §IV-F,
 * Definition 6, (P4) of Appendix A; docs/witness.md): one copy, forked from
 * the release's germline in the same confinement as under gl-run and
 * served by the same loop (gl_broker_serve_copy) in the replay mode, but nothing is ever
 * delivered: every request to a declared host is answered from the reply
 * environment R(d) by the positional rule of Definition 4, any other host
 * is denied, and state writes are acknowledged and dropped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/broker_impl.h"
#include "broker/http.h"
#include "core/util.h"
#include "json/json.h"
#include "release/manifest.h"

/* R(d): the k-th request to e gets the reply d's copy got for its k-th
 * request to e when the digests are equal, else the placeholder ⊥. */
static jv replay_effect(struct run *r, const struct gl_msg *m, enum outcome *o)
{
	if (m->type == GL_MSG_STREAM)
		return gl_stream_effect(r, m, o, STREAM_REPLAY);
	struct gl_replay_in *in = r->replay;
	struct gl_http_req req;
	autofail struct gl_fail f = {0};
	if (gl_http_req_init(&req, m, &f) < 0) {
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

/* Each stream destination's turns from its part of T(d) (r->rdest), so
 * the replay copy is answered and cut as the comparing copy was
 * (lib/broker/stream.c). An entry that is no turn is left out. */
static void stream_record(struct run *r)
{
	const struct gl_replay_in *in = r->replay;
	r->rdest = gl_xcalloc(in->nhost ? in->nhost : 1, sizeof *r->rdest);
	for (size_t i = 0; i < in->nhost; i++) {
		const struct gl_replay_host *h = &in->host[i];
		struct stream_rec *s = &r->rdest[i].srec;
		for (size_t j = 0; gl_dest_port(h->host) && j < h->n; j++) {
			int64_t conn = -1, len = -1;
			const char *data = gl_json_get_str(h->reply[j], "data");
			size_t n = 0;
			unsigned char *bytes = data ? gl_b64_decode(data, strlen(data), &n) : NULL;
			if (gl_json_get_int(h->reply[j], "conn", &conn) < 0 || conn < 0 ||
			    conn >= GL_MSG_STREAM_CONNS_MAX ||
			    gl_json_get_int(h->reply[j], "len", &len) < 0 || len < 0 || !bytes) {
				free(bytes); /* not a turn: the replay is answered without it */
				continue;
			}
			if (s->n == s->cap) {
				s->cap = s->cap ? 2 * s->cap : 8;
				s->t = gl_xrealloc(s->t, s->cap * sizeof *s->t);
			}
			struct stream_turn *t = &s->t[s->n++];
			*t = (struct stream_turn){.conn = (size_t)conn, .len = (size_t)len,
						  .eof = gl_json_get_bool(h->reply[j], "eof", 0) == 1};
			memcpy(t->digest, h->digest[j], 32);
			gl_buf_add(&t->reply, (const char *)bytes, n);
			free(bytes);
			s->nconn = (size_t)conn + 1 > s->nconn ? (size_t)conn + 1 : s->nconn;
		}
	}
}


/* Line 9 through the seam (lib/runtime/runtime.h): a fork from the
 * germline, or for an exec release a fresh verified launch, as gl-run's
 * (lib/broker/broker_copy.c), reading exactly in->files, with D_f resolving
 * to its relay (a fork ignores both). 0, or -1 with f. */
static int spawn_run(struct run *r, struct gl_runtime *rt, const struct gl_replay_in *in,
		     const int sp[2], struct gl_fail *f)
{
	const char **hosts = gl_xcalloc(in->nhost + 1, sizeof *hosts);
	for (size_t i = 0; i < in->nhost; i++)
		hosts[i] = in->host[i].host;
	struct gl_spawn s = {.items = in->files,
			     .nitem = in->nfiles,
			     .hosts = hosts,
			     .nhost = in->nhost,
			     .chan = sp[1],
			     .broker_sock = sp[0]};
	struct gl_copy cp = {.pidfd = -1, .scratch = NULL};
	int rc = gl_runtime_spawn(rt, &s, &cp, f);
	free(hosts);
	r->pidfd = cp.pidfd;
	r->scratch = cp.scratch;
	return rc;
}

/* Nothing is delivered or stored; the copy is not asked of its bound: its
 * outcome is one of the four a witness compares (docs/witness.md). */
const struct mode gl_mode_replay = {.name = "replay", .effect = replay_effect};

/* gl_broker_replay but for its code (the caller's: launch, germline or
 * germline_check). */
static int broker_replay(struct gl_germline *g, struct gl_replay_in *in, jv *seq,
			 const char **outcome, bool *germline_lost, struct gl_fail *f)
{
	struct gl_broker b = {.deadline_s = in->deadline_s};
	struct run r;
	gl_broker_run_init(&r, &gl_mode_replay, &b, NULL, NULL, 0);
	r.replay = in;
	r.replay_seq = jv_array();
	stream_record(&r);
	*germline_lost = false;
	for (size_t i = 0; i < in->nhost; i++)
		in->host[i].k = 0;
	/* Algorithm 1 line 8: the germline must still be data-free (A2). An
	 * exec release has none (its check is nothing): each run is its own
	 * verified launch. */
	struct gl_runtime *rt = gl_germline_runtime(g);
	if (gl_runtime_check(rt, f) < 0) {
		gl_broker_run_free(&r, g);
		return -1;
	}
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		gl_fail_errno(f, GL_E_GERMLINE_CHECK, "socketpair");
		gl_broker_run_free(&r, g);
		return -1;
	}
	if (spawn_run(&r, rt, in, sp, f) < 0) { /* line 9 */
		close(sp[0]);
		r.pidfd = -1;
		*germline_lost = true;
		gl_broker_run_free(&r, g);
		return -1;
	}
	r.sock = sp[0];
	fcntl(r.sock, F_SETFL, O_NONBLOCK);
	r.deadline = gl_mono_ns() + (int64_t)(in->deadline_s * 1e9);
	autobuf struct gl_buf msg = {0};
	gl_callmsg(&msg, in->function, in->args, in->item, in->nitem, in->state, in->twin);
	struct gl_msg result;
	/* lines 10–24; line 27: the copy and its descendants are gone before
	 * the next run */
	enum outcome o = gl_broker_serve_copy(&r, g, &msg, &result);
	gl_msg_free(&result);
	*outcome = gl_broker_outcome_name[o];
	*seq = r.replay_seq;
	r.replay_seq = jv_invalid();
	gl_broker_run_free(&r, g);
	return 0;
}

int gl_broker_replay(struct gl_germline *g, struct gl_replay_in *in, jv *seq, const char **outcome,
		     bool *germline_lost, struct gl_fail *f)
{
	if (broker_replay(g, in, seq, outcome, germline_lost, f) == 0)
		return 0;
	/* a failed launch (runtime exec) refuses the run; a fork that failed
	 * lost the germline, else G1–G3 refused it */
	bool forks = gl_runtime_forks(gl_germline_runtime(g));
	f->code = !forks ? GL_E_LAUNCH : *germline_lost ? GL_E_GERMLINE : GL_E_GERMLINE_CHECK;
	return -1;
}
