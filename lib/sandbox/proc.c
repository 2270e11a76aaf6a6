/* proc.c — G1–G3 and the copy check through /proc; see proc.h. */
#define _GNU_SOURCE
#include "sandbox/proc.h"

#include "sandbox/live.h"
#include "sandbox/proc_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"


uint64_t gl_proc_socket_ino(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return 0;
	return (uint64_t)st.st_ino;
}

int gl_proc_tasks(pid_t pid, long *tids, int cap, int max, const char *check, struct gl_fail *f)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	autoclosedir DIR *d = opendir(path);
	if (!d)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read %s", check, path);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n <= max) {
		if (e->d_name[0] == '.')
			continue;
		long tid = strtol(e->d_name, NULL, 10);
		if (tid <= 0)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: unreadable thread list", check);
		if (n < cap)
			tids[n] = tid;
		n++;
	}
	return n;
}

/* G1: one thread. */
int gl_proc_check_one_thread(pid_t pid, const char *what, struct gl_fail *f)
{
	int n = gl_proc_tasks(pid, NULL, 0, GL_PROC_MAX_FDS, "G1", f);
	if (n < 0)
		return -1;
	if (n != 1)
		return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: the %s has %d threads", what, n);
	return 0;
}

/* Each entry of /proc/P/task/P/children that is alive and not allow:
 * refused. A zombie holds no memory and no descriptor, so it is not
 * counted (a copy the broker has killed stays one until its init reaps it). */
/* gl-run --jobs: may this live child of a germline's init be passed? Only
 * a copy in the shared table (lib/sandbox/live.h: its pid and its start
 * time), never any other process. GL_TESTING's GL_TEST_LIVE_LOOSE=1 is
 * the loose rule an attacker wants (tests/jobs.bats): any child, once
 * some copy is live. */
static bool live_copy(pid_t child)
{
#ifdef GL_TESTING
	const char *loose = getenv("GL_TEST_LIVE_LOOSE");
	if (loose && !strcmp(loose, "1") && gl_live_on())
		return true;
#endif
	return gl_live_known(child);
}

/* child of parent: 1 gone, reaped or a zombie, 0 alive, -1 unreadable. */
static int child_gone(long child, pid_t parent)
{
	char sp[64];
	snprintf(sp, sizeof sp, "/proc/%ld/stat", child);
	autofree char *st = NULL;
	if (read_small(sp, &st, 4096) < 0)
		return 1; /* already reaped: gone */
	/* "pid (comm) S ppid ...": comm may hold anything, so from the last ')'. */
	char *rp = strrchr(st, ')');
	char state = 0;
	long ppid = 0;
	if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2)
		return -1;
	if (ppid != parent)
		return 1; /* reaped, and the number reused by another process */
	if (state != 'Z' && state != 'X')
		return 0;
	/* A zombie leader whose other threads still run shows Z too (its
	 * leader called pthread_exit): a zombie is one task, the leader. */
	char tp[64];
	snprintf(tp, sizeof tp, "/proc/%ld/task", child);
	DIR *d = opendir(tp);
	if (!d)
		return 1; /* gone meanwhile */
	int tasks = 0;
	for (struct dirent *e; (e = readdir(d));)
		tasks += e->d_name[0] != '.';
	closedir(d);
	return tasks <= 1;
}

/* gl-run --jobs: a live child of the init that is not in the table may be
 * a copy of another call in its last moments (killed, awaited by its
 * worker, not yet a zombie in /proc): it is given up to 100 ms to become
 * one, or to be found in the table. A process that stays alive and
 * unknown is refused as before. */
static bool settles(long child, pid_t parent)
{
	if (!gl_live_on())
		return false;
	for (int i = 0; i < 20; i++) {
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
		int g = child_gone(child, parent);
		if (g != 0)
			return g > 0;
		if (live_copy((pid_t)child))
			return true;
	}
	return false;
}

