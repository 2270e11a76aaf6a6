/* workspace.h — the workspace of an exec copy (GL_WORKSPACE_DIR,
 * /run/germline/state, with "state_dir": true) and its horizon slot's key
 * "gl.files" (gl-exec-host; docs/exec.md "File state through slots: the
 * workspace"; paper §IV-E, Algorithm 1 lines 11–28).
 *
 * "gl.files" is {"a/b.txt": "<base64>", "a/": ""}: relative paths of
 * components [A-Za-z0-9._-] (not "." or ".."), at most GL_WS_DEPTH_MAX
 * deep; a name ending in "/" is a directory (value ""). Regular files and
 * directories only: a symlink, fifo, socket or device is not stored. The
 * slot was written by the broker, but its content came from a copy, so
 * restoring validates every name and bound again; either side refuses what
 * is out of bounds (the call gets a tool error, nothing is stored) rather
 * than keep part of it. Old flat slots ({"memory.jsonl": …}) are the same
 * format without '/'. */
#ifndef GL_WORKSPACE_H
#define GL_WORKSPACE_H

#include <jv.h>

#define GL_WS_KEY "gl.files"
#define GL_WS_ENTRIES_MAX 1024     /* files and directories */
#define GL_WS_FILE_MAX (8u << 20)  /* bytes of one file */
#define GL_WS_TOTAL_MAX (32u << 20) /* bytes of all files */
#define GL_WS_DEPTH_MAX 16         /* components of one name */

/* Fill the empty workspace dir from the slot state (the call message's
 * "state", borrowed). NULL, or why the slot's "gl.files" is refused
 * (malloc'd); nothing is followed, and a refusal may leave part written
 * (the caller fails the call and the copy's scratch is discarded). */
char *gl_ws_restore(const char *dir, jv state);

/* The workspace dir as the value of "gl.files" (owned), walked without
 * following anything; or jv_invalid() with *why (malloc'd) when it is out
 * of bounds or holds a name that cannot be stored. */
jv gl_ws_collect(const char *dir, char **why);

#endif
