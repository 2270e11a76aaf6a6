/* passphrase.h — the passphrase of an encrypted key file (SPEC §3): from
 * GL_PASSPHRASE, else asked on /dev/tty with echo off.
 *
 * GL_PASSPHRASE is copied once into locked memory, wiped from the
 * environment and used for every key the process opens. Without it and
 * without a terminal, the caller gets GL_KEY_NO_PASSPHRASE and exits 2 with
 * a hint. A signal during the prompt restores the terminal first. */
#ifndef GL_PASSPHRASE_H
#define GL_PASSPHRASE_H

#include "sign/keys.h"
#include "core/util.h"

#define GL_PASS_MAX 1024

/* The passphrase for key file `what` into out (locked memory of
 * GL_PASS_MAX+1 bytes, NUL-terminated); asked twice when confirm. Returns
 * GL_KEY_OK, GL_KEY_IO (e.g. the two differ) or GL_KEY_NO_PASSPHRASE, with
 * *err (malloc'd, never holding the passphrase). */
enum gl_key_status gl_passphrase(const char *what, int confirm, char *out, char **err);

#endif
