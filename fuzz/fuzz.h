/* fuzz.h — what the fuzz targets share (docs/fuzzing.md). Each target is
 * one LLVMFuzzerTestOneInput over one parser of hostile input, built with
 * clang, libFuzzer, ASan and UBSan by fuzz/fuzz.mk. A crash, a sanitizer
 * report, a leak or a timeout is the finding; the JSON readers' targets
 * (json, canon, msg) also check the pipeline's number rule as a property
 * (fuzz_roundtrip: a broken property aborts, which libFuzzer reports as a
 * crash). Every jv a target makes is freed (LeakSanitizer runs after each
 * input that allocated more than it freed). */
#ifndef GL_FUZZ_H
#define GL_FUZZ_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdio.h>

#include "json/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Write all of data[0..size) to fd; 0, or -1. */
static inline int fuzz_write_all(int fd, const uint8_t *data, size_t size)
{
	while (size) {
		ssize_t w = write(fd, data, size);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		data += w;
		size -= (size_t)w;
	}
	return 0;
}

/* The read end of a pipe that holds data[0..size) and whose write end is
 * closed, so a reader sees the bytes and then EOF, never a wait; -1 when
 * the pipe cannot hold them (the caller skips the input). Made
 * non-blocking, as the readers' callers make theirs. */
static inline int fuzz_pipe(const uint8_t *data, size_t size)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (size > 65536)
		fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	if ((size_t)fcntl(p[1], F_GETPIPE_SZ) < size || fuzz_write_all(p[1], data, size) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	return p[0];
}

/* A memory file holding data[0..size), at offset 0; -1 on failure. */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fuzz_write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The round-trip property of the one number rule (docs/pipeline.md
 * "Numbers"): v (borrowed), a value read by reader, written by the writer
 * (canonical: gl_canon_dump, else gl_json_dump) is read back by the same
 * reader as an equal value, whose writing is the same text. Aborts when
 * not. A value the canonical writer refuses has no text to read back. */
static inline void fuzz_roundtrip(jv v, jv (*reader)(const char *, size_t), bool canonical,
				  const char *what)
{
	struct gl_buf a = {0}, b = {0};
	struct gl_fail f = {0};
	if (canonical ? gl_canon_dump(&a, v, &f) < 0 : (gl_json_dump(&a, v), 0)) {
		gl_fail_clear(&f);
		gl_buf_free(&a);
		return;
	}
	jv w = reader(a.data ? a.data : "", a.len);
	if (!jv_is_valid(w) || !jv_equal(jv_copy(v), jv_copy(w))) {
		fprintf(stderr, "%s: the value written as %.*s does not read back as itself\n", what,
			(int)(a.len < 400 ? a.len : 400), a.data ? a.data : "");
		abort();
	}
	if (canonical ? gl_canon_dump(&b, w, &f) < 0 : (gl_json_dump(&b, w), 0))
		abort();
	if (a.len != b.len || memcmp(a.data, b.data, a.len)) {
		fprintf(stderr, "%s: written twice, two texts: %.*s | %.*s\n", what,
			(int)(a.len < 200 ? a.len : 200), a.data, (int)(b.len < 200 ? b.len : 200),
			b.data);
		abort();
	}
	jv_free(w);
	gl_fail_clear(&f);
	gl_buf_free(&a);
	gl_buf_free(&b);
}

#endif
