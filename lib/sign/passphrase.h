/* passphrase.h — the passphrase of an encrypted key file (SPEC §3): from
 * GL_PASSPHRASE, else asked on /dev/tty with echo off.
 *
 * GL_PASSPHRASE is copied once into locked memory, wiped from the
 * environment and used for every key the process opens. Without it and
 * without a terminal, the caller gets io (SPEC §2: exit 2) with a hint. A signal during the prompt restores the terminal first. */
#ifndef GL_PASSPHRASE_H
#define GL_PASSPHRASE_H

#include "sign/keys.h"
#include "core/util.h"

#define GL_PASS_MAX 1024

/* The passphrase for key file `what` into out (locked memory of
 * GL_PASS_MAX+1 bytes, NUL-terminated); asked twice when confirm. Returns
 * GL_E_OK, or GL_E_IO (none given and no terminal, or the two differ) with
 * f (its detail never holds the passphrase). */
enum gl_code gl_passphrase(const char *what, int confirm, char *out, struct gl_fail *f);

#endif
