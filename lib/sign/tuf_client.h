/* tuf_client.h — the TUF client workflow after the root (TUF specification
 * §5.4-5.6, SPEC §3): timestamp, snapshot, targets, each a named refusal.
 *
 *   timestamp  REPO/timestamp.json (capped at GL_TUF_TIMESTAMP_MAX):
 *              threshold of the root's timestamp role (5.4.2); version not
 *              lower than the trusted one, nor the snapshot version it
 *              names ("rollback", 5.4.3); not expired ("expired": the freeze
 *              attack, 5.4.4). The same version as the trusted one: the
 *              trusted one is kept ("no update").
 *   snapshot   REPO/V.snapshot.json (consistent snapshots) or snapshot.json,
 *              V the version the timestamp names; read up to the length the
 *              timestamp gives (else GL_TUF_SNAPSHOT_MAX: "length"), its
 *              hashes checked ("hash", 5.5.2), threshold (5.5.3), version V
 *              ("rollback": mix-and-match, 5.5.4), every role the trusted
 *              snapshot lists still listed and not at a lower version
 *              ("rollback", 5.5.5), not expired (5.5.6).
 *   targets    REPO/T.targets.json or targets.json, T the version the
 *              snapshot names: length/hashes when given (5.6.2), threshold
 *              (5.6.3), version T ("rollback": mix-and-match, 5.6.4), not
 *              lower than the trusted targets, not expired (5.6.5).
 *
 * A trusted file whose version is the one named is reused, not fetched.
 * The three are stored under the publisher's directory only when all three
 * verified: a failed update leaves the previous trusted state.
 *
 * The paper's assumption A3 (Section V-B: "signature verification is
 * correct") is what this file and lib/sign/tuf.c must make true: the release r
 * whose image the germline is built from (A2) is the one its publisher's
 * keys signed, fresh, not rolled back, not mixed with other metadata. */
#ifndef GL_TUF_CLIENT_H
#define GL_TUF_CLIENT_H

#include <jv.h>
#include <stdint.h>

#include "json/refusal.h"
#include "sign/trust.h"

/* Run the three steps for p (whose root is already refreshed). On success
 * p->timestamp, p->snapshot and p->targets are the new trusted documents and
 * *signers the keyids that validly signed the targets (owned). */
enum gl_code gl_tuf_update(struct gl_publisher *p, const char *repo, int64_t now,
			      jv *signers, struct gl_fail *f);

/* One level of delegated targets (TUF §5.6.7): path is not listed by the
 * top-level targets; each delegated role of p->targets whose "paths"
 * patterns match it (fnmatch, '*' not crossing '/'), in order, is read
 * (V.NAME.json with consistent snapshots, V the version the snapshot names:
 * length and hashes when given, the delegation's threshold, exactly V,
 * not expired) and asked for path, until one lists it or a terminating
 * role was asked. *entry receives the entry (owned; invalid when no role
 * lists it) and *signers is replaced by the delegated role's signers.
 * Delegated roles are not cached: their rollback protection is the
 * snapshot's (5.5.5). */
enum gl_code gl_tuf_find_delegated(struct gl_publisher *p, const char *repo, int64_t now,
				      const char *path, jv *entry, jv *signers, struct gl_fail *f);

/* In a GL_TESTING build, GL_TEST_TUF_OFF names checks to skip (comma
 * separated: "expiry", "rollback", "version", "hash"), so tests/tuf.bats can
 * show each attack succeeding without its check. Never in a release build. */
int gl_tuf_check_off(const char *check);

#endif
