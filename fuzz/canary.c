/* canary.c — not a parser: a target that aborts on inputs starting with
 * "GL!", so that tests/fuzz.bats can show that a crashing input fails the
 * replay of a corpus and that fuzz/run.sh (make fuzz) reports what a
 * target finds and exits non-zero. Its committed corpus (one seed, "GL-")
 * does not crash; make fuzz never runs it. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 3 && data[0] == 'G' && data[1] == 'L' && data[2] == '!')
		abort();
	return 0;
}
