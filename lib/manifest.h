/* manifest.h — a release's manifest.json (SPEC §5, §11).
 *
 * The manifest comes from the release, so it is hostile input (paper
 * §III-A): it is size-capped, parsed strictly, and every field is checked
 * for kind and shape. Unknown fields are refused, so a manifest never means
 * something the host does not understand. */
#ifndef GL_MANIFEST_H
#define GL_MANIFEST_H

#include <jv.h>
#include <stddef.h>

#define GL_MANIFEST_MAX (1u << 20)

/* Parse and validate manifest bytes. Returns the manifest (owned) or
 * jv_invalid_with_msg naming the field that is wrong. */
jv gl_manifest_parse(const char *buf, size_t len);

/* Validate an already-parsed manifest. Borrows m. 0, or -1 with *err. */
int gl_manifest_check(jv m, char **err);

/* Load <release_dir>/manifest.json and validate it. Owned jv or invalid. */
jv gl_manifest_load(const char *release_dir);

/* The function object of name fn (owned), or jv_invalid() if undeclared. */
jv gl_manifest_function(jv m, const char *fn);

#endif