int gl_proc_check_children(pid_t pid, pid_t tid, pid_t allow, bool copies, const char *what,
			   struct gl_fail *f)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)tid);
	autofree char *buf = NULL;
	if (read_small(path, &buf, 64 * 1024) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "G1: cannot read %s", path);
	char *save = NULL;
	int n = 0;
	for (char *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
		if (++n > GL_PROC_MAX_FDS)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: the %s has too many children",
				       what);
		char *end;
		long child = strtol(t, &end, 10);
		if (*end || child <= 0)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: unreadable children list");
		if (child == (long)allow)
			continue;
		int g = child_gone(child, pid);
		if (g < 0)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: unreadable /proc/%ld/stat",
				       child);
		if (g == 0 && !(copies && (live_copy((pid_t)child) || settles(child, pid))))
			return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: %s (pid %ld)", what, child);
	}
	return 0;
}

pid_t gl_proc_first_child(pid_t pid)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	autofree char *buf = NULL;
	if (read_small(path, &buf, 64 * 1024) < 0)
		return -1;
	char *end;
	long child = strtol(buf, &end, 10);
	return child > 0 && child <= INT32_MAX && (*end == ' ' || *end == '\n' || !*end) ? (pid_t)child
											  : -1;
}

/* G1, no code between fork requests (SPEC §10): every signal that can be
 * blocked is blocked in the germline, so no handler — a C one installed
 * through ctypes included — and no timer's signal can run its code while
 * it waits or while a copy runs (hosts/common/fork_server.c blocks them
 * before it reports ready). */
int gl_proc_sig_mask(pid_t pid, const char *field, unsigned long long *mask, const char *check,
		     struct gl_fail *f)
{
	char path[64], key[16];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	autofree char *status = NULL;
	if (read_small(path, &status, 64 * 1024) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read %s", check, path);
	int k = snprintf(key, sizeof key, "\n%s:", field);
	const char *p = strstr(status, key);
	if (!p || sscanf(p + k, " %llx", mask) != 1)
		return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: unreadable %s", check, path);
	return 0;
}

int gl_proc_check_signals(pid_t pid, const char *check, struct gl_fail *f)
{
	unsigned long long blk;
	if (gl_proc_sig_mask(pid, "SigBlk", &blk, check, f) < 0)
		return -1;
	const unsigned long long unblockable = (1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1));
	unsigned long long open_ = ~(blk | unblockable);
	if (open_)
		return gl_fail(f, GL_E_GERMLINE_CHECK,
			       "%s: signal %d is not blocked: code could run in the germline "
			       "between fork requests",
			       check, __builtin_ctzll(open_) + 1);
	return 0;
}

int gl_proc_check_quiet(pid_t germline, struct gl_fail *f)
{
	if (gl_proc_check_signals(germline, "G1", f) == 0)
		return 0;
	f->code = GL_E_GERMLINE;
	return -1;
}

/* G3: no shared mapping that is, or may become, writable. maps shows the
 * current protection only; a read-only shared mapping of a file opened for
 * writing can be mprotect()ed back to writable, which smaps shows as the
 * VmFlags "sh" and "mw". smaps is read only when maps has a shared line. */
