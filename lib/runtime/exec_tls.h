/* exec_tls.h — what an exec copy's HTTPS relay serves (docs/exec.md
 * "HTTPS"). A copy's `https://` ends at its own relay (gl-exec-host on
 * 127.0.0.1:443 of the copy's network namespace), which hands each request
 * to the broker as an effect, exactly as it does plain HTTP; the broker
 * then speaks real TLS upstream, verifying the destination (lib/broker/http.c).
 * For the copy's TLS client to accept the relay, each session makes its
 * own certificate authority and, from it, one relay certificate naming
 * exactly the release's declared destinations. The authority's key is
 * made, used for that one signature and freed here: it is never written,
 * never in a copy, and no other certificate can ever chain to it. */
#ifndef GL_EXEC_TLS_H
#define GL_EXEC_TLS_H

#include <stddef.h>

#include "core/fail.h"

/* Where a copy finds them: GL_EXEC_TLS_DIR/ca.pem (the authority's
 * certificate, which the target's TLS libraries are told to trust) and
 * GL_EXEC_TLS_DIR/relay.pem (the relay's certificate and key, read by
 * gl-exec-host). The directory is the copy's own scratch tls/, bound there
 * in the minimal root. */
#define GL_EXEC_TLS_DIR "/etc/germline"

struct gl_exec_tls {
	char *ca_pem;    /* the authority's certificate (PEM) */
	char *relay_pem; /* the relay's certificate, then its private key (PEM) */
};

/* Make a fresh authority (ECDSA P-256) and the relay's certificate for
 * hosts[0..n) (DNS names and IP addresses as gl_host_ok accepts them;
 * serverAuth only, valid from a day ago for 397 days). 0, or -1 with f
 * (bootstrap_failed). */
int gl_exec_tls_make(struct gl_exec_tls *t, const char *const *hosts, size_t n,
		     struct gl_fail *f);
void gl_exec_tls_free(struct gl_exec_tls *t);

#endif
