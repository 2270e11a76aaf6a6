/* admit.h — admission of an installed release at launch (SPEC §9; seed
 * 002 "verified launch": what is hashed is what runs).
 *
 * gl-verify install records the SHA-256 of every regular file it extracted
 * (GL_HOME/releases/<sha256>.json, "files"). Before a launch the release
 * tree is walked from a directory descriptor (openat, O_NOFOLLOW: no path is
 * resolved twice), every file is opened, hashed from that descriptor and
 * compared with the record, and anything the record does not list (a file
 * added after install, a link, a device) refuses the release. The
 * descriptors stay open for the whole launch; after the germline reported
 * its entry module imported, gl_admit_recheck hashes them again and checks
 * that every path still names the very inode that was hashed. So a file
 * changed in place or replaced before or during initialisation refuses the
 * release. What this cannot exclude (docs/receipts.md "Limits"): a file
 * changed and restored between the two checks while the interpreter read it;
 * the release tree lives under GL_HOME, which only the host's user can write. */
#ifndef GL_ADMIT_H
#define GL_ADMIT_H

#include <jv.h>
#include <stddef.h>

#include "core/fail.h"

#define GL_ADMIT_FILES_MAX 20000 /* files of one release tree */

struct gl_admit_file {
	char *rel;  /* path inside the release */
	int fd;     /* retained, read-only */
	char sha256[65];
};

struct gl_admit {
	int dirfd;
	struct gl_admit_file *f;
	size_t n;
	char tree_sha256[65];     /* SHA-256 of the canonical JSON of the files map */
	char manifest_sha256[65]; /* of manifest.json as hashed */
	char target_sha256[65];   /* of the entry (python: ENTRY.py or ENTRY/__init__.py) */
	char *target;             /* its path inside the release */
};

/* What a refusal names (receipts' "binding"). */
enum gl_admit_status {
	GL_ADMIT_OK = 0,
	GL_ADMIT_NO_RECORD, /* no readable install record: unknown release */
	GL_ADMIT_TREE,      /* a file differs from the record, is missing or was added */
	GL_ADMIT_MANIFEST,  /* manifest.json differs */
	GL_ADMIT_TARGET,    /* the entry file differs */
};
/* "release", "tree", "manifest_sha256", "target_sha256". */
const char *gl_admit_binding(enum gl_admit_status s);

/* Verify releases_dir/<sha256>/ against releases_dir/<sha256>.json, the
 * entry being the manifest's python module name. On GL_ADMIT_OK a owns the
 * descriptors; otherwise a is empty and f (rejected) names the file. */
enum gl_admit_status gl_admit_open(const char *releases_dir, const char *sha256, const char *entry,
				   struct gl_admit *a, struct gl_fail *f);
/* Again, from the retained descriptors, after initialisation (see above). */
enum gl_admit_status gl_admit_recheck(const struct gl_admit *a, struct gl_fail *f);
void gl_admit_close(struct gl_admit *a);

#endif
