/* stream.c — host:port destinations: Algorithm 1 on a TCP byte stream
 * (SPEC §5 "host:port (a TCP byte stream relayed and compared by the
 * broker)"; docs/streams.md).
 *
 * An exec copy's relay sends what its target writes on a connection to a
 * declared host:port as stream messages (lib/json/msg.h), and writes back
 * what the broker answers. The broker keeps, per destination e, a record
 * of turns (broker_impl.h struct stream_turn):
 *
 *   - the copy that serves e (e ∈ g, lines 13–15) is connected to e for
 *     real; what it writes is delivered as it comes, and each time bytes of
 *     e reach it a turn ends: the bytes it wrote since the last turn
 *     (their length and digest) and what e sent, in order. Its label joins
 *     c(e) (line 15).
 *   - every other copy (lines 16–21) is answered from that record: its
 *     bytes are cut where the record's turns end, whatever chunks its relay
 *     read them in, and when a turn's bytes match the recorded digest it
 *     gets that turn's reply (and the turns after it where e spoke
 *     unasked). A turn that differs, bytes past the record, a connection
 *     the serving copy never opened, or fewer bytes than it sent (at the
 *     close or the copy's end) is a trigger of e (Definition 4's positional
 *     rule, its position the connection's number), and that connection is
 *     closed: nothing recorded is given past the first difference.
 *
 * The turns are the stream's "requests": each is an entry of T(g) with
 * its digest and reply, so a witness and gl-replay treat them as they do
 * HTTP requests (Definition 6); the replay copy is cut at the same turns.
 * What the copy sends never chooses how much the broker reads or keeps:
 * every read is bounded, and recorded bytes count in GL_BROKER_RECORD_MAX. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/util.h"
#include "json/json.h"
#include "plan/policy.h"
#include "release/manifest.h"

/* How long the serving copy's message waits for e's bytes when none are
 * there yet: the relay asks again while the connection is open, so this
 * paces an idle connection's polls. */
#define STREAM_WAIT_MS 50
#define STREAM_READ_MAX (256u << 10) /* bytes of e read per message */
#define STREAM_CONNECT_MS 10000
#define STREAM_MSGS_MAX 65536 /* stream messages per copy */

/* One connection of the running copy. */
struct stream_conn {
	unsigned copy_conn; /* the copy's number for it */
	size_t e, k;        /* its destination, and its number among the copy's to e (0…) */
	int fd;             /* the serving copy's socket to e, or -1 */
	crypto_hash_sha256_state h;
	size_t got;   /* bytes of the current turn */
	size_t next;  /* others: the index in the record of the turn they are in */
	bool dead;    /* closed: a trigger, e's close, or the copy's */
	bool compare; /* answered from the record */
	struct stream_auth auth; /* the serving copy's: the operator's secrets (stream_auth.c) */
};

/* The digest of a turn starts with the destination and the connection's
 * number, so a turn of one connection never matches another's. */
static void turn_start(struct stream_conn *sc, const char *dest)
{
	crypto_hash_sha256_init(&sc->h);
	crypto_hash_sha256_update(&sc->h, (const unsigned char *)"gl-stream", 10);
	crypto_hash_sha256_update(&sc->h, (const unsigned char *)dest, strlen(dest) + 1);
	unsigned char k[8];
	for (int i = 0; i < 8; i++)
		k[i] = (unsigned char)((uint64_t)sc->k >> (56 - 8 * i));
	crypto_hash_sha256_update(&sc->h, k, 8);
	sc->got = 0;
}

void gl_stream_rec_free(struct stream_rec *s)
{
	for (size_t i = 0; i < s->n; i++)
		gl_buf_free(&s->t[i].reply);
	free(s->t);
	*s = (struct stream_rec){0};
}

static jv stream_reply(const struct gl_buf *data, bool eof, bool more)
{
	struct gl_buf b = {0};
	gl_b64_encode(&b, (const unsigned char *)(data->data ? data->data : ""), data->len);
	jv v = JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("data"),
			 jv_string_sized(b.data ? b.data : "", (int)b.len), jv_string("eof"),
			 jv_bool(eof), jv_string("more"), jv_bool(more));
	free(b.data);
	return v;
}

/* The turn as an entry of T(g): its digest, and its reply with the
 * connection's number and the turn's length (what a replay cuts by). */
