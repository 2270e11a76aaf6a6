/* repo.h — reading a TUF repository (issue 16): every metadata and target
 * read of gl-verify goes through these two functions, so a transport other
 * than a directory (an http:// or https:// URL, lib/sign/fetch.h) is one switch
 * here. A repository is untrusted: nothing is read past the cap the caller
 * gives, and rel (built from signed metadata, already checked with
 * gl_tuf_target_path_ok where it holds a target path) is relative. A repo
 * that is an http:// or https:// URL is read with lib/sign/fetch.h (its policy:
 * http(s) only, certificates checked, same-origin redirects, no proxy from
 * the environment, the cap before and while reading). */
#ifndef GL_REPO_H
#define GL_REPO_H

#include <stdint.h>

#include "json/refusal.h"
#include "core/util.h"

#define GL_REPO_TARGET_TIMEOUT_MS (15 * 60 * 1000) /* one target over HTTP(S) */

/* Read repo/rel into out (replacing its contents), at most max bytes:
 * more is "length" naming the file and the cap. When the file does not
 * exist and missing is not NULL, *missing = 1 and GL_E_OK; otherwise a
 * missing file is GL_E_IO (a directory) or "fetch" (a URL). */
enum gl_code gl_repo_get(const char *repo, const char *rel, size_t max, struct gl_buf *out,
			    int *missing, struct gl_fail *f);

/* Stream repo/rel (or, when repo is NULL, the local file rel) to sink,
 * reading at most max bytes; *total receives how many were read, and
 * *more whether the file holds more than that. The sink returns 0, or -1
 * to stop (its reason already in f). */
typedef int (*gl_repo_sink)(void *ctx, const void *data, size_t len, struct gl_fail *f);
enum gl_code gl_repo_stream(const char *repo, const char *rel, uint64_t max,
			       gl_repo_sink sink, void *ctx, uint64_t *total, int *more,
			       struct gl_fail *f);

/* Is repo an http:// or https:// URL? */
int gl_repo_is_url(const char *repo);

/* "repo/rel" for messages (owned). */
char *gl_repo_name(const char *repo, const char *rel);

#endif
