/* Unit tests of the broker's parts that need no germline: the copy protocol
 * (lib/json/msg.c), slots (lib/broker/slots.c), the one kill-and-wait of a
 * process the broker ran (lib/broker/broker_copy.c) and, given a sink's
 * ports, HTTP delivery against real servers on loopback (lib/broker/http.c).
 *
 *   broker_parts_test TMPDIR [OK_PORT REDIRECT_PORT LOG_OF_REDIRECT_TARGET]
 *
 * Run by tests/broker.bats. Exit 0 when every check holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/broker_impl.h"
#include "broker/http.h"
#include "json/json.h"
#include "plan/labels.h"
#include "json/msg.h"
#include "broker/slots.h"
#include "core/util.h"
#include "check.h"

static int64_t soon(int ms) { return gl_mono_ns() + (int64_t)ms * 1000000; }

static void raw(int fd, const void *p, size_t n) { CHECK(gl_write_all(fd, p, n) == 0); }

static int parse(const char *s, struct gl_msg *m, char **err)
{
	struct gl_fail f = {0};
	int rc = gl_msg_parse(m, s, strlen(s), &f);
	*err = f.detail; /* NULL when it parsed */
	return rc;
}

static void test_framing(void)
{
	int sp[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	struct gl_buf b = {0};
	/* a round trip */
	CHECK(gl_msg_write(sp[1], soon(1000), "{\"a\":1}", 7) == GL_MSG_OK);
	CHECK(gl_msg_read(sp[0], soon(1000), &b) == GL_MSG_OK);
	CHECK(b.len == 7 && !memcmp(b.data, "{\"a\":1}", 7));
	/* nothing arrives: the deadline ends the wait */
	CHECK(gl_msg_read(sp[0], soon(50), &b) == GL_MSG_DEADLINE);
	/* a length prefix above the cap is refused before any allocation */
	unsigned char big[4] = {0xff, 0xff, 0xff, 0xf0};
	raw(sp[1], big, 4);
	CHECK(gl_msg_read(sp[0], soon(1000), &b) == GL_MSG_TOO_BIG);
	/* a promised 64 MiB message that never comes costs one step, not 64 MiB */
	unsigned char cap[4] = {0x04, 0x00, 0x00, 0x00};
	raw(sp[1], cap, 4);
	raw(sp[1], "{", 1);
	CHECK(gl_msg_read(sp[0], soon(50), &b) == GL_MSG_DEADLINE);
	CHECK(b.cap <= (2u << 20));
	/* the peer closes inside a message, then at a boundary */
	close(sp[1]);
	CHECK(gl_msg_read(sp[0], soon(1000), &b) == GL_MSG_EOF);
	close(sp[0]);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
	unsigned char five[4] = {0, 0, 0, 5};
	raw(sp[1], five, 4);
	raw(sp[1], "{}", 2);
	close(sp[1]);
	CHECK(gl_msg_read(sp[0], soon(1000), &b) == GL_MSG_SHORT);
	/* a peer that never reads: the write ends at the deadline */
	int sp2[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sp2) == 0);
	fcntl(sp2[0], F_SETFL, O_NONBLOCK);
	size_t n = 8u << 20;
	char *blob = gl_xmalloc(n);
	memset(blob, 'x', n);
	CHECK(gl_msg_write(sp2[0], soon(100), blob, n) == GL_MSG_DEADLINE);
	free(blob);
	close(sp2[1]);
	/* writing to a closed peer is an error, never SIGPIPE */
	CHECK(gl_msg_write(sp2[0], soon(100), "{}", 2) == GL_MSG_IO);
	close(sp2[0]);
	close(sp[0]);
	gl_buf_free(&b);
}

