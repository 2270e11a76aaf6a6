/* secrets.c — what the operator's secrets do to bytes a copy or a
 * destination chose (lib/broker/secrets.c): the input is cut at its first
 * NUL into a reply body and a header value (a destination's), searched
 * and redacted; and into a request's URL path, a header value and a body
 * (a copy's), each placeholder replaced within the growth bound; and as
 * a stream destination's bytes (gl_stream_mask, lib/broker/
 * stream_auth.c), in pieces the first byte sizes, each masked with a
 * tail held back while it may begin a value. The
 * configuration is fixed, with values that overlap and a value inside
 * another, and with one secret bound to the request's host. */
#include "fuzz.h"

#include "broker/broker_impl.h"
#include "broker/http.h"
#include "broker/secrets.h"
#include "json/msg.h"
#include "release/config.h"

static const char *const CONFIG =
    "{\"secrets\":{\"A\":{\"value\":\"aaaaaaaa\",\"to\":[\"api.example\"]},"
    "\"B\":{\"value\":\"aaaaaaaab\",\"to\":[\"api.example\"],\"in\":[\"header:x\",\"url\"]},"
    "\"C\":{\"value\":\"GERMLINE-not-a-placeholder\",\"to\":[\"other.example\"]}}}";

static struct gl_config cfg;
static bool ready;

static void reply(const char *p, size_t n, const char *h)
{
	struct gl_http_reply rep = {.status = 200};
	autofail struct gl_fail f = {0};
	gl_buf_add(&rep.body, p, n);
	rep.headers = JV_ARRAY(JV_ARRAY(jv_string("X"), jv_string(h)),
			       JV_ARRAY(jv_string("Content-Encoding"), jv_string(h)));
	gl_secrets_redact(&cfg, &rep, n & 1, &f);
	gl_http_reply_free(&rep);
}

static void request(const char *path, const char *h, const char *body, size_t n)
{
	autobuf struct gl_buf b64 = {0};
	gl_b64_encode(&b64, (const unsigned char *)body, n);
	gl_buf_addc(&b64, 0);
	autofree char *url = gl_xasprintf("http://api.example/%s", path);
	jv msg = JV_OBJECT(jv_string("type"), jv_string("effect"), jv_string("method"),
			   jv_string("POST"), jv_string("url"), jv_string(url), jv_string("headers"),
			   JV_ARRAY(JV_ARRAY(jv_string("X"), jv_string(h))), jv_string("body"),
			   jv_string(b64.data));
	jv t = jv_dump_string(msg, 0);
	struct gl_msg m;
	struct gl_http_req req;
	autofail struct gl_fail f = {0};
	if (gl_msg_parse(&m, jv_string_value(t), strlen(jv_string_value(t)), &f) == 0) {
		if (gl_http_req_init(&req, &m, &f) == 0) {
			struct gl_subst s;
			gl_secrets_apply(&cfg, &req, &s, &f);
			gl_subst_free(&s);
		}
		gl_http_req_free(&req); /* either way, as the broker does */
	}
	gl_msg_free(&m);
	jv_free(t);
}

static void stream(const uint8_t *p, size_t n)
{
	struct stream_auth a = {0};
	size_t step = n ? (size_t)(p[0] % 32) + 1 : 1;
	for (size_t off = 0; off < n; off += step) {
		struct gl_buf got = {0};
		gl_buf_add(&got, p + off, n - off < step ? n - off : step);
		gl_stream_mask(&a, &cfg, &got, off + step < n);
		gl_buf_free(&got);
	}
	gl_stream_auth_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		autofail struct gl_fail f = {0};
		jv o = gl_json_parse(CONFIG, strlen(CONFIG));
		if (gl_config_parse(o, "fuzz", false, &cfg, &f) < 0)
			abort();
		jv_free(o);
		gl_http_global_init();
		ready = true;
	}
	const char *p = (const char *)data;
	const char *nul = memchr(p, 0, size);
	size_t n1 = nul ? (size_t)(nul - p) : size;
	autofree char *head = gl_xasprintf("%.*s", (int)n1, p);
	const char *rest = nul ? nul + 1 : p + size;
	size_t n2 = nul ? size - n1 - 1 : 0;
	reply(rest, n2, head);
	reply(p, size, "");
	request(head, head, rest, n2);
	stream(data, size);
	return 0;
}