static void note_turn(struct run *r, const char *dest, const struct stream_turn *t,
		      const char *source)
{
	char hex[65];
	gl_hex(t->digest, 32, hex);
	struct gl_buf b = {0};
	gl_b64_encode(&b, (const unsigned char *)(t->reply.data ? t->reply.data : ""), t->reply.len);
	jv reply = JV_OBJECT(jv_string("type"), jv_string("reply"), jv_string("conn"),
			     jv_number((double)t->conn), jv_string("len"), jv_number((double)t->len),
			     jv_string("data"), jv_string_sized(b.data ? b.data : "", (int)b.len),
			     jv_string("eof"), jv_bool(t->eof));
	free(b.data);
	r->requests++; /* a turn is a request: GL_BROKER_REQUESTS_MAX, as a witness holds */
	gl_broker_note_entry(r, dest, "STREAM", hex, source, reply);
	if (r->replay && jv_is_valid(r->replay_seq) && !strcmp(dest, r->replay->dest))
		r->replay_seq = jv_array_append(r->replay_seq, jv_string(hex));
	jv_free(reply);
}

/* ---- the serving copy: connected to e for real ------------------------------ */

/* A connected socket to addr ("host:port", "[v6]:port") within the
 * budget, or -1. */
static int connect_to(const char *addr, int64_t deadline)
{
	autofree char *a = gl_xstrdup(addr);
	char *colon = strrchr(a, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	char *host = a;
	if (host[0] == '[' && colon > a + 1 && colon[-1] == ']') {
		host++;
		colon[-1] = '\0';
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
		return -1;
	int fd = -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		int64_t left = (deadline - gl_mono_ns()) / 1000000;
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int err = 0;
		socklen_t el = sizeof err;
		if (errno != EINPROGRESS || left <= 0 ||
		    poll(&p, 1, (int)(left < STREAM_CONNECT_MS ? left : STREAM_CONNECT_MS)) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* e's bytes that are there (waiting up to STREAM_WAIT_MS for the first),
 * into out; true when e closed (or the socket failed). */
static bool read_some(int fd, struct gl_buf *out, int64_t deadline)
{
	int64_t left = (deadline - gl_mono_ns()) / 1000000;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, (int)(left < STREAM_WAIT_MS ? (left > 0 ? left : 0) : STREAM_WAIT_MS)) <= 0)
		return false;
	char tmp[65536];
	while (out->len < STREAM_READ_MAX) {
		ssize_t n = recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
		if (n > 0) {
			gl_buf_add(out, tmp, (size_t)n);
			continue;
		}
		return n == 0 || (errno != EAGAIN && errno != EINTR);
	}
	return false;
}

/* End the serving copy's current turn with reply (moved) and eof. */
static int end_turn(struct run *r, struct stream_conn *sc, struct gl_buf *reply, bool eof,
		    enum outcome *o)
{
	struct stream_rec *s = &r->dest[sc->e].srec;
	r->recorded += reply->len;
	if (r->recorded > GL_BROKER_RECORD_MAX) {
		*o = gl_broker_protocol(r, "replies recorded for the call exceed %u bytes",
					GL_BROKER_RECORD_MAX);
		return -1;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->t = gl_xrealloc(s->t, s->cap * sizeof *s->t);
	}
	struct stream_turn *t = &s->t[s->n++];
	*t = (struct stream_turn){.conn = sc->k, .len = sc->got, .reply = *reply, .eof = eof};
	*reply = (struct gl_buf){0};
	crypto_hash_sha256_final(&sc->h, t->digest);
	if (t->len)
		r->dest[sc->e].delivered++;
	note_turn(r, r->c->dest[sc->e], t, "delivered");
	turn_start(sc, r->c->dest[sc->e]);
	return 0;
}

/* Lines 13–15 on a stream: deliver, record, L ⊔ c(e). */
static jv serve_live(struct run *r, struct stream_conn *sc, const struct gl_msg *m, bool record,
		     enum outcome *o)
{
	const char *dest = r->c->dest[sc->e];
	struct gl_buf got = {0};
	if (sc->dead) /* closed before: nothing more is recorded */
		return stream_reply(&got, true, false);
	bool eof = sc->fd < 0;
	if (!eof && m->body_len) {
		crypto_hash_sha256_update(&sc->h, m->body, m->body_len);
		sc->got += m->body_len;
		/* got: what the broker's own authentication shows the copy */
		eof = !gl_stream_auth_send(&sc->auth, sc->fd, m->body, m->body_len, &got,
					   r->deadline);
	}
	if (!eof && !m->close && !got.len)
		eof = read_some(sc->fd, &got, r->deadline);
	/* no secret's value reaches a copy or the record (stream_auth.c) */
	gl_stream_mask(&sc->auth, r->config, &got, got.len && !eof && !m->close);
	jv reply = stream_reply(&got, eof || m->close, !eof && !m->close);
	if (record && (got.len || eof || (m->close && sc->got)) && end_turn(r, sc, &got, eof, o) < 0) {
		gl_buf_free(&got);
		jv_free(reply);
		return jv_invalid();
	}
	if (!record)
		gl_broker_tally(&r->sent, 0, dest);
	gl_buf_free(&got);
	if (eof || m->close) {
		if (sc->fd >= 0)
			close(sc->fd);
		sc->fd = -1;
		sc->dead = true;
		gl_stream_auth_free(&sc->auth);
	}
	return reply;
}

/* ---- every other copy: answered from the record ----------------------------- */

/* The record's next turn of sc's connection from index i on, or s->n. */
static size_t next_of(const struct stream_rec *s, const struct stream_conn *sc, size_t i)
{
	while (i < s->n && s->t[i].conn != sc->k)
		i++;
	return i;
}

/* A difference on sc: the trigger (once per copy and host, against a
 * comparable host), a T(g) entry of what the copy sent, the connection
 * closed. */
static void differ(struct run *r, struct stream_conn *sc, const char *kind)
{
	if (sc->dead)
		return;
	sc->dead = true;
	if (r->replay)
		return; /* replay: its sequence says it */
	if (gl_broker_comparable(r, sc->e) && !r->dest[sc->e].triggered)
		gl_broker_trigger(r, sc->e, sc->k + 1, kind);
}

/* The turns e took unasked after the copy's position (length 0): theirs. */
static void unasked(struct run *r, struct stream_conn *sc, const struct stream_rec *s,
		    const char *dest, struct gl_buf *out, bool *eof)
{
	for (size_t i = next_of(s, sc, sc->next); i < s->n && s->t[i].len == 0 && !*eof;
	     i = next_of(s, sc, i + 1)) {
		gl_buf_add(out, s->t[i].reply.data, s->t[i].reply.len);
		*eof = s->t[i].eof;
		note_turn(r, dest, &s->t[i], "recorded");
		sc->next = i + 1;
		turn_start(sc, dest);
	}
}

/* Lines 16–21 on a stream: the copy's bytes against the record's turns. */
static jv serve_recorded(struct run *r, struct stream_conn *sc, const struct gl_msg *m,
			 const struct stream_rec *s, const char *dest)
{
	struct gl_buf out = {0};
	bool eof = sc->dead;
	if (!eof)
		unasked(r, sc, s, dest, &out, &eof);
	size_t off = 0;
	while (!eof && !sc->dead && off < m->body_len) {
		size_t i = next_of(s, sc, sc->next);
		if (i == s->n) {
			differ(r, sc, "extra"); /* bytes past the record */
			break;
		}
		size_t take = s->t[i].len - sc->got;
		take = take < m->body_len - off ? take : m->body_len - off;
		crypto_hash_sha256_update(&sc->h, m->body + off, take);
		sc->got += take;
		off += take;
		if (sc->got < s->t[i].len)
			break;
		struct stream_turn mine = s->t[i];
		crypto_hash_sha256_final(&sc->h, mine.digest);
		bool match = !memcmp(mine.digest, s->t[i].digest, 32);
		mine.reply = match ? s->t[i].reply : (struct gl_buf){0};
		mine.eof = match ? s->t[i].eof : true;
		note_turn(r, dest, &mine, match ? "recorded" : "placeholder");
		if (!match) {
			differ(r, sc, "mismatch");
			break;
		}
		gl_buf_add(&out, s->t[i].reply.data, s->t[i].reply.len);
		eof = s->t[i].eof;
		sc->next = i + 1;
		turn_start(sc, dest);
		unasked(r, sc, s, dest, &out, &eof);
	}
	if (m->close && !sc->dead && (sc->got || next_of(s, sc, sc->next) < s->n))
		differ(r, sc, "missing"); /* it closed before the record's end */
	eof = eof || sc->dead || m->close;
	sc->dead = eof;
	jv reply = stream_reply(&out, eof, false);
	gl_buf_free(&out);
	return reply;
}

/* ---- the message ------------------------------------------------------------- */

/* The destination of port among D_f, or -1. */
static int dest_of_port(const struct run *r, unsigned port, const char **name)
{
	if (r->replay) {
		for (size_t i = 0; i < r->replay->nhost; i++)
			if (gl_dest_port(r->replay->host[i].host) == port) {
				*name = r->replay->host[i].host;
				return (int)i;
			}
		return -1;
	}
	for (size_t i = 0; i < r->c->ndest; i++)
		if (gl_dest_port(r->c->dest[i]) == port) {
			*name = r->c->dest[i];
			return (int)i;
		}
	return -1;
}

/* The running copy's connection m names (*fresh: opened by this message),
 * numbered among its connections to e; NULL for a number the copy used for
 * another destination, or past GL_MSG_STREAM_CONNS_MAX. */
static struct stream_conn *conn_of(struct run *r, const struct gl_msg *m, size_t e,
				   struct dest_state *d, bool *fresh)
{
	*fresh = false;
	size_t k = 0;
	for (size_t i = 0; i < r->nsconn; i++) {
		if (r->sconn[i].copy_conn == m->conn)
			return r->sconn[i].e == e ? &r->sconn[i] : NULL;
		k += r->sconn[i].e == e;
	}
	if (r->nsconn == GL_MSG_STREAM_CONNS_MAX)
		return NULL;
	r->sconn = gl_xrealloc(r->sconn, (r->nsconn + 1) * sizeof *r->sconn);
	struct stream_conn *sc = &r->sconn[r->nsconn++];
	*sc = (struct stream_conn){.copy_conn = m->conn, .e = e, .k = k, .fd = -1};
	if (d)
		d->sconns = k + 1;
	*fresh = true;
	return sc;
}

/* The serving copy's (or a baseline's) first message on sc: connected to
 * e (a policy route first), L ⊔ c(e). A failed connect is a closed
 * connection, recorded as such. */
static void open_live(struct run *r, struct stream_conn *sc, const char *dest)
{
	const char *route = gl_policy_route(r->b->pol, dest);
	sc->fd = connect_to(route ? route : dest, r->deadline);
	/* an operator's secret authenticates it, before the copy's bytes */
	if (sc->fd >= 0 && !gl_stream_auth_open(&sc->auth, r->config, dest, sc->fd, r->deadline)) {
		close(sc->fd);
		sc->fd = -1;
	}
	gl_labels_join(&r->L, gl_policy_clearance(r->b->pol, dest));
}

static jv stream_of(struct run *r, const struct gl_msg *m, enum outcome *o, enum stream_role role,
		    int e, struct dest_state *d, const char *dest);

jv gl_stream_effect(struct run *r, const struct gl_msg *m, enum outcome *o, enum stream_role role)
{
	if (++r->stream_msgs > STREAM_MSGS_MAX) {
		*o = gl_broker_protocol(r, "more than %d stream messages", STREAM_MSGS_MAX);
		return jv_invalid();
	}
	const char *dest = NULL;
	int e = dest_of_port(r, m->port, &dest);
	char port[32];
	snprintf(port, sizeof port, "127.0.0.1:%u", m->port);
	if (e < 0) { /* line 22: no declared destination on that port */
		gl_broker_tally(&r->denied, r->gi, port);
		return gl_broker_denied();
	}
	/* the baselines keep no per-destination state */
	struct dest_state *d = r->replay ? &r->rdest[e] : r->dest ? &r->dest[e] : NULL;
	jv reply = stream_of(r, m, o, role, e, d, dest);
	if (jv_is_valid(reply) && r->requests > GL_BROKER_REQUESTS_MAX) {
		/* a witness holds as many entries as a copy may make requests */
		jv_free(reply);
		*o = gl_broker_protocol(r, "more than %d requests and stream turns",
					GL_BROKER_REQUESTS_MAX);
		return jv_invalid();
	}
	return reply;
}

/* gl_stream_effect for m, its destination's index e (d its state, NULL
 * for a baseline) and name dest. */
static jv stream_of(struct run *r, const struct gl_msg *m, enum outcome *o, enum stream_role role,
		    int e, struct dest_state *d, const char *dest)
{
	bool first;
	struct stream_conn *sc = conn_of(r, m, (size_t)e, d, &first);
	if (!sc) { /* a number reused for another destination, or too many */
		gl_broker_tally(&r->denied, r->gi, dest);
		return gl_broker_denied();
	}
	if (first)
		turn_start(sc, dest);
	switch (role) {
	case STREAM_PROBE:
		d->contacted = true;
		sc->dead = true;
		return stream_reply(&(struct gl_buf){0}, true, false);
	case STREAM_DELIVER:
		if (first)
			open_live(r, sc, dest);
		return serve_live(r, sc, m, false, o);
	case STREAM_REPLAY:
		sc->compare = true;
		return serve_recorded(r, sc, m, &d->srec, dest);
	case STREAM_GERMLINE:
		break;
	}
	if (r->mode->contacted_only && gl_broker_serves(r, (size_t)e) && !d->contacted) {
		/* lazy (Lemma 2): the full-view copy never contacted e */
		sc->dead = true;
		return stream_reply(&(struct gl_buf){0}, true, false);
	}
	if (gl_broker_serves(r, (size_t)e)) { /* lines 13–15 */
		if (first) {
			open_live(r, sc, dest);
			d->srec.nconn = d->sconns;
		}
		return serve_live(r, sc, m, true, o);
	}
	/* lines 16–21 */
	if (first) {
		sc->compare = true;
		bool adm = gl_broker_admissible(r, (size_t)e);
		if (adm && d->srec.n > 0) /* the match bit is e's information (line 18) */
			gl_labels_join(&r->L, gl_policy_clearance(r->b->pol, dest));
		if (!adm)
			differ(r, sc, "mismatch");
		else if (sc->k >= d->srec.nconn)
			differ(r, sc, "extra"); /* a connection the serving copy never opened */
	}
	return serve_recorded(r, sc, m, &d->srec, dest);
}

void gl_stream_copy_end(struct run *r, bool compare)
{
	for (size_t i = 0; i < r->nsconn; i++) {
		struct stream_conn *sc = &r->sconn[i];
		struct dest_state *d = r->replay ? &r->rdest[sc->e] : &r->dest[sc->e];
		const char *dest = r->replay ? r->replay->host[sc->e].host : r->c->dest[sc->e];
		gl_stream_auth_free(&sc->auth);
		if (sc->fd >= 0) { /* the serving copy: what it wrote last is a turn */
			enum outcome o;
			struct gl_buf none = {0};
			if (sc->got && r->dest)
				end_turn(r, sc, &none, false, &o);
			close(sc->fd);
		} else if (compare && sc->compare && !sc->dead &&
			   (sc->got || next_of(&d->srec, sc, sc->next) < d->srec.n)) {
			if (sc->got) { /* its last bytes, for the witness */
				struct stream_turn part = {.conn = sc->k, .len = sc->got, .eof = true};
				crypto_hash_sha256_final(&sc->h, part.digest);
				note_turn(r, dest, &part, "placeholder");
			}
			differ(r, sc, "missing");
		}
	}
	/* connections the serving copy opened that this one never did (a
	 * germline mode's group copy: r->gi names its group) */
	bool group = compare && r->c && !r->replay && r->dest && r->plan &&
		     r->gi < r->plan->ngroup;
	for (size_t e = 0; r->c && r->dest && e < r->c->ndest; e++) {
		struct dest_state *d = &r->dest[e];
		if (group && gl_dest_port(r->c->dest[e]) && !gl_broker_serves(r, e) &&
		    d->sconns < d->srec.nconn && gl_broker_comparable(r, e) &&
		    !gl_broker_view_of_dest(r, e) && !d->triggered)
			gl_broker_trigger(r, e, d->sconns + 1, "missing");
		d->sconns = 0;
	}
	free(r->sconn);
	r->sconn = NULL;
	r->nsconn = 0;
	r->stream_msgs = 0;
}

