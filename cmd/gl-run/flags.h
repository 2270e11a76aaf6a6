/* flags.h — gl-run's command line (flags.c): the usage text, the flags
 * and their combinations, checked in the order gl-run has always checked
 * them; a usage error prints the usage and exits 2 (SPEC §2). */
#ifndef GL_RUN_FLAGS_H
#define GL_RUN_FLAGS_H

#include <stdbool.h>

#include "runtime/receipt.h"
#include "session/session.h"

extern const char gl_run_usage[];

/* What the flags say beside the session's own settings. */
struct opts {
	const char *policy, *releases, *serve_release, *consumer, *receipts, *host_key,
	    *profile, *log, *mode, *damp;
	bool serve_mcp;
	unsigned max_resident; /* --max-resident; 0: not given */
	unsigned jobs; /* --jobs (default: the online CPUs, at most GL_JOBS_MAX) */
	bool jobs_given; /* --jobs was given (--serve-mcp's default is 1) */
	bool unordered;
};

/* argv into o and b (the broker's settings). */
void parse_flags(int argc, char **argv, struct opts *o, struct gl_broker *b);
/* The combinations; s's mode and launcher (profile, receipts in rc: the
 * directory checked, the host key loaded). */
void check_flags(const struct opts *o, struct gl_session *s, struct gl_receipts *rc);

#endif
