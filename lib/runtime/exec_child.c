/* exec_child.c — the launch child of a runtime "exec" copy: PID 1 of the
 * copy's fresh namespaces between clone3 and execveat of the retained
 * gl-exec-host (SPEC §9, §10; seed 002; docs/exec.md "One copy"). It only
 * makes syscalls (everything is prepared by lib/runtime/exec_launch.c before the clone),
 * installs every restriction before the exec, and reports a failed step
 * on the close-on-exec status pipe. See exec_child.h. */
#define _GNU_SOURCE
#include "runtime/exec_child.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/exec.h"
#include "release/bounds.h"
#include "release/manifest.h"
#include "json/msg.h"
#include "sandbox/counters.h"
#include "sandbox/root.h"
#include "sandbox/sandbox.h"
#include "sandbox/scratch.h"
#include "core/util.h"

enum exec_step {
	XS_OK = 0, XS_USERNS, XS_MOUNT, XS_WS_TMPFS, XS_WS_MKDIR, XS_WS_BIND, XS_LOOPBACK,
	XS_RELAY, XS_DESCRIPTORS, XS_PDEATHSIG, XS_LANDLOCK, XS_NO_NEW_PRIVS, XS_SECCOMP, XS_EXEC,
	XS_ROOT, XS_COUNTERS,
};
static const char *const step_name[] = {
    "ok", "userns", "mount", "workspace tmpfs on /run", ("workspace directory " GL_WORKSPACE_DIR),
    "workspace bind mount", "loopback", "relay socket", "descriptors", "pdeathsig",
    "landlock", "no_new_privs", "seccomp", "exec", "minimal root",
    "rlimits"};
/* What a failed step leaves missing, as a bootstrap_failed receipt names it
 * (lib/runtime/receipt.h gl_receipt_missing's names where they exist). */
static const char *const step_missing[] = {
    "ok", "user_namespace", "mount_namespace", "workspace", "workspace", "workspace", "loopback",
    "relay", "descriptors", "pdeathsig", "landlock", "no_new_privs", "seccomp", "exec",
    "minimal_root", "rlimits"};


struct status_msg {
	int32_t step, err;
};

GL_NORETURN static void child_fail(int sfd, enum exec_step step)
{
	struct status_msg m = {(int32_t)step, errno};
	ssize_t r;
	do
		r = write(sfd, &m, sizeof m);
	while (r < 0 && errno == EINTR);
	_exit(127);
}

/* The workspace (docs/exec.md "File state through slots"): a fresh tmpfs
 * on /run (the host's /run is hidden), GL_WORKSPACE_DIR created on it and
 * the copy's scratch state/ bound there, then /run read-only. Landlock
 * gives the copy all rights but execute beneath state/'s inode only. */
