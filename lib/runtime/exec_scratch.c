/* exec_scratch.c — an exec copy's scratch directory (its hosts file, its
 * relay's TLS files and state directory, under GL_HOME/scratch), its end (killed with its
 * descendants, reaped, scratch removed: Algorithm 1 line 27, A1), and the
 * exec runtime's seam (lib/runtime/runtime.h). See exec.h, docs/exec.md. */
#define _GNU_SOURCE
#include "runtime/exec_scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "release/manifest.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Write a new file path (mode) holding p[0..n). Scratch, gone with the
 * copy: no fsync. 0, or -1 with errno. */
static int write_new(const char *path, const char *p, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	int rc = fd < 0 || gl_write_all(fd, p, n) < 0 ? -1 : 0;
	if (fd >= 0)
		close(fd);
	return rc;
}

char *gl_exec_scratch_make(const struct gl_exec *x, const char *const *hosts, size_t nhost,
			   struct gl_fail *f)
{
	autofree char *base = gl_xasprintf("%s/scratch", x->home);
	if (gl_mkdir_p(base, 0700) < 0) {
		gl_fail(f, GL_E_LAUNCH, "exec copy: %s: %s", base, strerror(errno));
		return NULL;
	}
	char *dir = gl_xasprintf("%s/copy.XXXXXX", base);
	if (!mkdtemp(dir)) {
		gl_fail(f, GL_E_LAUNCH, "exec copy: scratch directory under %s: %s", base,
			strerror(errno));
		free(dir);
		return NULL;
	}
	struct gl_buf b = {0};
	gl_buf_adds(&b, "127.0.0.1\tlocalhost\n");
	for (size_t i = 0; i < nhost; i++) {
		gl_buf_adds(&b, "127.0.0.1\t");
		/* gl_dest_ok names: no whitespace; a stream destination's host
		 * without its port (its relay listens on that port) */
		const char *colon = gl_dest_port(hosts[i]) ? strrchr(hosts[i], ':') : NULL;
		gl_buf_add(&b, hosts[i], colon ? (size_t)(colon - hosts[i]) : strlen(hosts[i]));
		gl_buf_addc(&b, '\n');
	}
	autofree char *hp = gl_xasprintf("%s/hosts", dir);
	autofree char *sp = gl_xasprintf("%s/state", dir);
	autofree char *tp = gl_xasprintf("%s/tls", dir);
	autofree char *ca = gl_xasprintf("%s/tls/ca.pem", dir);
	autofree char *rp = gl_xasprintf("%s/tls/relay.pem", dir);
	int rc = write_new(hp, b.data, b.len, 0444);
	free(b.data);
	/* the relay's certificate and key, and the authority the copy trusts
	 * (exec_tls.h): the copy's own, read-only to it */
	if (rc == 0 && (mkdir(tp, 0700) < 0 ||
			write_new(ca, x->tls.ca_pem, strlen(x->tls.ca_pem), 0444) < 0 ||
			write_new(rp, x->tls.relay_pem, strlen(x->tls.relay_pem), 0400) < 0))
		rc = -1;
	if (rc < 0 || mkdir(sp, 0700) < 0) {
		gl_fail(f, GL_E_LAUNCH, "exec copy: %s: %s", dir, strerror(errno));
		gl_exec_scratch_remove(dir);
		return NULL;
	}
	return dir;
}

int gl_exec_copy_done(int pidfd, char *scratch)
{
	gl_copy_kill(pidfd);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	int r;
	while ((r = waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED)) < 0 && errno == EINTR)
		;
	gl_exec_scratch_remove(scratch);
	if (r < 0)
		return -1;
	/* as waitpid's status word */
	return si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8 : si.si_status & 0x7f;
}

/* Empty the directory fd, whatever the copy left in it: no symlink is
 * followed, and a tree of any depth is removed with two descriptors (the
 * entries of a non-empty subdirectory are moved up into fd, then it is
 * removed), within a bound on the work. */
static void remove_contents(int fd)
{
	unsigned long moved = 0;
	for (bool again = true; again && moved < 4000000;) {
		again = false;
		int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		if (!d) {
			if (dup_fd >= 0)
				close(dup_fd);
			return;
		}
		rewinddir(d);
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    unlinkat(fd, e->d_name, 0) == 0 || unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0)
				continue;
			int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
			if (!sd) {
				if (sub >= 0)
					close(sub);
				continue;
			}
			struct dirent *c;
			while ((c = readdir(sd)) && moved < 4000000) {
				if (!strcmp(c->d_name, ".") || !strcmp(c->d_name, ".."))
					continue;
				char up[40];
				do
					snprintf(up, sizeof up, ".gl-rm-%lu", moved++);
				while (renameat2(sub, c->d_name, fd, up, RENAME_NOREPLACE) < 0 &&
				       errno == EEXIST && moved < 4000000);
				again = true;
			}
			closedir(sd);
		}
		closedir(d);
	}
}

void gl_exec_scratch_remove(char *scratch)
{
	if (!scratch)
		return;
	autofree char *sp = gl_xasprintf("%s/state", scratch);
	autoclose int fd = open(sp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		remove_contents(fd); /* the workspace: any tree the copy made */
	rmdir(sp);
	static const char *const files[] = {"hosts", "tls/ca.pem", "tls/relay.pem"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		autofree char *p = gl_xasprintf("%s/%s", scratch, files[i]);
		unlink(p);
	}
	autofree char *tp = gl_xasprintf("%s/tls", scratch);
	rmdir(tp);
	if (rmdir(scratch) < 0 && errno != ENOENT)
		gl_warn("exec copy: cannot remove %s: %s", scratch, strerror(errno));
	free(scratch);
}

/* ---- the exec runtime's seam (lib/runtime/runtime.h) ------------------------ */

static struct gl_exec *exec_of(struct gl_runtime *rt)
{
	return (struct gl_exec *)((char *)rt - offsetof(struct gl_exec, rt));
}

/* Algorithm 1 line 8 has nothing to check: no process outlives a copy;
 * each copy is checked by gl_proc_check_exec after its launch. */
static int exec_check(struct gl_runtime *rt, struct gl_fail *f)
{
	(void)rt;
	(void)f;
	return 0;
}

static int exec_spawn(struct gl_runtime *rt, const struct gl_spawn *s, struct gl_copy *c,
		      struct gl_fail *f)
{
	return gl_exec_copy(exec_of(rt), s->items, s->nitem, s->hosts, s->nhost, s->chan,
			    &c->pidfd, &c->scratch, f);
}

static int exec_end(struct gl_runtime *rt, struct gl_copy *c)
{
	(void)rt;
	int ws = gl_exec_copy_done(c->pidfd, c->scratch);
	c->scratch = NULL;
	return ws;
}

static void exec_stop(struct gl_runtime *rt)
{
	gl_exec_close(exec_of(rt));
}

const struct gl_runtime_ops gl_exec_ops = {
    .name = "exec",
    .check = exec_check,
    .spawn = exec_spawn,
    .end = exec_end,
    .stop = exec_stop,
};