static void test_parse(void)
{
	struct gl_msg m;
	char *err;
	CHECK(parse("{\"type\":\"effect\",\"method\":\"POST\",\"url\":\"http://a.example/x\","
		    "\"headers\":[[\"X-A\",\"1\"]],\"body\":\"aGk=\"}",
		    &m, &err) == 0);
	CHECK(m.type == GL_MSG_EFFECT && m.nheader == 1 && m.body_len == 2 &&
	      !memcmp(m.body, "hi", 2));
	gl_msg_free(&m);
	CHECK(parse("{\"type\":\"state_put\",\"key\":\"k\",\"value\":[1]}", &m, &err) == 0);
	CHECK(m.type == GL_MSG_STATE_PUT && !strcmp(m.key, "k"));
	gl_msg_free(&m);
	CHECK(parse("{\"type\":\"result\",\"value\":null}", &m, &err) == 0);
	gl_msg_free(&m);
	CHECK(parse("{\"type\":\"result\",\"error\":\"boom\"}", &m, &err) == 0 &&
	      !strcmp(m.error, "boom"));
	gl_msg_free(&m);
	/* Hostile or malformed: each refused with a reason. */
	static const char *const bad[] = {
	    "{bad}", "[]", "{\"type\":\"launch\"}", "{\"x\":1}",
	    "{\"type\":\"state_put\",\"key\":\"k\",\"value\":1,\"horizon\":[\"hr\"]}",
	    "{\"type\":\"state_put\",\"key\":\"\",\"value\":1}",
	    "{\"type\":\"state_put\",\"key\":\"k\"}",
	    "{\"type\":\"result\",\"value\":1,\"error\":\"e\"}", "{\"type\":\"result\"}",
	    "{\"type\":\"effect\",\"method\":\"GET\"}",
	    "{\"type\":\"effect\",\"method\":\"G T\",\"url\":\"http://a/\"}",
	    "{\"type\":\"effect\",\"method\":\"GET\",\"url\":\"http://a/\",\"body\":\"%%\"}",
	    ("{\"type\":\"effect\",\"method\":\"GET\",\"url\":\"http://a/\","
	     "\"headers\":[[\"X\",\"a\\r\\nHost: evil\"]]}"),
	    "{\"type\":\"effect\",\"method\":\"GET\",\"url\":\"http://a/\",\"headers\":[[\"X\"]]}",
	    "{\"type\":\"effect\",\"method\":\"GET\",\"url\":\"http://a/\",\"extra\":1}",
	    "{\"type\":\"result\",\"value\":1,\"type\":\"result\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int r = parse(bad[i], &m, &err);
		if (r == 0)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		CHECK(r < 0 && err && *err);
		free(err);
		gl_msg_free(&m);
	}
}

static struct gl_msg effect(const char *method, const char *url, const char *body)
{
	struct gl_msg m;
	autobuf struct gl_buf b = {0};
	gl_b64_encode(&b, (const unsigned char *)body, strlen(body));
	gl_buf_addc(&b, 0);
	autofree char *s = gl_xasprintf("{\"type\":\"effect\",\"method\":\"%s\",\"url\":\"%s\","
					"\"headers\":[[\"Content-Type\",\"text/plain\"]],"
					"\"body\":\"%s\"}",
					method, url, b.data);
	struct gl_fail f = {0};
	if (gl_msg_parse(&m, s, strlen(s), &f) < 0)
		gl_die(2, "effect: %s", gl_fail_detail(&f));
	return m;
}

