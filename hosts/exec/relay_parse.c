/* relay_parse.c — cutting an HTTP request head and decoding a chunked
 * body for gl-exec-host's relay; see relay_parse.h. */
#define _GNU_SOURCE
#include "relay_parse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool hop_header(const char *k, size_t n)
{
	static const char *const hop[] = {"host", "connection", "content-length", "transfer-encoding",
					  "keep-alive", "proxy-connection", NULL};
	for (size_t i = 0; hop[i]; i++)
		if (strlen(hop[i]) == n && !strncasecmp(k, hop[i], n))
			return true;
	return false;
}

void relay_req_free(struct relay_req *q)
{
	free(q->buf.data);
	free(q->body.data);
	jv_free(q->headers);
}

int relay_head_cut(struct relay_req *q, char *eoh)
{
	*eoh = 0;
	q->head_len = (size_t)(eoh - q->buf.data) + 4;
	char *line_end = strstr(q->buf.data, "\r\n");
	char *rl = q->buf.data;
	if (line_end)
		*line_end = 0;
	char *sp1 = strchr(rl, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7))
		return -1;
	*sp1 = *sp2 = 0;
	q->method = rl;
	q->target = sp1 + 1;
	for (char *h = line_end ? line_end + 2 : NULL; h && *h;) {
		char *e = strstr(h, "\r\n");
		if (e)
			*e = 0;
		char *colon = strchr(h, ':');
		if (colon) {
			size_t kn = (size_t)(colon - h);
			char *v = colon + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if (kn == 4 && !strncasecmp(h, "host", 4))
				q->host = v;
			else if (kn == 14 && !strncasecmp(h, "content-length", 14))
				q->clen = atoll(v);
			else if (kn == 17 && !strncasecmp(h, "transfer-encoding", 17))
				q->chunked = strcasestr(v, "chunked") != NULL;
			if (!hop_header(h, kn))
				q->headers = jv_array_append(
				    q->headers, JV_ARRAY(jv_string_sized(h, (int)kn), jv_string(v)));
		}
		h = e ? e + 2 : NULL;
	}
	return 0;
}

ssize_t dechunk(const char *p, size_t n, struct gl_buf *out)
{
	size_t pos = 0;
	out->len = 0;
	for (;;) {
		const char *eol = memmem(p + pos, n - pos, "\r\n", 2);
		if (!eol)
			return -1;
		char *end;
		unsigned long size = strtoul(p + pos, &end, 16);
		if (end == p + pos || size > BODY_MAX)
			return -2;
		size_t data = (size_t)(eol - p) + 2;
		if (size == 0)
			return memmem(p + data, n - data, "\r\n", 2) ? (ssize_t)out->len : -1;
		if (n < data + size + 2)
			return -1;
		gl_buf_add(out, p + data, size);
		if (out->len > BODY_MAX)
			return -2;
		pos = data + size + 2;
	}
}
