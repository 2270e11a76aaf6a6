/* Unit tests of the operator's secrets on the wire (lib/broker/secrets.c)
 * and of reading a configuration (lib/release/config.c): where a value goes
 * and where it never does, how a reply is searched, and the bounds a copy
 * or a destination cannot push the broker past. No network: the request is
 * built as the broker builds it and read back from what would be sent.
 *
 *   secrets_test
 *
 * Run by tests/lib.bats. Exit 0 when every check holds. */
#define _GNU_SOURCE
#include <string.h>

#include "broker/http.h"
#include "broker/secrets.h"
#include "core/util.h"
#include "json/json.h"
#include "json/msg.h"
#include "release/config.h"
#include "check.h"

static const char *const CONFIG =
    "{\"args\":[\"--x\"],\"env\":{\"LEVEL\":\"1\"},\"secrets\":{"
    "\"TOK\":{\"value\":\"s3cr3t-value\",\"to\":[\"api.example\"]},"
    "\"HDR\":{\"value\":\"only/in:header\",\"to\":[\"api.example\"],"
    "\"in\":[\"header:authorization\"]},"
    "\"LONG\":{\"value\":\"s3cr3t-value-and-more\",\"to\":[\"other.example\"]}}}";

static int config(const char *text, bool public_only, struct gl_config *c, char **detail)
{
	struct gl_fail f = {0};
	jv o = gl_json_parse(text, strlen(text));
	int rc = gl_config_parse(o, "rel", public_only, c, &f);
	jv_free(o);
	*detail = f.detail;
	return rc;
}

/* An effect message to url with one header and a body, parsed and
 * prepared as the broker does. */
static void request(struct gl_msg *m, struct gl_http_req *req, const char *url,
		    const char *hname, const char *hvalue, const char *body)
{
	autobuf struct gl_buf b64 = {0};
	gl_b64_encode(&b64, (const unsigned char *)body, strlen(body));
	gl_buf_addc(&b64, 0);
	jv msg = JV_OBJECT(jv_string("type"), jv_string("effect"), jv_string("method"),
			   jv_string("POST"), jv_string("url"), jv_string(url), jv_string("headers"),
			   JV_ARRAY(JV_ARRAY(jv_string(hname), jv_string(hvalue))),
			   jv_string("body"), jv_string(b64.data));
	jv t = jv_dump_string(msg, 0);
	struct gl_fail f = {0};
	CHECK(gl_msg_parse(m, jv_string_value(t), strlen(jv_string_value(t)), &f) == 0);
	CHECK(gl_http_req_init(req, m, &f) == 0);
	jv_free(t);
	gl_fail_clear(&f);
}

static char *url_of(const struct gl_subst *s, const struct gl_http_req *req)
{
	char *u = NULL;
	curl_url_get(s->url ? s->url : req->url, CURLUPART_URL, &u, 0);
	return u;
}