static void test_urls(void)
{
	struct {
		const char *url, *host;
		bool http;
	} ok[] = {
	    {"http://OCR.Example/x", "ocr.example", true},
	    {"https://ocr.example:8443/p?q=1", "ocr.example", true},
	    {"http://[::1]:80/", "::1", true},
	    {"ftp://ocr.example/", "ocr.example", false},
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		struct gl_msg m = effect("GET", ok[i].url, "");
		struct gl_http_req r;
		struct gl_fail err = {0};
		CHECK(gl_http_req_init(&r, &m, &err) == 0);
		CHECK(r.host && !strcmp(r.host, ok[i].host));
		CHECK(r.http == ok[i].http);
		gl_http_req_free(&r);
		gl_msg_free(&m);
	}
	static const char *const bad[] = {"not a url", "http://", "/relative", "http://a b/"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct gl_msg m = effect("GET", bad[i], "");
		struct gl_http_req r;
		struct gl_fail err = {0};
		CHECK(gl_http_req_init(&r, &m, &err) < 0 && err.code == GL_E_BAD_DESTINATION);
		gl_fail_clear(&err);
		gl_http_req_free(&r);
		gl_msg_free(&m);
	}
	/* the digest: equal requests equal, any difference differs */
	struct gl_msg a = effect("POST", "http://h.example/x", "one"),
		      b = effect("POST", "http://H.EXAMPLE/x", "one"),
		      c = effect("POST", "http://h.example/x", "two"),
		      d = effect("PUT", "http://h.example/x", "one");
	struct gl_http_req ra, rb, rc, rd;
	struct gl_fail err = {0};
	CHECK(gl_http_req_init(&ra, &a, &err) == 0 && gl_http_req_init(&rb, &b, &err) == 0 &&
	      gl_http_req_init(&rc, &c, &err) == 0 && gl_http_req_init(&rd, &d, &err) == 0);
	CHECK(!memcmp(ra.digest, rb.digest, 32));
	CHECK(memcmp(ra.digest, rc.digest, 32) && memcmp(ra.digest, rd.digest, 32));
	gl_http_req_free(&ra), gl_http_req_free(&rb), gl_http_req_free(&rc), gl_http_req_free(&rd);
	gl_msg_free(&a), gl_msg_free(&b), gl_msg_free(&c), gl_msg_free(&d);
}

static void test_http(const char *ok_port, const char *redir_port, const char *target_log)
{
	autofree char *route = gl_xasprintf("127.0.0.1:%s", ok_port);
	struct gl_msg m = effect("POST", "http://ocr.example/ocr", "invoice 42");
	struct gl_http_req r;
	struct gl_fail err = {0};
	CHECK(gl_http_req_init(&r, &m, &err) == 0);
	struct gl_http_reply rep;
	/* routed: the Host header stays ocr.example, the body is echoed */
	CHECK(gl_http_deliver(&r, route, NULL, NULL, soon(5000), &rep, &err) == GL_HTTP_OK);
	CHECK(rep.status == 200);
	CHECK(rep.body.len > 0 && memmem(rep.body.data, rep.body.len, "invoice 42", 10));
	gl_http_reply_free(&rep);
	/* no time left: nothing is sent */
	CHECK(gl_http_deliver(&r, route, NULL, NULL, gl_mono_ns() - 1, &rep, &err) == GL_HTTP_NO_TIME &&
	      err.code == GL_E_DEADLINE);
	gl_fail_clear(&err);
	gl_http_req_free(&r);
	gl_msg_free(&m);
	/* a redirect comes back as the reply; its target gets nothing */
	autofree char *rroute = gl_xasprintf("127.0.0.1:%s", redir_port);
	m = effect("POST", "http://redir.example/submit", "twenty-one item bytes");
	CHECK(gl_http_req_init(&r, &m, &err) == 0);
	CHECK(gl_http_deliver(&r, rroute, NULL, NULL, soon(5000), &rep, &err) == GL_HTTP_OK);
	CHECK(rep.status == 302 || rep.status == 307);
	gl_http_reply_free(&rep);
	gl_http_req_free(&r);
	gl_msg_free(&m);
	struct stat st;
	CHECK(stat(target_log, &st) < 0 || st.st_size == 0);
	/* without a route the name does not resolve: a failure, not a crash */
	m = effect("GET", "http://unrouted.invalid/", "");
	CHECK(gl_http_req_init(&r, &m, &err) == 0);
	CHECK(gl_http_deliver(&r, NULL, NULL, NULL, soon(5000), &rep, &err) == GL_HTTP_FAILED &&
	      err.code == GL_E_FETCH);
	gl_fail_clear(&err);
	gl_http_req_free(&r);
	gl_msg_free(&m);
}

