/* Unit tests of lib/core/util.c's warnings (gl_warn, gl_warn_errno).
 *
 * gl-run's main loop and its workers warn on one stderr pipe, often at the
 * same instant (a cancelled call: "cancelled by the client" from the main
 * loop, "copy 1 of 1: cancelled" from the worker). Each line must reach
 * the pipe whole, never mixed with another process's: four processes warn
 * 400 lines each at once, and every line read back is one of theirs,
 * complete. A message longer than the line buffer still arrives complete.
 * Run by tests/lib.bats under the plain and the sanitizer build. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

#include "check.h"

enum { WRITERS = 4, LINES = 400 };

/* Is s (n bytes, no newline) "warn_test: writer W line L: " + 40 'W'+'a'? */
static bool line_whole(const char *s, size_t n)
{
	unsigned w, l;
	int at = 0;
	if (n >= 256)
		return false;
	char t[256];
	memcpy(t, s, n);
	t[n] = '\0';
	if (sscanf(t, "warn_test: writer %u line %u: %n", &w, &l, &at) != 2 || at == 0 ||
	    w >= WRITERS || l >= LINES || n - (size_t)at != 40)
		return false;
	for (size_t i = (size_t)at; i < n; i++)
		if (t[i] != (char)('a' + w))
			return false;
	return true;
}

static void concurrent_lines_whole(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t kids[WRITERS];
	for (unsigned w = 0; w < WRITERS; w++) {
		kids[w] = fork();
		if (kids[w] == 0) {
			close(p[0]);
			dup2(p[1], 2);
			char tail[41];
			memset(tail, 'a' + (int)w, 40);
			tail[40] = '\0';
			for (unsigned l = 0; l < LINES; l++)
				gl_warn("writer %u line %u: %s", w, l, tail);
			_exit(0);
		}
	}
	close(p[1]);
	size_t cap = (size_t)WRITERS * LINES * 128, len = 0;
	char *all = gl_xmalloc(cap);
	ssize_t r;
	while ((r = read(p[0], all + len, cap - len)) > 0)
		len += (size_t)r;
	close(p[0]);
	for (unsigned w = 0; w < WRITERS; w++)
		waitpid(kids[w], NULL, 0);
	size_t lines = 0, whole = 0;
	for (size_t i = 0; i < len;) {
		char *nl = memchr(all + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (all + i)) : len - i;
		lines++;
		whole += line_whole(all + i, n);
		i += n + 1;
	}
	CHECK(lines == WRITERS * LINES, "%zu lines, want %d", lines, WRITERS * LINES);
	CHECK(whole == lines, "%zu of %zu lines mixed with another writer's", lines - whole, lines);
	free(all);
}

/* A message past the line buffer, with errno's text: complete, one line. */
static void long_line_complete(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t k = fork();
	if (k == 0) {
		close(p[0]);
		dup2(p[1], 2);
		char big[5001];
		memset(big, 'x', 5000);
		big[5000] = '\0';
		errno = ENOENT;
		gl_warn_errno("long %s", big);
		_exit(0);
	}
	close(p[1]);
	char buf[8192];
	size_t len = 0;
	ssize_t r;
	while ((r = read(p[0], buf + len, sizeof buf - len)) > 0)
		len += (size_t)r;
	close(p[0]);
	waitpid(k, NULL, 0);
	const char *want_end = ": No such file or directory\n";
	CHECK(len == strlen("warn_test: long ") + 5000 + strlen(want_end), "%zu bytes", len);
	CHECK(len > 16 && !memcmp(buf, "warn_test: long x", 17));
	CHECK(len >= strlen(want_end) &&
	      !memcmp(buf + len - strlen(want_end), want_end, strlen(want_end)));
}

int main(void)
{
	gl_prog = "warn_test";
	concurrent_lines_whole();
	long_line_complete();
	return check_done();
}
