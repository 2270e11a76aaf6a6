/* exec_tree.h — the verified tree of a runtime "exec" release (exec_tree.c;
 * used by lib/runtime/exec.c). */
#ifndef GL_EXEC_TREE_H
#define GL_EXEC_TREE_H

#include <jv.h>

#include "runtime/exec.h"

/* Walk the installed tree under root (a directory descriptor) and record
 * every file, directory and symlink in x->file: each regular file must be
 * in files (the install record's {"path": sha256}) with that hash, and
 * every path there must be found; anything else refuses the tree. A hash
 * mismatch sets x->fail_binding ("manifest_sha256", "target_sha256" for
 * target_rel — entry[0] inside the release, or NULL — else "tree"); x's
 * manifest_sha256 is filled. 0, or -1 with f (rejected) naming the file.
 * Borrows files. */
int gl_exec_tree_record(struct gl_exec *x, int root, jv files, const char *target_rel,
			struct gl_fail *f);

/* Has any recorded file or directory changed (device, inode, size, mtime,
 * ctime) since gl_exec_tree_record? 0 when none has, else -1 with f
 * (rejected) naming it. */
int gl_exec_tree_unchanged(const struct gl_exec *x, struct gl_fail *f);

/* Free what gl_exec_tree_record recorded. */
void gl_exec_tree_free(struct gl_exec *x);

#endif