static void test_apply(const struct gl_config *c)
{
	struct gl_msg m;
	struct gl_http_req req;
	struct gl_subst s;
	struct gl_fail f = {0};
	/* the bound host: in the query (percent-encoded), the body, the header
	 * every secret may go in; HDR only in Authorization */
	request(&m, &req, "http://api.example/p?k=GERMLINE_SECRET_TOK&h=GERMLINE_SECRET_HDR",
		"Authorization", "Bearer GERMLINE_SECRET_TOK GERMLINE_SECRET_HDR",
		"a=GERMLINE_SECRET_TOK&b=GERMLINE_SECRET_HDR&c=GERMLINE_SECRET_LONG");
	CHECK(gl_secrets_apply(c, &req, &s, &f) == 0);
	char *u = url_of(&s, &req);
	CHECK(u && !strcmp(u, "http://api.example/p?k=s3cr3t-value&h=GERMLINE_SECRET_HDR"), "%s",
	      u);
	curl_free(u);
	CHECK(s.header[0] && !strcmp(s.header[0], "Bearer s3cr3t-value only/in:header"));
	CHECK(s.body && s.body_len == strlen((char *)s.body) &&
	      !strcmp((char *)s.body, "a=s3cr3t-value&b=GERMLINE_SECRET_HDR&c=GERMLINE_SECRET_LONG"));
	CHECK(s.used == 4, "used %zu", s.used);
	gl_subst_free(&s);
	gl_http_req_free(&req);
	gl_msg_free(&m);
	/* a host no secret is bound to: the request as the copy sent it */
	request(&m, &req, "http://sink.example/?k=GERMLINE_SECRET_TOK", "X", "GERMLINE_SECRET_TOK",
		"GERMLINE_SECRET_TOK");
	CHECK(gl_secrets_apply(c, &req, &s, &f) == 0);
	CHECK(!s.url && !s.header[0] && !s.body && s.used == 0);
	gl_subst_free(&s);
	gl_http_req_free(&req);
	gl_msg_free(&m);
	/* a value that would change the URL's shape is percent-encoded (curl
	 * writes the hex digits in lowercase) */
	struct gl_config c2;
	char *d;
	CHECK(config("{\"secrets\":{\"Q\":{\"value\":\"a&b=c#d?e/f\",\"to\":[\"api.example\"]}}}",
		     false, &c2, &d) == 0, "%s", d);
	request(&m, &req, "http://api.example/x/GERMLINE_SECRET_Q?q=GERMLINE_SECRET_Q", "X", "",
		"");
	CHECK(gl_secrets_apply(&c2, &req, &s, &f) == 0);
	u = url_of(&s, &req);
	CHECK(u && !strcmp(u, "http://api.example/x/a%26b%3dc%23d%3fe%2ff?q=a%26b%3dc%23d%3fe%2ff"),
	      "%s", u);
	curl_free(u);
	gl_subst_free(&s);
	gl_http_req_free(&req);
	gl_msg_free(&m);
	/* and comes back found in any of its forms: as it is, percent-encoded
	 * (either case), JSON-escaped (with "\/" or "/") */
	struct gl_http_reply rep = {.status = 200};
	gl_buf_adds(&rep.body, "1 a&b=c#d?e/f 2 a%26b%3dc%23d%3fe%2ff 3 a%26b%3Dc%23d%3Fe%2Ff "
			       "4 a&b=c#d?e\\/f");
	rep.headers = jv_array();
	CHECK(gl_secrets_redact(&c2, &rep, false, &f) == 0);
	static const char want[] = "1 GERMLINE_SECRET_Q 2 GERMLINE_SECRET_Q 3 GERMLINE_SECRET_Q "
				   "4 GERMLINE_SECRET_Q";
	CHECK(rep.body.len == strlen(want) && !memcmp(rep.body.data, want, rep.body.len), "%.*s",
	      (int)rep.body.len, rep.body.data);
	gl_http_reply_free(&rep);
	gl_config_free(&c2);
	gl_fail_clear(&f);
}

/* A copy that repeats the placeholder cannot make the broker build a
 * request of unbounded size: past GL_SECRETS_GROWTH_MAX it is refused. */
static void test_growth(void)
{
	struct gl_config c;
	char *d;
	autobuf struct gl_buf v = {0};
	for (int i = 0; i < 4000; i++)
		gl_buf_addc(&v, 'v');
	gl_buf_addc(&v, 0);
	autofree char *text = gl_xasprintf(
	    "{\"secrets\":{\"A\":{\"value\":\"%s\",\"to\":[\"api.example\"]}}}", v.data);
	CHECK(config(text, false, &c, &d) == 0, "%s", d);
	autobuf struct gl_buf body = {0};
	for (int i = 0; i < 300; i++) /* 300 * (4000 - 18) bytes > 1 MiB */
		gl_buf_adds(&body, "GERMLINE_SECRET_A");
	gl_buf_addc(&body, 0);
	struct gl_msg m;
	struct gl_http_req req;
	struct gl_subst s;
	struct gl_fail f = {0};
	request(&m, &req, "http://api.example/", "X", "", body.data);
	CHECK(gl_secrets_apply(&c, &req, &s, &f) < 0 && f.code == GL_E_OVERSIZED);
	gl_subst_free(&s);
	gl_http_req_free(&req);
	gl_msg_free(&m);
	gl_config_free(&c);
	gl_fail_clear(&f);
}

