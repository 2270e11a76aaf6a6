/* fuzz.h — what the fuzz targets share (docs/fuzzing.md). Each target is
 * one LLVMFuzzerTestOneInput over one parser of hostile input, built with
 * clang, libFuzzer, ASan and UBSan by fuzz/fuzz.mk. A target checks no
 * property of its own: a crash, a sanitizer report, a leak or a timeout
 * is the finding. Every jv a target makes is freed (LeakSanitizer runs
 * after each input that allocated more than it freed). */
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

#endif
