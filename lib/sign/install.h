/* install.h — verify and install one release (gl-verify install, SPEC §3).
 *
 * Order of checks: the publisher is pinned; the root chain is refreshed;
 * targets.json meets the targets threshold, is not rolled back, not
 * expired; the archive's length (at most length+1 bytes are read), then
 * its SHA-256, both streamed into a private copy under GL_HOME/releases/
 * (so the bytes extracted are the bytes hashed, whatever happens to the
 * original meanwhile); then safe extraction into GL_HOME/releases/<sha256>/
 * (read-only), then its manifest. The record is written atomically to
 * GL_HOME/releases/<sha256>.json with the extractor's "files" map. */
#ifndef GL_INSTALL_H
#define GL_INSTALL_H

#include <jv.h>
#include <stdint.h>

#include "json/refusal.h"

/* file: a target name (read from REPO/targets/<name>) or a path containing
 * '/' (its basename is the target name). *record (owned) receives
 * {"sha256","name","version","path","manifest","publisher"}. */
enum gl_code gl_install(const char *home, const char *repo, const char *file, int64_t now,
			   jv *record, struct gl_fail *f);

#endif
