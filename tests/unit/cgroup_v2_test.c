/* Unit test of lib/sandbox/cgroup.c's cgroup v2 end of a copy (issue 15;
 * docs/sandbox.md "Resource limits"): gl_cg_drain's cgroup.kill and
 * cgroup.procs handling, and gl_cg_close's removal, against a real cgroup2
 * hierarchy. This machine's cgroup2 is the hybrid /sys/fs/cgroup/unified,
 * without controllers (memory.max and pids.max are not there: the limits
 * themselves are not tested here), but cgroup.kill and cgroup.procs are
 * (Linux >= 5.14). Prints "skip: …" and exits 0 where there is no
 * writable cgroup2 mount (not root, no hybrid mount). Run by
 * tests/limits.bats. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cgroup.h"
#include "core/util.h"

#include "check.h"

#define CGROUP2_SUPER_MAGIC_ 0x63677270
#define KIDS 3

/* Tasks listed in dir/cgroup.procs, or -1. */
static int nprocs(const char *dir)
{
	char p[512];
	snprintf(p, sizeof p, "%s/cgroup.procs", dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int n = 0;
	long pid;
	while (fscanf(f, "%ld", &pid) == 1)
		n++;
	fclose(f);
	return n;
}

/* A child in dir that starts KIDS grandchildren of its own, all waiting. */
static pid_t start_tree(const char *dir)
{
	int go[2], ready[2];
	if (pipe(go) < 0 || pipe(ready) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < KIDS; i++)
			if (fork() == 0)
				for (;;)
					pause();
		(void)!write(ready[1], "r", 1);
		for (;;)
			pause();
	}
	char p[512], b[24];
	snprintf(p, sizeof p, "%s/cgroup.procs", dir);
	snprintf(b, sizeof b, "%ld", (long)pid);
	CHECK(gl_write_file_str(p, b) == 0, "move into %s: %s", dir, strerror(errno));
	char c;
	CHECK(write(go[1], "g", 1) == 1 && read(ready[0], &c, 1) == 1, "the tree did not start");
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	return pid;
}

int main(void)
{
	static const char root[] = "/sys/fs/cgroup/unified";
	struct statfs sf;
	if (statfs(root, &sf) < 0 || (long)sf.f_type != CGROUP2_SUPER_MAGIC_) {
		return check_skip_all("%s is not a cgroup2 mount", root);
	}
	char *base = gl_xasprintf("%s/gl-unit-%ld", root, (long)getpid());
	char *slot = gl_xasprintf("%s/c0", base);
	if (mkdir(base, 0755) < 0 || mkdir(slot, 0755) < 0) {
		check_skip_all("cannot make %s: %s", slot, strerror(errno));
		rmdir(base);
		return 0;
	}
	char kill_file[600];
	snprintf(kill_file, sizeof kill_file, "%s/cgroup.kill", slot);
	if (access(kill_file, W_OK) < 0) {
		check_skip_all("no %s (Linux < 5.14)", kill_file);
		rmdir(slot);
		rmdir(base);
		return 0;
	}
	pid_t tree = start_tree(slot);
	/* without the drain the tree lives on in its group */
	CHECK(nprocs(slot) == KIDS + 1, "%d tasks in the slot, not %d", nprocs(slot), KIDS + 1);
	struct gl_cg cg = {.kind = GL_CG_V2, .mem_base = gl_xstrdup(base)};
	struct gl_cg_copy cc = {.slot = 0, .pid = tree};
	gl_cg_drain(&cg, &cc);
	int st = 0;
	CHECK(waitpid(tree, &st, 0) == tree && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "the copy was not killed (status %#x)", st);
	CHECK(nprocs(slot) == 0, "%d tasks left after the drain", nprocs(slot));
	CHECK(cc.slot == -1, "the slot is still held");
	/* a second tree, left for gl_cg_close: it ends it and removes the base */
	pid_t t2 = start_tree(slot);
	CHECK(nprocs(slot) == KIDS + 1, "second tree: %d tasks", nprocs(slot));
	gl_cg_close(&cg);
	CHECK(waitpid(t2, &st, 0) == t2 && WIFSIGNALED(st), "gl_cg_close left the copy alive");
	struct stat sb;
	CHECK(stat(base, &sb) < 0 && errno == ENOENT, "%s is left", base);
	if (stat(base, &sb) == 0) { /* leave the host clean even on failure */
		rmdir(slot);
		rmdir(base);
	}
	free(slot);
	free(base);
	return check_done();
}
