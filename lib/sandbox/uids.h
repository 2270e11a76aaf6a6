/* uids.h — a host uid of its own for every process that runs release code
 * while another may (SPEC §5 "host uid"; docs/sandbox.md "Host uids").
 *
 * The kernel keeps many counters per user: queued signals, POSIX message
 * queue bytes, locked memory and namespaces per (user namespace, uid)
 * (ucounts), pipe pages and epoll watches per host uid (the user struct).
 * Two processes of one uid share them: one that holds data can move a
 * counter, and one that holds less can read it back by what it can still
 * allocate (paper §III: the release knows the mechanism). A copy therefore
 * runs as a host uid that no other process running release code holds at
 * the same time.
 *
 * The uids come from a range the operator delegates to the user gl-run
 * runs as, in /etc/subuid and /etc/subgid (NAME:START:COUNT, as rootless
 * Podman and nsjail take theirs). The range is cut into blocks of
 * GL_UIDS_BLOCK ids; each germline leases one block for its life, host
 * wide, by an flock(2) on the block's lock file (a crashed holder's lock
 * goes with it), and only when no process on the host runs as any id of
 * the block. Inside the germline's user namespace, id 0 is the germline
 * (its init and its import) and id 1 + lane its copy of that lane, so the
 * copies alive at one time, whose lanes differ (their PIDs are
 * GL_COPY_PID + lane: the kernel refuses a lane still held, even by a copy
 * not yet reaped), never share a uid. The broker writes the namespace's
 * maps from outside before the germline goes on: root directly, any other
 * user through newuidmap/newgidmap (Debian's uidmap), which check the
 * delegation. A copy takes its uid in the fork itself (gl_confine_copy):
 * no round trip on the call path.
 *
 * No range (no entry, no helper, no lease directory): gl_uids_open says
 * why, and the caller runs every process of release code alone
 * (enforcement "uid":"serialized"), never sharing silently. */
#ifndef GL_UIDS_H
#define GL_UIDS_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/fail.h"

/* ids a germline's block holds: inside 0 (the germline) and 1 + lane for
 * each of GL_COPY_LANES lanes (lib/sandbox/sandbox.h) */
#define GL_UIDS_BLOCK 65

struct gl_uids {
	bool on;            /* a delegated range: a block per germline */
	uid_t ubase;        /* the range: [ubase, ubase + count) host uids */
	gid_t gbase;        /* and [gbase, gbase + count) host gids */
	unsigned long count; /* ids of the range (the smaller of the two) */
	bool helper;        /* not root: newuidmap/newgidmap write the maps */
	char *dir;          /* the lease directory (kept without a range: the serial lock) */
	char *why;          /* without a range: why, for the operator; else NULL */
	bool off;           /* GL_TESTING, GL_TEST_UIDS_OFF=1: neither (the damage) */
};

/* One germline's block, held while its lock is. */
struct gl_uid_lease {
	int fd;      /* the block's lock file, flock'ed; -1: no block */
	uid_t uid;   /* the host uid of inside 0 (the block's first) */
	gid_t gid;
	unsigned block;
};

/* The delegated range of the effective user, from subuid and subgid
 * (normally /etc/subuid and /etc/subgid): u->on, or u->why. -1 with f
 * only when the range exists but cannot be used safely (it overlaps a
 * user of the passwd database; the lease directory is not the user's own). */
int gl_uids_open(struct gl_uids *u, const char *subuid, const char *subgid, struct gl_fail *f);
/* /etc/subuid and /etc/subgid; in a GL_TESTING build GL_TEST_SUBUID and
 * GL_TEST_SUBGID name others (a test without a delegation, or with one it
 * made), and GL_TEST_UIDS_OFF=1 takes no range (the damage: every copy of
 * every germline runs as the broker's uid, nothing serialised). */
const char *gl_uids_subuid_path(void);
const char *gl_uids_subgid_path(void);
void gl_uids_close(struct gl_uids *u);

/* A free block, leased: 0, or -1 with f (every block held). */
int gl_uids_lease(const struct gl_uids *u, struct gl_uid_lease *l, struct gl_fail *f);
void gl_uids_release(struct gl_uid_lease *l);

/* Write the uid and gid maps of pid's user namespace (a child in its
 * first moments, waiting for them) so that inside 0 .. GL_UIDS_BLOCK-1 are
 * the block's, setgroups denied first. 0, or -1 with f. */
int gl_uids_map(const struct gl_uids *u, const struct gl_uid_lease *l, pid_t pid,
		struct gl_fail *f);

/* The uid (and gid) inside a germline's namespace of its copy of lane. */
static inline unsigned gl_uids_copy_id(unsigned lane)
{
	return 1u + lane;
}

/* Without a range: every process of release code runs alone under the
 * user's serial lock (gl_uids_serial_take blocks until it has it): -1 on
 * an error (f), else the lock's descriptor, closed by gl_uids_serial_give. */
int gl_uids_serial_take(const struct gl_uids *u, struct gl_fail *f);
void gl_uids_serial_give(int fd);

#endif