int gl_proc_check_maps(pid_t pid, const char *check, struct gl_fail *f)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	autofree char *maps = NULL;
	size_t len;
	if (gl_read_file_capped(path, GL_PROC_MAX_MAPS, &maps, &len) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read %s", check, path);
	int any_shared = 0;
	for (char *line = maps; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char range[64] = "", perms[8] = "";
		if (sscanf(line, "%63s %7s", range, perms) != 2 || strlen(perms) != 4)
			return gl_fail(f, GL_E_GERMLINE_CHECK, "%s: unreadable line in %s", check,
				       path);
		if (perms[3] == 's') {
			if (perms[1] == 'w')
				return gl_fail(f, GL_E_GERMLINE_CHECK,
					       "%s: shared writable mapping %s", check, range);
			any_shared = 1;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!any_shared)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	autofree char *smaps = NULL;
	if (gl_read_file_capped(path, GL_PROC_MAX_MAPS, &smaps, &len) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE_CHECK, "%s: cannot read %s", check, path);
	char range[64] = "";
	for (char *line = smaps; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(line, "VmFlags:", 8)) {
			char flags[256];
			snprintf(flags, sizeof flags, "%s ", line + 8);
			if (strstr(flags, " sh ") && strstr(flags, " mw "))
				return gl_fail(f, GL_E_GERMLINE_CHECK,
					       "%s: shared mapping %s may become writable", check,
					       range);
		} else if (strchr("0123456789abcdef", line[0]) && line[0]) {
			sscanf(line, "%63s", range); /* a mapping's header line */
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

int gl_proc_check_germline(pid_t init, pid_t pid, uint64_t ctl_ino, struct gl_fail *f)
{
	if (pid <= 0)
		return gl_fail(f, GL_E_GERMLINE_CHECK, "G1: the germline has exited");
	if (gl_proc_check_one_thread(pid, "germline", f) < 0 ||
	    gl_proc_check_children(pid, pid, 0, false, "the germline has a live child process", f) < 0)
		return -1;
	/* Its PID namespace holds the init, the germline, and nothing else
	 * alive: a process the release double-forked is re-parented to the
	 * init, not away from G1's sight (SPEC §10). */
	if (init != pid && (gl_proc_check_one_thread(init, "germline's init", f) < 0 ||
			    gl_proc_check_children(init, init, pid, true,
					      "a process other than the germline lives in its PID "
					      "namespace",
					      f) < 0))
		return -1;
	if (gl_proc_check_signals(pid, "G1", f) < 0 || gl_proc_fds_check(pid, ctl_ino, "G2", f) < 0 ||
	    gl_proc_check_maps(pid, "G3", f) < 0)
		return -1;
	return 0;
}

/* ---- the copy check ------------------------------------------------------ */

static int ns_of(pid_t pid, const char *ns, char out[64])
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns);
	ssize_t n = readlink(path, out, 63);
	if (n < 0)
		return -1;
	out[n] = 0;
	return 0;
}

/* The value of "Key:" in a /proc/P/status text, or NULL. */
static const char *status_field(const char *status, const char *key, char out[64])
{
	size_t kl = strlen(key);
	for (const char *l = status; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, key, kl) && l[kl] == ':') {
			const char *v = l + kl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t n = strcspn(v, "\n");
			if (n > 63)
				n = 63;
			memcpy(out, v, n);
			out[n] = 0;
			return out;
		}
	}
	return NULL;
}

/* Are fd a of process A and fd b of process B one open file description?
 * 1 yes, 0 no, -1 with errno (kcmp unavailable: the caller refuses). */
int gl_proc_same_file(pid_t a, int fa, pid_t b, int fb)
{
	long r = syscall(SYS_kcmp, a, b, 0 /* KCMP_FILE */, (unsigned long)fa, (unsigned long)fb);
	if (r < 0)
		return errno == EBADF ? 0 : -1;
	return r == 0;
}

/* gl_proc_check_copy's checks, the words in *f (check_fds and check_maps
 * fill GL_E_GERMLINE_CHECK: the caller re-codes). */
/* Are all four ids of status field name ("Uid", "Gid") equal to want? */
static bool ids_are(const char *status, const char *name, long want)
{
	char key[8];
	snprintf(key, sizeof key, "\n%s:", name);
	const char *l = strstr(status, key);
	long id[4];
	if (!l || sscanf(l + strlen(key), "%ld %ld %ld %ld", &id[0], &id[1], &id[2], &id[3]) != 4)
		return false;
	return id[0] == want && id[1] == want && id[2] == want && id[3] == want;
}

