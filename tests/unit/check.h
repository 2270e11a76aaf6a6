/* check.h — the unit tests' one assertion, reported as TAP (the Test Anything
 * Protocol, version 12). Each CHECK site (FILE:LINE) is one test point,
 * however often it runs (a loop's CHECK counts once, with how many times it
 * held): main ends with `return check_done();`, which prints "ok N -
 * FILE:LINE (K checks)" or "not ok N - FILE:LINE: COND (F of K failed)" per
 * site in the order first reached, then the plan "1..N", and returns 1 when a
 * check failed. A failed check does not stop the program: it prints a "# FAIL
 * FILE:LINE: COND" diagnostic at once, and "# MESSAGE" when a message was
 * given (its arguments are evaluated only then). A program that cannot run
 * here says so with check_skip_all() ("1..0 # SKIP why", exit 0).
 * tests/lib.bats runs every *_test program of tests/unit/ and requires a plan
 * with at least one point and no "not ok". Included once per test program.
 *
 *   CHECK(cond);                           // the condition's text is the report
 *   CHECK(cond, "got %d, want %d", a, b);  // and a printf message
 */
#ifndef GL_UNIT_CHECK_H
#define GL_UNIT_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHECK_SITES_MAX = 1024 };

static struct check_site {
	const char *file, *cond;
	int line;
	long n, failed;
} check_sites[CHECK_SITES_MAX];
static int check_nsites;
static int failures; /* failed checks so far (a test may print more on failure) */

__attribute__((unused)) static struct check_site *check_site_(const char *file, int line,
								const char *cond)
{
	static int last = -1;
	if (last >= 0 && check_sites[last].line == line &&
	    (check_sites[last].file == file || !strcmp(check_sites[last].file, file)))
		return &check_sites[last];
	for (int i = 0; i < check_nsites; i++)
		if (check_sites[i].line == line &&
		    (check_sites[i].file == file || !strcmp(check_sites[i].file, file)))
			return &check_sites[last = i];
	if (check_nsites == CHECK_SITES_MAX) {
		printf("Bail out! more than %d CHECK sites\n", CHECK_SITES_MAX);
		exit(2);
	}
	check_sites[check_nsites] = (struct check_site){.file = file, .line = line, .cond = cond};
	return &check_sites[last = check_nsites++];
}

/* Counts one check at its site; returns 1 when it failed (the caller then
 * prints its message). */
__attribute__((unused)) static int check_at_(int ok, const char *file, int line, const char *cond)
{
	struct check_site *s = check_site_(file, line, cond);
	s->n++;
	if (ok)
		return 0;
	s->failed++;
	failures++;
	printf("# FAIL %s:%d: %s\n", file, line, cond);
	return 1;
}

/* fmt is " " followed by the caller's message, or " " alone when none. */
__attribute__((format(printf, 1, 2), unused)) static void check_msg_(const char *fmt, ...)
{
	if (fmt[1]) {
		va_list ap;
		va_start(ap, fmt);
		fputs("#", stdout);
		vprintf(fmt, ap);
		fputc('\n', stdout);
		va_end(ap);
	}
	fflush(stdout);
}

/* The message is optional: " " __VA_ARGS__ pastes the caller's format string
 * behind a space (one literal), or is " " alone when there is none. */
#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (check_at_(!!(cond), __FILE__, __LINE__, #cond))       \
			check_msg_(" " __VA_ARGS__);                      \
	} while (0)

__attribute__((unused)) static int check_done(void)
{
	for (int i = 0; i < check_nsites; i++) {
		const struct check_site *s = &check_sites[i];
		if (s->failed)
			printf("not ok %d - %s:%d: %s (%ld of %ld failed)\n", i + 1, s->file, s->line,
			       s->cond, s->failed, s->n);
		else
			printf("ok %d - %s:%d (%ld check%s)\n", i + 1, s->file, s->line, s->n,
			       s->n == 1 ? "" : "s");
	}
	printf("1..%d\n", check_nsites);
	fflush(stdout);
	return failures != 0;
}

__attribute__((format(printf, 1, 2), unused)) static int check_skip_all(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("1..0 # SKIP ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
	return 0;
}

#endif
