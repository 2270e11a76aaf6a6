/* archive.h — reproducible release archives and their safe extraction
 * (SPEC §3), with libarchive. A release archive is a tar.gz whose root holds
 * manifest.json; its identity is the SHA-256 of the archive bytes.
 *
 * Everything read from an archive is hostile (paper §III-A: the adversary
 * controls the whole release): extraction bounds entry count and total size,
 * and refuses absolute paths, "..", links or devices, duplicate entries,
 * and anything written through a link. */
#ifndef GL_ARCHIVE_H
#define GL_ARCHIVE_H

#include <jv.h>
#include <stdint.h>

#include "core/fail.h"

/* Documented bounds (docs/archives.md "Bounds": chosen against the largest
 * real releases we install, the npm MCP servers' node_modules: 27 MB and
 * 4,728 entries; these are about 40 and 14 times that). */
#define GL_ARCHIVE_MAX_BYTES_DEFAULT (1ull << 30)     /* total uncompressed bytes */
#define GL_ARCHIVE_MAX_ENTRIES_DEFAULT 65536ull
#define GL_ARCHIVE_MAX_PATH 1024

struct gl_archive_limits {
	uint64_t max_bytes;
	uint64_t max_entries;
};
/* Defaults, lowered (never raised past the defaults) by
 * GL_ARCHIVE_MAX_BYTES / GL_ARCHIVE_MAX_ENTRIES when set. A value that is
 * not a plain decimal number is a usage error: -1 with f (io; a bound the
 * deployer meant to lower is never silently the default); a value above
 * the default is ignored with a warning. gl_archive_pack applies the same
 * bounds. */
int gl_archive_limits_env(struct gl_archive_limits *l, struct gl_fail *f);
/* gl_archive_limits_env for a command's own use (replay/ still calls it):
 * a bad bound is reported and exits 2 (gl_fail_exit). */
void gl_archive_limits_default(struct gl_archive_limits *l);

enum gl_archive_status {
	GL_ARCHIVE_OK = 0,
	GL_ARCHIVE_UNSAFE, /* refused: error code "unsafe_archive" */
	GL_ARCHIVE_IO,     /* I/O or usage error (exit 2) */
};

/* Pack src_dir into out_path reproducibly: entries sorted by byte order of
 * their path, mtime fixed, uid/gid 0, no owner names, modes normalised to
 * 0644/0755, gzip header without timestamp or name. Symlinks are kept only
 * if they resolve inside the tree; devices, fifos and sockets are refused;
 * hard-linked files become separate regular files. The same tree always
 * gives the same bytes. Returns UNSAFE for what extraction would refuse
 * (devices, escaping or dangling links, non-UTF-8 names, bounds), IO
 * otherwise (including out_path inside src_dir). Writes out_path.tmp.XXXXXX
 * and renames it. Returns GL_E_OK, or GL_E_UNSAFE_ARCHIVE / GL_E_IO with f
 * ("SRC_DIR: …", paths relative to src_dir; a bad bound from the
 * environment as gl_archive_limits_env says it). */
enum gl_code gl_archive_pack(const char *src_dir, const char *out_path, struct gl_fail *f);

/* Read one regular-file member (e.g. "manifest.json", also found as
 * "./manifest.json") of the archive open at fd (from its current offset),
 * without extracting anything; reads the whole archive, so that a duplicate
 * is seen. Refuses a member larger than cap. Returns GL_E_OK (and *out, *len,
 * NUL-terminated), GL_E_UNSAFE_ARCHIVE (member missing, duplicated, too
 * large, or archive malformed: f says which) or GL_E_IO. */
enum gl_code gl_archive_read_member(int fd, const char *name, size_t cap, char **out, size_t *len,
				    struct gl_fail *f);

/* Extract the archive open at fd (from its current offset) into dest, which
 * must not exist yet (else IO) and whose parent must exist. Works in a
 * temporary sibling directory dest.tmp.XXXXXX and renames it into place
 * (RENAME_NOREPLACE) only when every entry was accepted; on refusal nothing
 * is left behind. Returns GL_E_OK, GL_E_UNSAFE_ARCHIVE (f's detail is
 * 'entry N "name": reason', sanitised) or GL_E_IO (f's detail names the
 * path and errno's text). The resulting tree is read-only (files 0444 or 0555, directories 0555);
 * setuid/setgid/sticky bits are dropped. *files (owned by the caller)
 * receives {"path": "<sha256 hex>", ...} for every regular file, so a
 * later launch can tell a file changed after install. */
enum gl_code gl_archive_extract(int fd, const char *dest, const struct gl_archive_limits *lim,
				jv *files, struct gl_fail *f);

#endif