static void test_redact(const struct gl_config *c)
{
	struct gl_http_reply rep = {.status = 200};
	struct gl_fail f = {0};
	/* the longer value first: no "-and-more" left behind */
	gl_buf_adds(&rep.body, "x s3cr3t-value-and-more y s3cr3t-value z only/in:header");
	rep.headers = JV_ARRAY(JV_ARRAY(jv_string("X-Echo"), jv_string("Bearer s3cr3t-value")));
	CHECK(gl_secrets_redact(c, &rep, true, &f) == 0);
	CHECK(rep.body.len == strlen("x GERMLINE_SECRET_LONG y GERMLINE_SECRET_TOK z "
				     "GERMLINE_SECRET_HDR") &&
	      !memcmp(rep.body.data, "x GERMLINE_SECRET_LONG y GERMLINE_SECRET_TOK z "
				     "GERMLINE_SECRET_HDR", rep.body.len));
	jv h = jv_array_get(jv_array_get(jv_copy(rep.headers), 0), 1);
	CHECK(!strcmp(jv_string_value(h), "Bearer GERMLINE_SECRET_TOK"));
	jv_free(h);
	gl_http_reply_free(&rep);
	/* an encoded reply to a request that carried a secret: refused */
	rep = (struct gl_http_reply){.status = 200};
	gl_buf_adds(&rep.body, "\x1f\x8b...");
	rep.headers = JV_ARRAY(JV_ARRAY(jv_string("Content-Encoding"), jv_string("gzip")));
	CHECK(gl_secrets_redact(c, &rep, true, &f) < 0 && f.code == GL_E_FETCH);
	gl_http_reply_free(&rep);
	/* to one that carried none it is passed on (nothing could be in it) */
	rep = (struct gl_http_reply){.status = 200};
	rep.headers = JV_ARRAY(JV_ARRAY(jv_string("Content-Encoding"), jv_string("gzip")));
	CHECK(gl_secrets_redact(c, &rep, false, &f) == 0);
	gl_http_reply_free(&rep);
	gl_fail_clear(&f);
}

/* The public form has every field but the values, reads back as public,
 * and a value in a public form is refused. */
static void test_public(const struct gl_config *c)
{
	jv p = gl_config_public(c);
	jv t = jv_dump_string(jv_copy(p), 0);
	CHECK(!strstr(jv_string_value(t), "s3cr3t") && strstr(jv_string_value(t), "\"--x\"") &&
	      strstr(jv_string_value(t), "header:authorization"));
	struct gl_config back;
	char *d;
	CHECK(config(jv_string_value(t), true, &back, &d) == 0, "%s", d);
	CHECK(back.nsecret == 3 && !back.secret[0].value && back.ncopy_env == 4);
	jv again = gl_config_public(&back);
	CHECK(jv_equal(jv_copy(p), again));
	gl_config_free(&back);
	CHECK(config(CONFIG, true, &back, &d) < 0 && strstr(d, "present in a public"), "%s", d);
	free(d);
	jv_free(t);
	jv_free(p);
}

int main(void)
{
	gl_http_global_init();
	struct gl_config c;
	char *d;
	CHECK(config(CONFIG, false, &c, &d) == 0, "%s", d);
	CHECK(c.nargs == 1 && c.nenv == 1 && c.nsecret == 3 && c.ncopy_env == 4);
	CHECK(c.args_env && !strcmp(c.args_env, "GL_RELEASE_ARGS=[\"--x\"]"));
	test_apply(&c);
	test_growth();
	test_redact(&c);
	test_public(&c);
	gl_config_free(&c);
	return check_done();
}