int gl_proc_copy_checks(pid_t copy, pid_t germline, pid_t init, uint64_t chan_ino, long uid,
			long gid, bool runtime, struct gl_fail *f)
{
	/* Its 0-2 are its own /dev/null, not open file descriptions shared
	 * with the germline (their flags and owner would be a channel). */
	for (int i = 0; i <= 2; i++)
		for (int j = 0; j <= 2; j++) {
			int r = gl_proc_same_file(copy, i, germline, j);
			if (r < 0)
				return gl_fail_errno(f, GL_E_GERMLINE,
						     "copy: cannot compare its descriptors (kcmp)");
			if (r)
				return gl_fail(f, GL_E_GERMLINE,
					       "copy: fd %d is the germline's fd %d (a shared open file)",
					       i, j);
		}
	static const char *const fresh[] = {"pid", "net", "ipc"};
	for (size_t i = 0; i < 3; i++) {
		char a[64], b[64];
		if (ns_of(copy, fresh[i], a) < 0 || ns_of(germline, fresh[i], b) < 0)
			return gl_fail_errno(f, GL_E_GERMLINE, "copy: cannot read its %s namespace",
					     fresh[i]);
		if (!strcmp(a, b))
			return gl_fail(f, GL_E_GERMLINE, "copy: shares the germline's %s namespace",
				       fresh[i]);
	}
	char a[64], b[64];
	if (ns_of(copy, "user", a) < 0 || ns_of(germline, "user", b) < 0 || strcmp(a, b))
		return gl_fail(f, GL_E_GERMLINE, "copy: not in the germline's user namespace");

	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)copy);
	autofree char *status = NULL;
	if (read_small(path, &status, 64 * 1024) < 0)
		return gl_fail_errno(f, GL_E_GERMLINE, "copy: cannot read %s", path);
	char v[64];
	/* The init's child, not the germline's (CLONE_PARENT): the germline
	 * never reaps a copy, so neither its exit status nor its resource use
	 * reaches germline memory that later copies inherit (SPEC §10). */
	const char *ppid = status_field(status, "PPid", v);
	if (init != germline && (!ppid || atol(ppid) != (long)init))
		return gl_fail(f, GL_E_GERMLINE, "copy: its parent is not the germline's init");
	/* its lane's host uid: no per-user counter shared (lib/sandbox/uids.h) */
	if (uid >= 0 && (!ids_are(status, "Uid", uid) || !ids_are(status, "Gid", gid)))
		return gl_fail(f, GL_E_GERMLINE, "copy: not running as its own host uid %ld, gid %ld",
			       uid, gid);
	const char *nnp = status_field(status, "NoNewPrivs", v);
	if (!nnp || strcmp(nnp, "1"))
		return gl_fail(f, GL_E_GERMLINE, "copy: no_new_privs is not set");
	const char *mode = status_field(status, "Seccomp", v);
	if (!mode || strcmp(mode, "2"))
		return gl_fail(f, GL_E_GERMLINE, "copy: no seccomp filter");
	const char *nf = status_field(status, "Seccomp_filters", v);
	if (!nf || atoi(nf) < 2)
		return gl_fail(f, GL_E_GERMLINE, "copy: the copy's own seccomp filter is missing");
	static const char *const caps[] = {"CapEff", "CapPrm", "CapInh", "CapAmb"};
	for (size_t i = 0; i < 4; i++) {
		const char *c = status_field(status, caps[i], v);
		if (!c || strspn(c, "0") != strlen(c))
			return gl_fail(f, GL_E_GERMLINE, "copy: holds capabilities (%s)", caps[i]);
	}
	if (gl_proc_fds_check_mode(copy, chan_ino, runtime ? GL_FDS_RUNTIME : 0, "copy", f) < 0 ||
	    gl_proc_check_maps(copy, "copy", f) < 0)
		return -1;
	/* The channel must be there, on fd 3. */
	struct stat st;
	if (gl_proc_fd_stat(copy, 3, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    (uint64_t)st.st_ino != chan_ino)
		return gl_fail(f, GL_E_GERMLINE, "copy: fd 3 is not its channel");
	return 0;
}

int gl_proc_check_copy(pid_t copy, pid_t germline, pid_t init, uint64_t chan_ino, long uid,
		       long gid, struct gl_fail *f)
{
	if (gl_proc_copy_checks(copy, germline, init, chan_ino, uid, gid, false, f) == 0)
		return 0;
	f->code = GL_E_GERMLINE;
	return -1;
}

