/* Unit tests of lib/sandbox/uids.c: the delegated range read from subid
 * files (the user's first entry, by name or number; malformed entries and
 * ranges that hold an account refused), and leases: a block is held by one
 * lease at a time, a released one comes back, none left is a refusal.
 * Run by tests/lib.bats under the plain and the sanitizer build. */
#define _GNU_SOURCE
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/uids.h"

#include "check.h"

static char dir[] = "/tmp/uids_test.XXXXXX";

/* A subid file in dir holding text; its path (static buffer per slot). */
static const char *file(int slot, const char *text)
{
	static char paths[4][128];
	snprintf(paths[slot], sizeof paths[slot], "%s/sub%d", dir, slot);
	FILE *f = fopen(paths[slot], "w");
	fputs(text, f);
	fclose(f);
	return paths[slot];
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	struct passwd *pw = getpwuid(geteuid());
	const char *me = pw ? pw->pw_name : "nobody-here";
	bool root = geteuid() == 0;
	char text[512];

	/* two blocks of a range far above any account, after lines of others */
	snprintf(text, sizeof text, "# a comment\nsomeone:100000:65536\n%s:3000000000:130\n"
				    "%s:3100000000:65536\n", me, me);
	const char *su = file(0, text);
	struct gl_uids u;
	struct gl_fail f = {0};
	CHECK(gl_uids_open(&u, su, su, &f) == 0, "%s", gl_fail_detail(&f));
	if (root)
		CHECK(u.on && u.ubase == 3000000000u && u.gbase == 3000000000u && u.count == 130,
		      "on %d base %lu count %lu why %s", u.on, (unsigned long)u.ubase, u.count,
		      u.why ? u.why : "");
	if (u.on) {
		struct gl_uid_lease a, b, c;
		CHECK(gl_uids_lease(&u, &a, &f) == 0 && a.fd >= 0, "%s", gl_fail_detail(&f));
		CHECK(gl_uids_lease(&u, &b, &f) == 0 && b.fd >= 0 && b.block != a.block);
		CHECK(gl_uids_lease(&u, &c, &f) < 0 && strstr(gl_fail_detail(&f), "every block"),
		      "%s", gl_fail_detail(&f));
		CHECK(a.uid == 3000000000u + a.block * GL_UIDS_BLOCK && a.gid == a.uid);
		unsigned freed = a.block;
		gl_uids_release(&a);
		CHECK(gl_uids_lease(&u, &c, &f) == 0 && c.block == freed, "%s", gl_fail_detail(&f));
		gl_uids_release(&b);
		gl_uids_release(&c);
		CHECK(gl_uids_copy_id(0) == 1 && gl_uids_copy_id(63) == 64 &&
		      gl_uids_copy_id(63) < GL_UIDS_BLOCK);
	}
	gl_uids_close(&u);
	gl_fail_clear(&f);

	/* no entry for the user: off, and why */
	const char *none = file(1, "someone:100000:65536\n");
	CHECK(gl_uids_open(&u, none, none, &f) == 0 && !u.on && u.why &&
	      strstr(u.why, "no range of host ids is delegated"));
	gl_uids_close(&u);
	CHECK(gl_uids_open(&u, "/nonexistent/subuid", "/nonexistent/subgid", &f) == 0 && !u.on);
	gl_uids_close(&u);

	/* malformed entries of the user: refused by name */
	static const char *const bad[] = {"abc:65536", "100:", "-5:65536", "4294967295:1", "100:0",
					  "4294967200:200"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(text, sizeof text, "%s:%s\n", me, bad[i]);
		const char *b = file(2, text);
		CHECK(gl_uids_open(&u, b, b, &f) < 0 && strstr(gl_fail_detail(&f), "NAME:START:COUNT"),
		      "accepted %s", text);
		gl_uids_close(&u);
		gl_fail_clear(&f);
	}
	/* a range that holds an account (root, uid 0): refused */
	snprintf(text, sizeof text, "%s:0:65536\n", me);
	const char *taken = file(3, text);
	CHECK(gl_uids_open(&u, taken, taken, &f) < 0 && strstr(gl_fail_detail(&f), "passwd"),
	      "%s", gl_fail_detail(&f));
	gl_uids_close(&u);
	gl_fail_clear(&f);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return check_done();
}
