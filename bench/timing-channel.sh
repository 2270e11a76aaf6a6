#!/usr/bin/env bash
# bench/timing-channel.sh (make bench): the timing channel between copies of
# different calls (issue 19, "Timing is a channel we measure"; paper §V-B A1
# excludes timing channels and notes that sequential copies reduce them).
# The figures are kept in docs/sandbox.md "Timing between concurrent copies".
#
# bench/releases/timing (a hostile release: `send` holds a secret and
# modulates CPU or cache contention with its bits; `receive`, a public call
# cleared for a real loopback sink, decodes them from its own progress) is
# signed and installed through the real chain into a temporary GL_HOME;
# bench/timing/driver.py runs the two calls sequentially and at the same time
# and prints bit error rates and capacities in bits/s.
#   GL_TIMING_TRIALS (3), GL_TIMING_BITS (32), GL_TIMING_SLOT_MS (50),
#   GL_TIMING_MODES (cpu,mem), GL_TIMING_CONFIGS (all that gl-run offers),
#   GL_TIMING_LEAD_S (1.5), GL_TIMING_LISTEN_S (1.5), GL_TIMING_VERBOSE
set -euo pipefail
. "$(dirname "$0")/lib/setup.bash"
bench_setup timing
bench_publisher
sha=$(bench_install "$root/bench/releases/timing")

echo "machine: $(nproc) CPUs, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$root/bench/timing/driver.py" --root "$root" --release "$sha" --work "$work" \
  --trials "${GL_TIMING_TRIALS:-3}" --bits "${GL_TIMING_BITS:-32}" \
  --slot-ms "${GL_TIMING_SLOT_MS:-50}" --modes "${GL_TIMING_MODES:-cpu,mem}" \
  --configs "${GL_TIMING_CONFIGS:-}" --lead-s "${GL_TIMING_LEAD_S:-1.5}" \
  --listen-s "${GL_TIMING_LISTEN_S:-1.5}" ${GL_TIMING_VERBOSE:+--verbose}
