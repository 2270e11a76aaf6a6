/* callmsg.h — the call message a copy receives first (paper Algorithm 1
 * line 10; docs/design/run.md "Copy protocol"): m, the contents of the
 * copy's view (other items: name and label, empty data), the whole slot
 * and the twin inputs τ. Shared by the broker (gl-run) and by probe replay
 * (gl-replay), so a replayed copy gets byte for byte the message a live
 * copy with the same inputs got. */
#ifndef GL_CALLMSG_H
#define GL_CALLMSG_H

#include <jv.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

/* τ = (frozen clock, seed), chosen without reading contents. The copy gets
 * time = sec + usec/10⁶ as a double; keeping the two integers lets a
 * witness carry τ exactly in canonical JSON (integers only). */
struct gl_twin {
	int64_t sec, usec;
	char seed[65]; /* 64 lowercase hex */
};

/* A fresh τ: the wall clock now and 32 random bytes. */
void gl_twin_new(struct gl_twin *t);
double gl_twin_time(const struct gl_twin *t);

struct gl_callmsg_item {
	const char *name;
	jv label;        /* borrowed: array of tags */
	const char *b64; /* contents (base64), or NULL outside the view */
};

/* Append {"args","function","items","state","twin","type":"call"} to out
 * ("twin" left out when twin is NULL: an exec copy alone in its call).
 * Borrows args (an object) and state (the slot view). Item contents are
 * copied once, without a jv round trip. */
void gl_callmsg(struct gl_buf *out, const char *function, jv args,
		const struct gl_callmsg_item *item, size_t nitem, jv state,
		const struct gl_twin *twin);

#endif
