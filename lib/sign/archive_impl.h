/* archive_impl.h — what lib/sign/archive.c, archive_pack.c and archive_extract.c
 * share; not an interface for the rest of germline (that is archive.h). */
#ifndef GL_ARCHIVE_IMPL_H
#define GL_ARCHIVE_IMPL_H

#include "sign/archive.h"

/* libarchive's header: the Makefile adds lib/ with -iquote only, so <archive.h>
 * is the system one and "archive.h" ours. */
#include <archive.h>
#include <archive_entry.h>

#include <linux/openat2.h>
#include <locale.h>

#include "core/util.h"

/* Parents of an entry never go through a link of any kind. */
#define GL_AR_RES_STRICT (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* openat2(2), retrying on EINTR and on EAGAIN (a rename raced a ".."
 * lookup); O_CLOEXEC is always added. -1 with errno. */
int gl_ar_openat2(int dfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/* Is s (NUL-terminated) strictly valid UTF-8? */
int gl_ar_utf8_valid(const char *s);

/* Normalise an archive path into out (GL_ARCHIVE_MAX_PATH + 1 bytes):
 * "./a//b/" -> "a/b"; "" is the root itself. NULL, or why it is refused
 * (empty, longer than GL_ARCHIVE_MAX_PATH, absolute, not UTF-8, "..").
 * NUL cannot occur: libarchive ends every name at its first NUL. */
const char *gl_ar_normalise(const char *raw, char *out);

/* libarchive reading tar behind gzip, nothing else. NULL with f
 * (unsafe_archive). */
struct archive *gl_ar_reader_open(int fd, struct gl_fail *f);
/* 1 on an entry, 0 at the end, -1 with f (unsafe_archive: malformed, not
 * gzip, or anything libarchive only half understood: ARCHIVE_WARN is
 * refused). */
int gl_ar_next_header(struct archive *a, struct archive_entry **e, uint64_t index,
		      struct gl_fail *f);

/* Run libarchive in C.UTF-8 for this thread only (see archive.c). */
struct gl_ar_locale {
	locale_t loc, old;
};
struct gl_ar_locale gl_ar_utf8_enter(void);
void gl_ar_utf8_leave(struct gl_ar_locale *s);

#endif
