/* args.h — gl-damp's command line (args.c): the three modes (the stream,
 * analyze, simulate; SPEC §8, docs/damp.md), their flags and the
 * operating point. A usage error is a line on stderr and exit 2. */
#ifndef GL_DAMP_ARGS_H
#define GL_DAMP_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "damp/damp.h"
#include "damp/damp_sim.h"

extern const char gl_damp_usage[];

enum mode { STREAM, ANALYZE, SIMULATE };

struct args {
	enum mode mode;
	const char *state, *log;
	struct gl_damp_params params;
	double rates[32];
	size_t nrates;
	struct gl_damp_sim sim;
	bool have_rate, have_calls, have_releases, text;
};

/* argv into a (zeroed by the caller); exits 2 on a usage error. */
void parse(int argc, char **argv, struct args *a);

#endif
