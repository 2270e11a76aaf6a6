/* installed.h — the releases installed in a directory (DIR/<sha256>/,
 * each put there verified by gl-verify install): listed, and one found by
 * its name (gl-verify list; gl-run --serve-mcp --release NAME[@VERSION];
 * docs/signing.md "Installed releases").
 *
 * A name is a convenience for the operator, never a trust decision: the
 * release it resolves to is the hash that was installed, and everything
 * after (the germline's verified launch, receipts, witnesses) names that
 * hash. A name that fits more than one installed release is refused with
 * the candidates listed, never guessed. */
#ifndef GL_INSTALLED_H
#define GL_INSTALLED_H

#include <jv.h>

#include "core/fail.h"

#define GL_INSTALLED_MAX 65536 /* directory entries read at most */

/* Every release installed in dir whose manifest reads, as
 * {"release","name","version","runtime","protocol","deterministic"},
 * sorted by name, version and hash (*out, owned; empty when dir does not
 * exist). 0, or -1 with f (io: dir cannot be read, or holds more than
 * GL_INSTALLED_MAX entries). */
int gl_installed_list(const char *dir, jv *out, struct gl_fail *f);

/* The release spec names, into sha: spec itself when it is a full hash
 * (whether it is installed is the caller's check); else NAME or
 * NAME@VERSION, which must fit exactly one release installed in dir.
 * 0, or -1 with f: unknown_release (none fits: the detail lists the
 * versions of NAME that are installed), usage (NAME fits several
 * versions, or a malformed spec), io. */
int gl_installed_find(const char *dir, const char *spec, char sha[65], struct gl_fail *f);

#endif
