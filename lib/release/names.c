/* names.c — the spelling rules of hosts and paths a manifest or a policy
 * names (gl_host_ok, gl_path_clean; manifest.h): one spelling per host, so
 * that a destination cannot be declared twice under two names (paper
 * §III-A: the release chooses D_f). */
#define _GNU_SOURCE
#include "release/manifest.h"

#include <arpa/inet.h>
#include <string.h>

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }

/* An IP literal in the one spelling inet_ntop gives it back. */
static bool ip_literal_ok(const char *s, size_t len)
{
	char z[INET6_ADDRSTRLEN], back[INET6_ADDRSTRLEN];
	unsigned char addr[16];
	if (len >= sizeof z)
		return false;
	memcpy(z, s, len);
	z[len] = 0;
	int af = memchr(s, ':', len) ? AF_INET6 : AF_INET;
	if (inet_pton(af, z, addr) != 1 || !inet_ntop(af, addr, back, sizeof back))
		return false;
	return strcmp(z, back) == 0;
}

bool gl_host_ok(const char *s, size_t len)
{
	if (len == 0 || len > GL_HOST_MAX)
		return false;
	if (memchr(s, ':', len))
		return ip_literal_ok(s, len);
	size_t start = 0;
	bool all_digits = true;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			size_t n = i - start;
			if (n == 0 || n > 63 || s[start] == '-' || s[i - 1] == '-')
				return false;
			if (i < len)
				start = i + 1, all_digits = true;
			continue;
		}
		unsigned char c = (unsigned char)s[i];
		if (!is_lower(c) && !is_digit(c) && c != '-')
			return false;
		if (!is_digit(c))
			all_digits = false;
	}
	/* "10.1.2.3" must be the address; "1.2.3" is neither a name nor one. */
	return all_digits ? ip_literal_ok(s, len) : true;
}

/* "host:port" with a port of 1..65535 spelled once: its port, else 0. */
static unsigned port_part(const char *s, size_t len, size_t *hlen)
{
	const char *colon = memrchr(s, ':', len);
	if (!colon)
		return 0;
	size_t n = len - (size_t)(colon + 1 - s);
	const char *p = colon + 1;
	if (n == 0 || n > 5 || p[0] == '0')
		return 0;
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit((unsigned char)p[i]))
			return 0;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	*hlen = (size_t)(colon - s);
	return v <= 65535 ? v : 0;
}

bool gl_dest_ok(const char *s, size_t len)
{
	if (gl_host_ok(s, len)) /* an IPv6 literal has colons too: a host first */
		return true;
	size_t hlen = 0;
	unsigned port = port_part(s, len, &hlen);
	return port && port != 80 && port != 443 && !memchr(s, ':', hlen) && gl_host_ok(s, hlen);
}

unsigned gl_dest_port(const char *s)
{
	size_t len = strlen(s), hlen = 0;
	return !gl_host_ok(s, len) && gl_dest_ok(s, len) ? port_part(s, len, &hlen) : 0;
}

bool gl_path_clean(const char *s, size_t len)
{
	if (len < 2 || len > GL_PATH_MAX || s[0] != '/' || s[len - 1] == '/')
		return false;
	size_t start = 1;
	for (size_t i = 1; i <= len; i++) {
		if (i < len && (unsigned char)s[i] < 0x20)
			return false;
		if (i < len && s[i] != '/')
			continue;
		size_t n = i - start;
		const char *c = s + start;
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		start = i + 1;
	}
	return true;
}
