/* args.h — gl-sign's command line (args.c): the usage text, the flags of
 * each subcommand, key lists after a flag, --expires and --threshold. A
 * usage error prints the usage and exits 2 (SPEC §2). */
#ifndef GL_SIGN_ARGS_H
#define GL_SIGN_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

extern const char gl_sign_usage[];

struct strv {
	const char **v;
	size_t n;
};

struct args {
	const char *pos[3];
	size_t npos;
	struct strv root_key, targets_key, snapshot_key, timestamp_key, key, new_key;
	const char *threshold, *expires, *role;
	int no_passphrase, force, no_consistent, minisign;
	struct strv *greedy; /* the last key list, and how many of its values */
	size_t greedy_extra; /* were taken without a flag of their own */
};

enum flag {
	F_ROOT_KEY,
	F_TARGETS_KEY,
	F_KEY,
	F_NEW_KEY,
	F_THRESHOLD,
	F_EXPIRES,
	F_NO_PASS,
	F_FORCE,
	F_SNAPSHOT_KEY,
	F_TIMESTAMP_KEY,
	F_ROLE,
	F_NO_CONSISTENT,
	F_MINISIGN,
};
GL_NORETURN void usage_error(const char *fmt, ...) GL_PRINTF(1, 2);

/* Parse argv[2..] for a subcommand taking npos positionals and the flags
 * in allowed (1u << F_…). */
void parse(struct args *a, int argc, char **argv, unsigned allowed, size_t npos);
/* --expires (NULL: days_default from now) as a time; --threshold (NULL: 0). */
int64_t parse_expires(const char *s, int days_default);
int64_t parse_threshold(const char *s);

#endif