static void mount_workspace(int sfd, const char *state)
{
	if (mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") < 0)
		child_fail(sfd, XS_WS_TMPFS);
	if (mkdir("/run/germline", 0755) < 0 || mkdir(GL_WORKSPACE_DIR, 0700) < 0)
		child_fail(sfd, XS_WS_MKDIR);
	if (mount(state, GL_WORKSPACE_DIR, NULL, MS_BIND, NULL) < 0)
		child_fail(sfd, XS_WS_BIND);
	if (mount(NULL, "/run", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k") < 0)
		child_fail(sfd, XS_WS_TMPFS);
}

/* The copy's user namespace: its uid and gid maps. */
static void child_userns(const struct gl_exec_prep *p, int sfd)
{
	/* A broker holding the host key (gl-run --host-key) is not dumpable,
	 * which makes /proc/self/{setgroups,uid_map} root's and unwritable for
	 * an unprivileged broker. This child holds no secret (the key's pages
	 * are MADV_WIPEONFORK: lib/runtime/receipt.c) and execs next, as
	 * lib/runtime/germline.c's launch child. */
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (gl_write_file_str("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		child_fail(sfd, XS_USERNS);
	if (gl_write_file_str("/proc/self/uid_map", p->uid_map) < 0 ||
	    gl_write_file_str("/proc/self/gid_map", p->gid_map) < 0)
		child_fail(sfd, XS_USERNS);
}

/* Mount namespace: nothing propagates back; the declared hosts resolve
 * to the relay (the copy's own /etc/hosts, read-only). With the
 * minimal root (lib/sandbox/root.h) the hosts file and the workspace are two of
 * its binds, and nothing else of the host is there. */
static void child_mounts(const struct gl_exec_prep *p, int sfd)
{
	if (p->root) {
		int bad;
		if (gl_root_enter(p->root, "/tmp", &bad) != GL_ROOT_OK)
			child_fail(sfd, XS_ROOT);
		/* its tmpfs /tmp and workspace, each bounded (lib/sandbox/scratch.h) */
		if (p->scratch_abi > 0 && p->ruleset >= 0 &&
		    (gl_scratch_allow(p->ruleset, p->scratch_abi, GL_SCRATCH_DIR) < 0 ||
		     (p->state[0] && gl_scratch_allow(p->ruleset, p->scratch_abi, GL_WORKSPACE_DIR) < 0)))
			child_fail(sfd, XS_LANDLOCK);
	} else {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(p->hosts, "/etc/hosts", NULL, MS_BIND, NULL) < 0 ||
		    mount(NULL, "/etc/hosts", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
			child_fail(sfd, XS_MOUNT);
		if (p->state[0])
			mount_workspace(sfd, p->state);
	}
}

/* A listening socket on 127.0.0.1:port. */
static int child_listen(int sfd, int port)
{
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 16) < 0)
		child_fail(sfd, XS_RELAY);
	return lfd;
}

/* The network namespace holds only lo, brought up for the relay, whose
 * listening sockets are set: HTTP on port 80 (*lfd), HTTPS on 443 (*tfd),
 * and one per stream destination's port (sl). */
static void child_relay(const struct gl_exec_prep *p, int sfd, int *lfd, int *tfd, int *sl)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	ifr.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
	if (s < 0 || ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		child_fail(sfd, XS_LOOPBACK);
	close(s);
	*lfd = child_listen(sfd, GL_EXEC_RELAY_PORT);
	*tfd = child_listen(sfd, GL_EXEC_RELAY_TLS_PORT);
	for (size_t i = 0; i < p->nstream; i++)
		sl[i] = child_listen(sfd, p->stream_port[i]);
}

/* Descriptors: /dev/null on 0-2, the channel on 3, the relay on 4, the
 * target on 5, the TLS relay on 6 (kept across the host's exec), the host
 * on 7, the status pipe on 8 and the ruleset on 9 (close-on-exec), the
 * stream listeners from GL_EXEC_STREAM_FD on (kept); nothing else. The
 * status pipe's new number (8) is returned. */
static int child_descriptors(const struct gl_exec_prep *p, int lfd, int tfd, const int *sl,
			     int sfd)
{
	/* the stream listeners first, above everything the dups below write
	 * (20+ and 0-9), so none is overwritten; kept across the exec */
	int hi[GL_STREAM_DESTS_MAX];
	for (size_t i = 0; i < p->nstream; i++)
		if ((hi[i] = fcntl(sl[i], F_DUPFD, 64)) < 0)
			child_fail(sfd, XS_DESCRIPTORS);
	int keep[8] = {p->devnull, p->chan, lfd, p->target, tfd, p->host, p->status_w, p->ruleset};
	for (int i = 0; i < 8; i++) {
		if (keep[i] < 0)
			continue;
		keep[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, 20);
		if (keep[i] < 0)
			child_fail(sfd, XS_DESCRIPTORS);
		if (i == 6)
			sfd = keep[6];
	}
	if (dup2(keep[0], 0) < 0 || dup2(keep[0], 1) < 0 || dup2(keep[0], 2) < 0 ||
	    dup2(keep[1], 3) < 0 || dup2(keep[2], 4) < 0 || dup2(keep[3], 5) < 0 ||
	    dup2(keep[4], 6) < 0 || dup3(keep[5], 7, O_CLOEXEC) < 0 ||
	    dup3(keep[6], 8, O_CLOEXEC) < 0)
		child_fail(sfd, XS_DESCRIPTORS);
	sfd = 8;
	if (keep[7] >= 0 && dup3(keep[7], 9, O_CLOEXEC) < 0)
		child_fail(sfd, XS_DESCRIPTORS);
	for (size_t i = 0; i < p->nstream; i++)
		if (dup2(hi[i], GL_EXEC_STREAM_FD + (int)i) < 0)
			child_fail(sfd, XS_DESCRIPTORS);
	if (syscall(SYS_close_range, (unsigned)GL_EXEC_STREAM_FD + (unsigned)p->nstream, ~0u, 0u) < 0)
		child_fail(sfd, XS_DESCRIPTORS);
	return sfd;
}

/* The confinement steps in their order, each failing closed on the status
 * pipe (SPEC §9): user namespace, mounts, loopback and relay, descriptors,
 * then the lines below up to the exec. */
GL_NORETURN void gl_exec_child(const struct gl_exec_prep *p)
{
	int sfd = p->status_w;
	child_userns(p, sfd);
	child_mounts(p, sfd);
	int lfd, tfd, sl[GL_STREAM_DESTS_MAX];
	child_relay(p, sfd, &lfd, &tfd, sl);
	sfd = child_descriptors(p, lfd, tfd, sl, sfd);
	if (chdir(p->release_dir) < 0)
		child_fail(sfd, XS_DESCRIPTORS);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(sfd, XS_PDEATHSIG);
	/* A broker gone before this line closed the channel's other end: the
	 * host reads EOF on fd 3 and exits. */
	if (p->ruleset >= 0) {
		if (gl_landlock_restrict(9) < 0)
			child_fail(sfd, XS_LANDLOCK);
		close(9);
	}
	if (!p->unconfined && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(sfd, XS_NO_NEW_PRIVS);
	/* the per-user counters' bounds (lib/sandbox/counters.h), inherited by
	 * the target at exec */
	if (!p->unconfined && !gl_counters_off() && gl_counters_bound(0) < 0)
		child_fail(sfd, XS_COUNTERS);
	if (!p->unconfined && !(p->off & GL_OFF_SECCOMP) && gl_seccomp_install(p->bpf) < 0)
		child_fail(sfd, XS_SECCOMP);
	/* The retained descriptor, never the path (SPEC §9). */
	syscall(SYS_execveat, 7, "", p->argv, p->envp, AT_EMPTY_PATH);
	child_fail(sfd, XS_EXEC);
}

int gl_exec_child_status(int fd, int64_t deadline, const char **missing, struct gl_fail *f)
{
	struct status_msg m;
	size_t got = 0;
	while (got < sizeof m) {
		int ms = (int)((deadline - gl_mono_ns()) / 1000000);
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int r = poll(&pf, 1, ms < 0 ? 0 : ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*missing = "exec";
			return gl_fail(f, GL_E_BOOTSTRAP_FAILED,
				       "exec copy: no exec observed within the time limit");
		}
		ssize_t n = read(fd, (char *)&m + got, sizeof m - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got == 0)
		return 0;
	*missing = "exec";
	if (got != sizeof m || m.step <= XS_OK || m.step > XS_COUNTERS)
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED,
			       "exec copy: malformed status from the launch child");
	*missing = step_missing[m.step];
	const char *hint = m.step == XS_USERNS ? " (user namespaces disabled or exhausted)"
			   : m.step == XS_LANDLOCK ? " (Landlock unavailable)"
			   : m.step == XS_RELAY && m.err == EACCES ? " (ports 80 and 443 need the copy's own user namespace)"
							       : "";
	return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "exec copy: launch failed at %s: %s%s",
		       step_name[m.step], strerror(m.err), hint);
}

/* ---- before the clone ---------------------------------------------------- */

/* An exec copy's minimal root (lib/sandbox/root.h; docs/sandbox.md "The germline
 * contained"): the Landlock allowlist bound read-only, the copy's hosts
 * file on /etc/hosts, its relay's TLS files on GL_EXEC_TLS_DIR, its workspace writable on GL_WORKSPACE_DIR, and the
 * files and directories of its view, each the inode the broker read. */
int gl_exec_root(const struct gl_exec *x, struct gl_root *r, const char *hosts, const char *tls,
		 const char *state, const struct gl_exec_item *items, size_t nitem,
		 struct gl_fail *f)
{
	if (gl_root_add_system(r, f) < 0)
		return -1;
	for (size_t i = 0; i < x->npaths; i++) {
		bool dev = !strcmp(x->paths[i], "/dev/null") || !strcmp(x->paths[i], "/dev/urandom");
		int rc = dev ? gl_root_add_dev(r, x->paths[i], f) : gl_root_add_bind(r, x->paths[i], f);
		if (rc < 0)
			return -1;
	}
	if (gl_root_add_bind(r, x->target_path, f) < 0 ||
	    gl_root_add_bind_at(r, hosts, "/etc/hosts", false, f) < 0 ||
	    gl_root_add_bind_at(r, tls, GL_EXEC_TLS_DIR, false, f) < 0)
		return -1;
	/* /tmp and the workspace: tmpfs mounts of their bounds, so the quota
	 * holds while the copy writes (issue 15; gl-exec-host restores the
	 * workspace from the slot and stores it back) */
	char opts[96] = "mode=0700";
	if (!gl_scratch_off())
		gl_scratch_options(opts, sizeof opts, x->tmp_mb ? x->tmp_mb : GL_LIMITS_DEFAULT.tmp_mb);
	if (gl_root_add_tmpfs(r, GL_SCRATCH_DIR, opts, f) < 0)
		return -1;
	if (!gl_scratch_off())
		gl_scratch_options(opts, sizeof opts,
				   x->workspace_mb ? x->workspace_mb : GL_LIMITS_DEFAULT.workspace_mb);
	bool bind = false;
#ifdef GL_TESTING
	bind = getenv("GL_TEST_WORKSPACE_SOURCE") != NULL; /* a failing bind */
#endif
	if (state && !bind && gl_root_add_tmpfs(r, GL_WORKSPACE_DIR, opts, f) < 0)
		return -1;
	if (state && bind && gl_root_add_bind_at(r, state, GL_WORKSPACE_DIR, true, f) < 0) {
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "exec copy: launch failed at workspace bind mount: %s",
			gl_fail_detail(f));
		return -2; /* named as the workspace's own step (receipts: "workspace") */
	}
	for (size_t i = 0; i < nitem; i++)
		if (gl_root_add_fd_at(r, items[i].fd, items[i].at, f) < 0)
			return -1;
	return 0;
}
