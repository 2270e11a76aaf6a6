/* pgauth.c — PostgreSQL's startup and SCRAM-SHA-256 as the broker reads
 * them (lib/broker/pgauth.c): the input is read as a copy's first bytes
 * (gl_pg_startup_kind), then, from its second byte on, as a server's
 * answer to the broker's authentication, fed in pieces whose size the
 * first byte chooses. The client nonce is fixed ("A" × 32) so that a
 * server-first message in the corpus can extend it and reach the proof
 * and the signature check. */
#include "fuzz.h"

#include <string.h>

#include "broker/pgauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = 0;
	(void)gl_pg_startup_kind(data, size, &len);
	struct gl_pgauth a;
	gl_pgauth_init(&a, "pencil-password");
	memset(a.cnonce, 'A', 32);
	struct gl_buf out = {0}, reply = {0};
	size_t step = size ? (size_t)(data[0] % 64) + 1 : 1;
	enum gl_pgauth_status st = GL_PGAUTH_MORE;
	for (size_t off = 1; off < size && st == GL_PGAUTH_MORE; off += step)
		st = gl_pgauth_feed(&a, data + off, size - off < step ? size - off : step, &out,
				    &reply);
	gl_pgauth_free(&a);
	gl_buf_free(&out);
	gl_buf_free(&reply);
	return 0;
}