static void test_slots(const char *tmp)
{
	const char *hr_s[] = {"finance", "hr"};
	struct gl_labels horizon = {hr_s, 2}, none = {NULL, 0};
	const char *hr_only[] = {"hr"};
	struct gl_labels L = {hr_only, 1};
	char id[65], id0[65];
	struct gl_fail herr = {0};
	CHECK(gl_slot_horizon_id(&horizon, id, &herr) == 0);
	CHECK(gl_slot_horizon_id(&none, id0, &herr) == 0 && !herr.detail);
	CHECK(strcmp(id, id0) != 0 && strlen(id) == 64);
	/* id of [] is SHA-256("[]") */
	unsigned char h[32];
	char want[65];
	crypto_hash_sha256(h, (const unsigned char *)"[]", 2);
	gl_hex(h, 32, want);
	CHECK(!strcmp(id0, want));
	const char *rel = "0000000000000000000000000000000000000000000000000000000000000000";
	struct gl_slot s;
	struct gl_fail err = {0};
	CHECK(gl_slot_open(&s, tmp, rel, &horizon, &err) == 0);
	CHECK(s.label.n == 0);
	CHECK(gl_slot_put(&s, "note", jv_string("salary 9000"), &L, &err) == 0);
	CHECK(gl_slot_commit(&s, &err) == 0);
	gl_slot_free(&s);
	/* read back: the entry and its label; ℓ(σ) = {hr} */
	CHECK(gl_slot_open(&s, tmp, rel, &horizon, &err) == 0);
	CHECK(s.label.n == 1 && !strcmp(s.label.tag[0], "hr"));
	jv v = gl_slot_view(&s);
	autobuf struct gl_buf b = {0};
	gl_json_dump(&b, v);
	jv_free(v);
	CHECK(strstr(b.data, "\"note\":{\"label\":[\"hr\"],\"value\":\"salary 9000\"}"));
	gl_slot_free(&s);
	/* another horizon sees nothing */
	CHECK(gl_slot_open(&s, tmp, rel, &none, &err) == 0);
	CHECK(jv_object_length(jv_copy(s.entries)) == 0);
	gl_slot_free(&s);
	/* a corrupt slot is refused, not reset */
	autofree char *path = gl_xasprintf("%s/slots/%s/%s.json", tmp, rel, id);
	CHECK(gl_atomic_write(path, "{\"k\":1}", 7, 0600) == 0);
	CHECK(gl_slot_open(&s, tmp, rel, &horizon, &err) < 0 && err.code == GL_E_BAD_SLOT &&
	      err.detail);
	gl_fail_clear(&err);
	gl_slot_free(&s);
}

/* gl_broker_kill_wait on an unconfined child (a baseline's process): it is
 * killed through its pidfd, reaped (no zombie is left: waitpid finds no
 * child) and the pidfd closed; without a pidfd, by its pid. */
static void test_kill_wait(void)
{
	for (int with_pidfd = 0; with_pidfd < 2; with_pidfd++) {
		pid_t child = fork();
		if (child == 0) {
			for (;;)
				pause();
		}
		CHECK(child > 0);
		int pidfd = with_pidfd ? (int)syscall(SYS_pidfd_open, child, 0) : -1;
		CHECK(!with_pidfd || pidfd >= 0);
		CHECK(gl_broker_kill_wait(pidfd, child, NULL, NULL) == -1);
		errno = 0;
		CHECK(waitpid(child, NULL, WNOHANG) == -1 && errno == ECHILD);
		if (pidfd >= 0)
			CHECK(fcntl(pidfd, F_GETFD) == -1 && errno == EBADF);
	}
}

int main(int argc, char **argv)
{
	gl_prog = "broker_parts_test";
	if (sodium_init() < 0 || argc < 2)
		return 2;
	gl_http_global_init();
	test_framing();
	test_parse();
	test_urls();
	test_slots(argv[1]);
	test_kill_wait();
	if (argc == 5)
		test_http(argv[2], argv[3], argv[4]);
	curl_global_cleanup();
	return check_done();
}
