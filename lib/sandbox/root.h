/* root.h — the minimal filesystem root of a germline and its copies
 * (issue 13; SPEC §10 "It sees no host path it was not granted (not even by
 * stat)"; bubblewrap's model).
 *
 * Landlock decides what a germline may open, but not what it may see:
 * stat(), readlink() and connect() to a pathname socket work on any host
 * path, and a read-only Landlock rule does not stop chmod, utime or atime
 * updates on files the germline's user namespace owns. The germline
 * therefore runs in its own mount namespace whose root is an empty tmpfs
 * holding only the interpreter and its libraries, the Python host, the
 * release, the granted read_paths, /dev/null and /dev/urandom: each a
 * read-only, nosuid (and but for the two devices nodev) bind mount, so no
 * copy can change a file's mode, times or xattrs, and reads update no atime
 * (a read-only mount never does). There is no /proc, no /sys, no /run, no
 * host socket and no host process to name. Assumptions A1 (confinement:
 * no channel but the broker socket) and A2 (the germline's image depends
 * only on the release).
 *
 * A root is described before the fork (gl_root_add_*: allocation, realpath)
 * and entered by the launch child (gl_root_enter: syscalls only, into
 * fixed buffers), which must hold CAP_SYS_ADMIN in the user namespace that
 * owns its (new, private) mount namespace. */
#ifndef GL_ROOT_H
#define GL_ROOT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"

enum gl_root_kind {
	GL_ROOT_BIND,    /* read-only, nosuid, nodev bind of a host file or directory */
	GL_ROOT_BIND_RW, /* a writable one (an exec copy's workspace: its own scratch) */
	GL_ROOT_DEV,     /* read-only, nosuid bind of a device node (/dev/null, /dev/urandom) */
	GL_ROOT_SYMLINK, /* a symlink as the host has it (/lib64 -> usr/lib64) */
	GL_ROOT_DIR,     /* an empty directory (a mount point for later) */
	GL_ROOT_SCRATCH, /* a fresh writable tmpfs; target: its mount options (lib/sandbox/scratch.h) */
};

struct gl_root_entry {
	enum gl_root_kind kind;
	char *path;   /* absolute, clean, resolved (no symlink in it but the entry itself) */
	char *target; /* GL_ROOT_SYMLINK: the link's text */
	char *src;    /* a bind's source when it is not path itself, else NULL */
	bool dir;     /* GL_ROOT_BIND*: the source is a directory */
	bool check;   /* the source must still be this inode (an item the broker opened) */
	unsigned long long dev, ino;
};

#define GL_ROOT_MAX 96 /* entries: the allowlist is a few dozen paths */

struct gl_root {
	struct gl_root_entry e[GL_ROOT_MAX];
	size_t n;
	/* Inside uid and gid 0 once every source is open (gl_root_enter): in
	 * a user namespace holding a delegated block (lib/sandbox/uids.h),
	 * where the broker's own uid, which may open the sources, is not
	 * mapped, and an unmapped uid may create nothing in the new root. */
	bool become_root;
};

/* Bind path read-only at the same place, resolved with realpath first (the
 * real path is what is bound; a symlink on the way is added as one when it
 * is one of the top-level directories of a merged-/usr system). A path
 * that does not exist is skipped (as the Landlock allowlist skips it).
 * 0, or -1 with f (bootstrap_failed: the minimal root cannot be built, a
 * restriction not installed; SPEC §9). The same for each gl_root_add_*. */
int gl_root_add_bind(struct gl_root *r, const char *path, struct gl_fail *f);
/* Bind src (resolved) at dst (absolute, clean; created in the root), read-only
 * or, with rw, writable (an exec copy's workspace). */
int gl_root_add_bind_at(struct gl_root *r, const char *src, const char *dst, bool rw,
			struct gl_fail *f);
/* Bind, read-only at its own path, the file or directory the broker opened
 * as fd (an item of an exec copy's view): the child opens the path again
 * with no symlink and refuses another inode. */
int gl_root_add_fd(struct gl_root *r, int fd, struct gl_fail *f);
/* The same, bound at `at` (absolute, clean) instead of its own path: what
 * gl-replay gives an exec copy (an item's contents from the witness or
 * --items, at the item's path; lib/replay/replay_exec.c). at NULL: its own path. */
int gl_root_add_fd_at(struct gl_root *r, int fd, const char *at, struct gl_fail *f);
/* The device node at path (a character device), bound without nodev. */
int gl_root_add_dev(struct gl_root *r, const char *path, struct gl_fail *f);
/* A fresh tmpfs (nosuid, nodev, noexec) on path with the given mount
 * options (e.g. "mode=0700,size=64m"): a scratch /tmp, an exec workspace. */
int gl_root_add_tmpfs(struct gl_root *r, const char *path, const char *options, struct gl_fail *f);
/* The host's own symlinks among /bin, /sbin, /lib, /lib32, /lib64, /libx32
 * (merged /usr), so that the ELF interpreter and ld.so.cache paths
 * resolve; and the empty directories /tmp and /dev. */
int gl_root_add_system(struct gl_root *r, struct gl_fail *f);
void gl_root_free(struct gl_root *r);

/* Steps of gl_root_enter, for the launch child's status report. */
enum gl_root_step {
	GL_ROOT_OK = 0,
	GL_ROOT_PRIVATE,  /* make every mount private */
	GL_ROOT_SOURCE,   /* open a source (O_PATH, no symlink) */
	GL_ROOT_TMPFS,    /* the empty root */
	GL_ROOT_MKPOINT,  /* a mount point, directory or symlink in it */
	GL_ROOT_MOUNT,    /* open_tree / mount_setattr / move_mount of one bind */
	GL_ROOT_PIVOT,    /* pivot_root and detach the host's root */
	GL_ROOT_READONLY, /* remount the new root read-only */
	GL_ROOT_IDS,      /* inside uid and gid 0 (become_root) */
};
const char *gl_root_step_name(enum gl_root_step s);

/* In the launch child, after unshare(CLONE_NEWNS): build the root described
 * by r on an empty tmpfs mounted over base (an existing directory, e.g.
 * "/tmp"; what was there is not visible inside), make it "/", detach the
 * host's root and leave the working directory at "/". Async-signal-safe.
 * GL_ROOT_OK, or the failed step with errno set and *bad the index of the
 * entry (or -1). */
enum gl_root_step gl_root_enter(const struct gl_root *r, const char *base, int *bad);

#endif
