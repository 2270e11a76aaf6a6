/* fetch_drive — a test driver for lib/sign/fetch.h (tests/fetch.bats).
 *
 *   fetch_drive [--max BYTES] [--timeout-ms MS] [--proxy P] [--out FILE] URL
 *
 * GETs URL with gl_fetch_bytes (or, with --out, gl_fetch_fd into FILE) and
 * prints one JSON object: {"ok":true|false,"error":CODE,"detail":…,
 * "status":N,"missing":B,"len":N,"redirects":N,"sha256":HEX}, sha256 being
 * that of the bytes delivered. Exit 0 if ok, 1 if refused, 2 on I/O. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jv.h>
#include <sodium.h>
#include <string.h>

#include "sign/fetch.h"
#include "json/json.h"



static const char usage[] =
    "usage: fetch_drive [--max BYTES] [--timeout-ms MS] [--proxy P] [--out FILE] URL\n";

int main(int argc, char **argv)
{
	gl_prog = "fetch_drive";
	size_t max = 1u << 20;
	int64_t timeout = GL_FETCH_TIMEOUT_MS;
	const char *out = NULL, *url = NULL, *v;
	for (int i = 1; i < argc; i++) {
		if ((v = gl_flag_value(argc, argv, &i, "--max", usage)))
			max = strtoull(v, NULL, 10);
		else if ((v = gl_flag_value(argc, argv, &i, "--timeout-ms", usage)))
			timeout = strtoll(v, NULL, 10);
		else if ((v = gl_flag_value(argc, argv, &i, "--proxy", usage)))
			gl_fetch_set_proxy(v);
		else if ((v = gl_flag_value(argc, argv, &i, "--out", usage)))
			out = v;
		else if (!url)
			url = argv[i];
		else
			gl_die(GL_EXIT_USAGE, "%s", usage);
	}
	if (!url)
		gl_die(GL_EXIT_USAGE, "%s", usage);
	struct gl_fetch_info info;
	autofail struct gl_fail f = {0};
	autobuf struct gl_buf b = {0};
	char hex[65] = "";
	enum gl_code r;
	int64_t deadline = gl_fetch_deadline(timeout);
	if (out) {
		autoclose int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			gl_die_errno(GL_EXIT_USAGE, "%s", out);
		r = gl_fetch_fd(url, max, deadline, fd, &info, &f);
		if (gl_sha256_fd_hex(fd, hex) < 0)
			gl_die_errno(GL_EXIT_USAGE, "%s", out);
	} else {
		r = gl_fetch_bytes(url, max, deadline, &b, &info, &f);
		unsigned char d[32];
		crypto_hash_sha256(d, (const unsigned char *)b.data, b.len);
		gl_hex(d, 32, hex);
	}
	jv o = jv_object();
	o = jv_object_set(o, jv_string("ok"), jv_bool(r == GL_E_OK));
	if (r != GL_E_OK) {
		o = jv_object_set(o, jv_string("error"), jv_string(gl_code_name(r)));
		o = jv_object_set(o, jv_string("detail"), jv_string(f.detail ? f.detail : ""));
	}
	o = jv_object_set(o, jv_string("status"), jv_number((double)info.status));
	o = jv_object_set(o, jv_string("missing"), jv_bool(info.missing));
	o = jv_object_set(o, jv_string("len"), jv_number((double)info.len));
	o = jv_object_set(o, jv_string("redirects"), jv_number(info.redirects));
	o = jv_object_set(o, jv_string("sha256"), jv_string(hex));
	gl_json_emit(o);
	return gl_code_exit(r);
}
