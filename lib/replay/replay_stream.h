/* replay_stream.h — gl-replay on stdin (SPEC §7; docs/witness.md): each
 * result record of gl-run is written out unchanged, then one verdict per
 * trigger, in order, so gl-damp decays for the call before it adds the
 * call's events (docs/damp.md "Pairing"); a bare trigger record (SPEC §6's
 * trigger object) gets its verdict, a verdict passes on, and any other
 * record is answered with an ok:false record "bad_record" (SPEC §2: never
 * a silently skipped line). A trigger whose witness was refused as
 * too_large is charged to the record's release (issue 15). */
#ifndef GL_REPLAY_STREAM_H
#define GL_REPLAY_STREAM_H

#include "core/util.h"
#include "replay/replay.h"

/* One line: its records written (flushed) to stdout; the worst status of
 * them (GL_EXIT_OK, GL_EXIT_REFUSED, or GL_REPLAY_IO's 2), or -1 with
 * errno when stdout cannot be written. */
int gl_replay_stream_line(struct gl_replay *x, const struct gl_buf *line);

#endif
