/* Unit tests of lib/json/jsonrpc.c: message validation, the bounded line reader
 * (over a real pipe, with a deadline) and the writer. Run by
 * tests/serve-mcp.bats; exit 0 when every check holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "json/json.h"
#include "json/jsonrpc.h"
#include "json/msg.h"
#include "core/util.h"
#include "check.h"

/* validate(text) -> kind, or -1 */
static int kind_of(const char *text)
{
	jv v = gl_json_parse(text, strlen(text));
	if (!jv_is_valid(v)) {
		jv_free(v);
		return -2;
	}
	enum gl_rpc_kind k;
	struct gl_fail f = {0};
	int r = gl_rpc_validate(v, &k, &f);
	CHECK(r == 0 ? f.code == GL_E_OK : f.code == GL_E_BAD_RECORD && f.detail);
	gl_fail_clear(&f);
	jv_free(v);
	return r < 0 ? -1 : (int)k;
}

static void validation(void)
{
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}") == GL_RPC_REQUEST);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\",\"params\":[]}") == GL_RPC_REQUEST);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}") == GL_RPC_NOTIFICATION);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}") == GL_RPC_RESULT);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"m\"}}") == GL_RPC_ERROR);
	CHECK(kind_of("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]") == -1); /* batch */
	CHECK(kind_of("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}") == -1);
	CHECK(kind_of("{\"id\":1,\"method\":\"ping\"}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"params\":3}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"x\":3}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{}}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"result\":1}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"x\",\"message\":\"m\"}}") == -1);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"method\":\"q\"}") == -2); /* dup key */
}

/* An unknown member's name in the error text: control characters escaped,
 * cut to 64 bytes without splitting a character (escaped, never raw). */
static void hostile_names(void)
{
	struct gl_buf name = {0};
	gl_buf_adds(&name, "a\\u001b[31m");
	for (int i = 0; i < 40; i++)
		gl_buf_adds(&name, "\u00e9"); /* é: two bytes of UTF-8 each */
	char *text = gl_xasprintf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"%.*s\":3}",
				  (int)name.len, name.data);
	jv v = gl_json_parse(text, strlen(text));
	CHECK(jv_is_valid(v));
	enum gl_rpc_kind k;
	struct gl_fail f = {0};
	CHECK(gl_rpc_validate(v, &k, &f) < 0 && f.detail);
	const char *d = gl_fail_detail(&f);
	bool plain = true;
	for (const char *c = d; *c; c++)
		plain = plain && (unsigned char)*c >= 0x20 && (unsigned char)*c != 0x7f &&
			((unsigned char)*c < 0x80 || !strncmp(c, "…", strlen("…")) ||
			 (c > d && !strncmp(c - 1, "…", strlen("…"))) ||
			 (c > d + 1 && !strncmp(c - 2, "…", strlen("…"))));
	CHECK(plain, "raw control or non-ASCII bytes in: %s", d);
	CHECK(strstr(d, "\\x1b[31m") != NULL, "the escape is not shown escaped: %s", d);
	gl_fail_clear(&f);
	jv_free(v);
	free(text);
	gl_buf_free(&name);
}

static void reader(void)
{
	int p[2];
	CHECK(pipe2(p, O_NONBLOCK) == 0);
	const char *in = "\n  \r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"
			 "not json\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":7}\n"
			 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
			 "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"
			 "{\"partial\":";
	CHECK(write(p[1], in, strlen(in)) == (ssize_t)strlen(in));
	struct gl_rpc_reader r;
	gl_rpc_reader_init(&r, p[0]);
	jv m;
	enum gl_rpc_kind k;
	struct gl_fail f = {0};
	CHECK(gl_rpc_read(&r, -1, 64, &m, &k, &f) == GL_RPC_OK && k == GL_RPC_REQUEST);
	jv_free(m);
	CHECK(gl_rpc_read(&r, -1, 64, &m, &k, &f) == GL_RPC_PARSE && f.code == GL_E_BAD_JSON);
	gl_fail_clear(&f);
	CHECK(gl_rpc_read(&r, -1, 64, &m, &k, &f) == GL_RPC_INVALID && jv_is_valid(m) &&
	      f.code == GL_E_BAD_RECORD);
	gl_fail_clear(&f);
	jv_free(m);
	CHECK(gl_rpc_read(&r, -1, 64, &m, &k, &f) == GL_RPC_TOO_LONG && f.code == GL_E_TOO_LONG);
	gl_fail_clear(&f);
	CHECK(gl_rpc_read(&r, -1, 64, &m, &k, &f) == GL_RPC_OK && k == GL_RPC_NOTIFICATION);
	jv_free(m);
	/* The partial line waits: the deadline ends the wait. */
	CHECK(gl_rpc_read(&r, gl_mono_ns() + 50000000, 64, &m, &k, &f) == GL_RPC_DEADLINE);
	gl_fail_clear(&f);
	close(p[1]);
	CHECK(gl_rpc_read(&r, -1, 64, &m, &k, &f) == GL_RPC_EOF); /* partial dropped */
	gl_fail_clear(&f);
	close(p[0]);
}

static void writer(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	jv e = gl_rpc_error(jv_null(), GL_RPC_PARSE_ERROR, "Parse error", jv_string("a\nb"));
	CHECK(gl_rpc_write(p[1], -1, e) == 0);
	jv_free(e);
	jv q = gl_rpc_request(jv_number(3), "tools/call", jv_object());
	CHECK(gl_rpc_write(p[1], -1, q) == 0);
	jv_free(q);
	close(p[1]);
	char buf[512] = {0};
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	close(p[0]);
	/* compact, keys sorted (gl_json_dump), one line each: the '\n' in data escaped */
	CHECK(n > 0 && !strcmp(buf, "{\"error\":{\"code\":-32700,\"data\":\"a\\nb\","
				   "\"message\":\"Parse error\"},\"id\":null,\"jsonrpc\":\"2.0\"}\n"
				   "{\"id\":3,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{}}\n"));
	if (n > 0 && failures)
		fprintf(stderr, "%s", buf);
}

int main(void)
{
	gl_prog = "jsonrpc_test";
	validation();
	hostile_names();
	reader();
	writer();
	return check_done();
}