/* gl_proc_check_exec's checks, the words in *f (gl_proc_fd_check and check_maps
 * fill GL_E_GERMLINE_CHECK: the caller re-codes). */
static int exec_checks(pid_t copy, uint64_t chan_ino, uint64_t listen_ino, size_t nstream,
		       struct gl_fail *f)
{
	static const char *const fresh[] = {"pid", "net", "ipc", "mnt", "user"};
	for (size_t i = 0; i < 5; i++) {
		char a[64], b[64];
		if (ns_of(copy, fresh[i], a) < 0 || ns_of(getpid(), fresh[i], b) < 0)
			return gl_fail_errno(f, GL_E_LAUNCH,
					     "exec copy: cannot read its %s namespace", fresh[i]);
		if (!strcmp(a, b))
			return gl_fail(f, GL_E_LAUNCH,
				       "exec copy: shares the broker's %s namespace", fresh[i]);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)copy);
	autofree char *status = NULL;
	if (read_small(path, &status, 64 * 1024) < 0)
		return gl_fail_errno(f, GL_E_LAUNCH, "exec copy: cannot read %s", path);
	char v[64];
	const char *nnp = status_field(status, "NoNewPrivs", v);
	if (!nnp || strcmp(nnp, "1"))
		return gl_fail(f, GL_E_LAUNCH, "exec copy: no_new_privs is not set");
	const char *mode = status_field(status, "Seccomp", v);
	if (!mode || strcmp(mode, "2"))
		return gl_fail(f, GL_E_LAUNCH, "exec copy: no seccomp filter");
	static const char *const caps[] = {"CapEff", "CapPrm", "CapInh", "CapAmb"};
	for (size_t i = 0; i < 4; i++) {
		const char *c = status_field(status, caps[i], v);
		if (!c || strspn(c, "0") != strlen(c))
			return gl_fail(f, GL_E_LAUNCH, "exec copy: holds capabilities (%s)",
				       caps[i]);
	}
	/* Descriptors: 0-2 /dev/null, 3 the channel, 4 and 6 the relay's
	 * listening sockets (HTTP, HTTPS), 5 the retained target (read-only),
	 * 10… the stream listeners, nothing else. */
	snprintf(path, sizeof path, "/proc/%d/fd", (int)copy);
	autoclosedir DIR *d = opendir(path);
	if (!d)
		return gl_fail_errno(f, GL_E_LAUNCH, "exec copy: cannot read %s", path);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		bool stream = fd >= 10 && (size_t)fd < 10 + nstream;
		if (*end || fd < 0 || fd > INT32_MAX || ++n > 7 + (int)nstream || (fd > 6 && !stream))
			return gl_fail(f, GL_E_LAUNCH,
				       "exec copy: descriptor %s is not one of its %zu",
				       fd > 6 ? e->d_name : "list", 7 + nstream);
		if (fd == 4 || fd == 6 || stream) {
			struct stat st;
			snprintf(path, sizeof path, "/proc/%d/fd/%ld", (int)copy, fd);
			if (stat(path, &st) < 0 || !S_ISSOCK(st.st_mode) ||
			    (fd == 4 && listen_ino && (uint64_t)st.st_ino != listen_ino))
				return gl_fail(f, GL_E_LAUNCH,
					       "exec copy: fd %ld is not its relay socket", fd);
		} else if (gl_proc_fd_check(copy, (int)fd, chan_ino, "exec copy", f) < 0) {
			return -1;
		}
	}
	if (gl_proc_check_maps(copy, "exec copy", f) < 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/fd/3", (int)copy);
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || (uint64_t)st.st_ino != chan_ino)
		return gl_fail(f, GL_E_LAUNCH, "exec copy: fd 3 is not its channel");
	return 0;
}

int gl_proc_check_exec(pid_t copy, uint64_t chan_ino, uint64_t listen_ino, size_t nstream,
		       struct gl_fail *f)
{
	if (exec_checks(copy, chan_ino, listen_ino, nstream, f) == 0)
		return 0;
	f->code = GL_E_LAUNCH;
	return -1;
}
