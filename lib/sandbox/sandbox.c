/* sandbox.c — seccomp filters, capabilities and a copy's confinement; see
 * sandbox.h and docs/sandbox.md (Landlock is lib/sandbox/landlock.c). */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"
#include "sandbox/private_fds.h"
#include "sandbox/counters.h"
#include "sandbox/scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <seccomp.h>
#include <sodium.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/sha.h"
#include "core/util.h"

/* ---- seccomp -------------------------------------------------------------- */

/* Denied with EPERM in germlines and copies (docs/sandbox.md gives the
 * reason for each group). Names, so a syscall absent on this architecture is
 * simply skipped. */
static const char *const deny_always[] = {
	/* reading or steering other processes */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	/* kernel attack surface and global state */
	"bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module", "open_by_handle_at",
	"acct", "swapon", "swapoff", "reboot", "quotactl",
	/* the mount API: no new view of the filesystem */
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount", "fsconfig", "fspick",
	"move_mount", "open_tree", "mount_setattr",
	/* no new namespaces except through clone (below), no joining others */
	"unshare", "setns",
	/* SysV and POSIX IPC: carriers between processes (A1) */
	"shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget",
	"semop", "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend",
	"mq_timedreceive", "mq_notify", "mq_getsetattr",
	/* addressing anything: the channel is inherited, and a pathname unix
	 * socket is not covered by the network namespace */
	"bind", "listen",
};

static int deny_nr(scmp_filter_ctx ctx, uint32_t action, const char *name, int fallback,
		   unsigned n, const struct scmp_arg_cmp *cmp, struct gl_fail *f)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		nr = fallback; /* a call newer than this libseccomp: its x86_64 number */
	if (nr < 0)
		return 0;  /* absent on this architecture */
	int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (rc < 0)
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "seccomp rule for %s: %s", name,
			       strerror(-rc));
	return 0;
}

static int deny(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
		const struct scmp_arg_cmp *cmp, struct gl_fail *f)
{
	return deny_nr(ctx, action, name, -1, n, cmp, f);
}

/* ---- shared kernel state (docs/sandbox.md "What a copy shares") --------
 * Copies run one at a time, but every copy shares kernel objects with the
 * germline and with every later copy: the inodes of the files it may read,
 * their page cache, the germline's process and its counters. Nothing a
 * copy does may reach a later copy except through the broker (SPEC §10;
 * A1: copies are isolated; A2: the germline's image depends only on r, so
 * nothing of one call may flow into it). Each rule below names the object
 * it closes. All answer with an errno, never kill: ordinary code (a
 * library probing for a lock or a cache hint) fails cleanly.
 *
 * int arguments: the kernel reads only their low 32 bits, so every
 * comparison of one is masked to them (a value with high bits set must not
 * slip past a rule). */
#define LOW32 0xffffffffull

/* name's int argument arg equal to each of vals[0..n): denied with action. */
static int deny_values(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned arg,
		       const uint64_t *vals, size_t n, struct gl_fail *f)
{
	for (size_t i = 0; i < n; i++) {
		struct scmp_arg_cmp c = {arg, SCMP_CMP_MASKED_EQ, LOW32, vals[i] & LOW32};
		if (deny(ctx, action, name, 1, &c, f) < 0)
			return -1;
	}
	return 0;
}

/* Whole calls denied with EPERM, and the x86_64 number of those a libseccomp
 * of Debian 12 (2.5.4) cannot name. */
static const struct {
	const char *name;
	int nr;
} deny_state[] = {
	/* page-cache residency of the files copies share: evicting chosen
	 * pages (fadvise DONTNEED), bringing them in (readahead), reading
	 * which are resident (mincore, cachestat), or doing either to another
	 * process's mappings (process_madvise); Linux AIO takes RWF_NOWAIT in
	 * memory the filter cannot read (A1) */
	{"fadvise64", -1}, {"readahead", -1}, {"mincore", -1}, {"cachestat", 451},
	{"process_madvise", -1}, {"io_setup", -1}, {"io_submit", -1},
	/* rusage: a copy's own ru_majflt tells a resident page from an evicted
	 * one (A1); the germline's RUSAGE_CHILDREN and times() add up its
	 * copies' CPU time, a carrier from a copy into the germline (A2) */
	{"getrusage", -1},
	/* a pending SIGCHLD carries the dead copy's pid and CPU time in its
	 * siginfo: a germline that blocked SIGCHLD at initialisation takes it
	 * with rt_sigtimedwait (or a signalfd opened and closed between two
	 * checks) in an at-fork hook, and the next copy inherits it (A2) */
	{"rt_sigtimedwait", -1}, {"signalfd", -1}, {"signalfd4", -1},
	/* access and modify events of files other copies open (A1) */
	{"inotify_init", -1}, {"inotify_init1", -1}, {"fanotify_init", -1},
	{"fanotify_mark", -1},
	/* inode metadata of files the copy owns in its user namespace (the
	 * release, and with a root broker every root-owned host file):
	 * mode, owner, times, extended attributes. Landlock mediates none of
	 * them; stat() reads them back in a later copy (A1), and a changed
	 * release is a changed image (A2) */
	{"chmod", -1}, {"fchmod", -1}, {"fchmodat", -1}, {"fchmodat2", 452},
	{"chown", -1}, {"fchown", -1}, {"lchown", -1}, {"fchownat", -1},
	{"utime", -1}, {"utimes", -1}, {"futimesat", -1}, {"utimensat", -1},
	{"setxattr", -1}, {"lsetxattr", -1}, {"fsetxattr", -1}, {"setxattrat", 463},
	{"removexattr", -1}, {"lremovexattr", -1}, {"fremovexattr", -1}, {"removexattrat", 466},
	/* the kernel log (dmesg): host-global, read by every copy (A1) */
	{"syslog", -1},
	/* host-global counters a copy's or the broker's work moves: the free
	 * blocks of the release's filesystem (GL_HOME's, where the broker
	 * writes every horizon's slots and witnesses: an hr copy's state size
	 * read by a later public copy), and the host's free and buffer memory
	 * (sysinfo: the page cache an earlier copy filled) (A1) */
	{"statfs", -1}, {"fstatfs", -1}, {"ustat", -1}, {"sysinfo", -1},
};

static int add_meta_rules(scmp_filter_ctx ctx, struct gl_fail *f);

static int add_state_rules(scmp_filter_ctx ctx, struct gl_fail *f)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	for (size_t i = 0; i < sizeof deny_state / sizeof *deny_state; i++)
		if (deny_nr(ctx, eperm, deny_state[i].name, deny_state[i].nr, 0, NULL, f) < 0)
			return -1;
	/* Record (process-owned) and OFD locks, and leases, on any file a copy
	 * can open: the lock is on the shared inode, so it is seen by F_GETLK
	 * from any process that can open the file — a later copy while an
	 * earlier one's process lingers, another session's copy, the host —
	 * and an OFD lock on a description the germline holds outlives the
	 * copy (A1). Landlock does not mediate locks. ENOLCK, "no locks
	 * available", is what a kernel without lock support answers: a library
	 * that probes for locking falls back or reports it. (glibc's *64
	 * names are F_GETLK/F_SETLK/F_SETLKW on x86_64; 12-14, the kernel's
	 * 32-bit F_*LK64, are refused by a 64-bit kernel anyway.) */
	static const uint64_t lock_cmds[] = {F_GETLK,     F_SETLK,     F_SETLKW,     12, 13, 14,
					     F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW,
					     F_SETLEASE,  F_GETLEASE};
	const uint32_t enolck = SCMP_ACT_ERRNO(ENOLCK);
	if (deny_values(ctx, enolck, "fcntl", 1, lock_cmds, sizeof lock_cmds / sizeof *lock_cmds,
			f) < 0 ||
	    deny(ctx, enolck, "flock", 0, NULL, f) < 0)
		return -1;
	/* dnotify: directory access events, as inotify (A1) */
	static const uint64_t notify[] = {F_NOTIFY};
	if (deny_values(ctx, eperm, "fcntl", 1, notify, 1, f) < 0)
		return -1;
	/* madvise on file mappings: evict (COLD, PAGEOUT), read ahead
	 * (WILLNEED), collapse into a huge page (COLLAPSE) or punch (REMOVE)
	 * page cache pages of a shared file; MERGEABLE lets KSM merge pages
	 * with another process's, which a write then times (A1). DONTNEED,
	 * FREE and the rest, which malloc and V8 use, act on the process's own
	 * memory only. */
	static const uint64_t advice[] = {MADV_WILLNEED, MADV_REMOVE, MADV_MERGEABLE,
					  20 /* MADV_COLD */, 21 /* MADV_PAGEOUT */,
					  25 /* MADV_COLLAPSE */};
	if (deny_values(ctx, eperm, "madvise", 2, advice, sizeof advice / sizeof *advice, f) < 0)
		return -1;
	/* preadv2/pwritev2 with RWF_NOWAIT: EAGAIN for a page not in the page
	 * cache, a residency read without a fault (A1). The flags are the
	 * sixth argument on x86_64 (fd, iov, iovcnt, pos_l, pos_h, flags). */
	struct scmp_arg_cmp nowait = SCMP_A5(SCMP_CMP_MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT);
	if (deny(ctx, eperm, "preadv2", 1, &nowait, f) < 0 ||
	    deny(ctx, eperm, "pwritev2", 1, &nowait, f) < 0)
		return -1;
	/* wait4/waitid with a rusage pointer, times() with a buffer: the CPU
	 * time and faults of the children reaped, seen by the germline (A2).
	 * waitpid() and times(NULL) pass 0 and stay allowed. A one-operand
	 * comparison names its unused second datum (0) here and below, so
	 * that every field is initialised for both compilers. */
	struct scmp_arg_cmp ru4 = SCMP_A3(SCMP_CMP_NE, 0, 0), ru5 = SCMP_A4(SCMP_CMP_NE, 0, 0),
			    tms = SCMP_A0(SCMP_CMP_NE, 0, 0);
	if (deny(ctx, eperm, "wait4", 1, &ru4, f) < 0 || deny(ctx, eperm, "waitid", 1, &ru5, f) < 0 ||
	    deny(ctx, eperm, "times", 1, &tms, f) < 0)
		return -1;
	return add_meta_rules(ctx, f);
}

/* The rest of add_state_rules: inode flags, datagram socketpairs,
 * personality. */
static int add_meta_rules(scmp_filter_ctx ctx, struct gl_fail *f)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	/* inode flags (chattr: append-only, no-dump, no-atime, …) and
	 * FS_IOC_FSSETXATTR, by ioctl on a read-only descriptor the copy owns:
	 * metadata a later copy reads back with FS_IOC_GETFLAGS (A1) */
	static const uint64_t setflags[] = {FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR};
	if (deny_values(ctx, eperm, "ioctl", 1, setflags, sizeof setflags / sizeof *setflags, f) < 0)
		return -1;
	/* a datagram socketpair: an AF_UNIX datagram socket sendmsg()s to any
	 * pathname socket named in msg_name (syslog, journald, another
	 * session's), even when connected, and the filter cannot read msg_name
	 * (A1). Stream sockets refuse an address (EISCONN/EOPNOTSUPP) and
	 * SEQPACKET ones ignore it, so those stay; socket() is stream-only
	 * already (add_rules). */
	struct scmp_arg_cmp dgram = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM);
	if (deny(ctx, eperm, "socketpair", 1, &dgram, f) < 0)
		return -1;
	/* personality: only the query (0xffffffff); READ_IMPLIES_EXEC or
	 * ADDR_NO_RANDOMIZE set at initialisation would weaken every copy (A1) */
	struct scmp_arg_cmp query = SCMP_A0(SCMP_CMP_NE, 0xffffffffull, 0);
	return deny(ctx, eperm, "personality", 1, &query, f);
}

/* ---- per-user counters (lib/sandbox/counters.h) ---------------------------
 * The kernel charges a queued signal to its target's uid at every level of
 * the user namespace chain, and checks the caller's limit only when the
 * signal is real-time or queued with a payload (sigqueue), or preallocated
 * by a POSIX timer or an F_SETSIG descriptor: exactly the charges another
 * copy could read back as a failure near a shared level's limit (A1). No
 * tool queues those; glibc's own (SIGCANCEL, SIGSETXID) are real-time too,
 * so pthread_cancel in a copy fails cleanly. Pipe pages are charged to the
 * host uid (fs.pipe-user-pages-soft) and F_SETPIPE_SZ reads the charge
 * back; a copy may not raise (or lower, to measure against) any limit
 * but RLIMIT_CORE. */
static int add_counter_rules(scmp_filter_ctx ctx, struct gl_fail *f)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	/* a signal number is an int: any high bit makes the 64-bit value >= 32,
	 * so a value that hides one is denied too */
	struct scmp_arg_cmp rt1 = SCMP_A1(SCMP_CMP_GE, 32, 0), rt2 = SCMP_A2(SCMP_CMP_GE, 32, 0);
	struct scmp_arg_cmp setsig[2] = {SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, F_SETSIG),
					 SCMP_A2(SCMP_CMP_GE, 32, 0)};
	static const uint64_t pipe_sz[] = {F_SETPIPE_SZ};
	/* RLIMIT_CORE counts nothing and stays changeable: the sanitizer
	 * runtime lowers it at start (the test build's exec host), and a core
	 * dump is kept out of the release otherwise (docs/sandbox.md). A
	 * resource with high bits set is not RLIMIT_CORE here: denied. */
	struct scmp_arg_cmp not_core0 = SCMP_A0(SCMP_CMP_NE, RLIMIT_CORE, 0);
	struct scmp_arg_cmp setting[2] = {SCMP_A1(SCMP_CMP_NE, RLIMIT_CORE, 0),
					  SCMP_A2(SCMP_CMP_NE, 0, 0)};
	if (deny(ctx, eperm, "rt_sigqueueinfo", 0, NULL, f) < 0 ||
	    deny(ctx, eperm, "rt_tgsigqueueinfo", 0, NULL, f) < 0 ||
	    deny(ctx, eperm, "timer_create", 0, NULL, f) < 0 ||
	    deny(ctx, eperm, "kill", 1, &rt1, f) < 0 || deny(ctx, eperm, "tkill", 1, &rt1, f) < 0 ||
	    deny(ctx, eperm, "tgkill", 1, &rt2, f) < 0 ||
	    deny(ctx, eperm, "pidfd_send_signal", 1, &rt1, f) < 0 ||
	    deny(ctx, eperm, "fcntl", 2, setsig, f) < 0 ||
	    deny_values(ctx, eperm, "fcntl", 1, pipe_sz, 1, f) < 0 ||
	    deny(ctx, eperm, "setrlimit", 1, &not_core0, f) < 0 ||
	    deny(ctx, eperm, "prlimit64", 2, setting, f) < 0)
		return -1;
	return 0;
}

static int add_rules(scmp_filter_ctx ctx, enum gl_filter which, struct gl_fail *f)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	for (size_t i = 0; i < sizeof deny_always / sizeof *deny_always; i++)
		if (deny(ctx, eperm, deny_always[i], 0, NULL, f) < 0)
			return -1;

	/* clone3 passes its flags in memory the filter cannot read: ENOSYS
	 * makes libc fall back to clone, whose flags it can. The germline
	 * itself keeps clone3 for set_tid (one pid for every copy:
	 * hosts/common/fork_server.c); the mount API, unshare and setns stay
	 * denied whatever namespace it may make with it, and every copy's own
	 * filter denies clone3. */
	if (which != GL_FILTER_GERMLINE && deny(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, f) < 0)
		return -1;
	/* connect: only an exec copy, whose sockets can only be AF_INET ones
	 * (below) in a network namespace holding its relay alone. */
	if (which != GL_FILTER_EXEC && deny(ctx, eperm, "connect", 0, NULL, f) < 0)
		return -1;
	/* clone with a CLONE_NEW* flag; the germline may create exactly the
	 * pid, net, ipc and mount namespaces of a copy (Algorithm 1 line 9;
	 * the mount namespace holds the copy's scratch /tmp, lib/sandbox/scratch.h —
	 * the mount API itself stays denied). */
	static const uint64_t newns[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWUSER,
					 CLONE_NEWPID, CLONE_NEWNET,    CLONE_NEWIPC};
	for (size_t i = 0; i < sizeof newns / sizeof *newns; i++) {
		uint64_t ns = newns[i];
		if (which == GL_FILTER_GERMLINE && (ns == CLONE_NEWPID || ns == CLONE_NEWNET ||
						    ns == CLONE_NEWIPC || ns == CLONE_NEWNS))
			continue;
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, ns, ns);
		if (deny(ctx, eperm, "clone", 1, &c, f) < 0)
			return -1;
	}
	/* Sockets: AF_UNIX only, and socket() only SOCK_STREAM (an unconnected
	 * datagram socket could sendto() a pathname socket without connect). */
	struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0);
	struct scmp_arg_cmp not_inet = SCMP_A0(SCMP_CMP_NE, AF_INET, 0);
	if (deny(ctx, eperm, "socket", 1, which == GL_FILTER_EXEC ? &not_inet : &not_unix, f) < 0 ||
	    deny(ctx, eperm, "socketpair", 1, &not_unix, f) < 0)
		return -1;
	static const int types[] = {SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW, SOCK_RDM, SOCK_PACKET};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (uint64_t)types[i]);
		if (deny(ctx, eperm, "socket", 1, &c, f) < 0)
			return -1;
	}
	struct scmp_arg_cmp addr = SCMP_A4(SCMP_CMP_NE, 0, 0);
	if (deny(ctx, eperm, "sendto", 1, &addr, f) < 0)
		return -1;
	if (add_state_rules(ctx, f) < 0)
		return -1;
	/* in the germline's filter, which every copy inherits beneath its own
	 * (the copy's is compiled inside the germline, where no test switch
	 * reaches), and in an exec copy's */
	if (which == GL_FILTER_COPY || gl_counters_off())
		return 0;
	return add_counter_rules(ctx, f);
}

int gl_seccomp_build(enum gl_filter which, struct gl_bpf *out, struct gl_fail *f)
{
	*out = (struct gl_bpf){0};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED, "seccomp_init failed");
	}
	int rc = 0;
	/* A foreign architecture (i386 int 0x80) is killed, not filtered:
	 * only the native table is described here. libseccomp's x86_64 filter
	 * also sends x32 numbers (bit 30 set) to this action. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||
	    /* a binary tree over syscall numbers, not a linear chain: every
	     * syscall of a copy runs the filter (node makes tens of thousands) */
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "seccomp attributes: %s", strerror(-rc));
		seccomp_release(ctx);
		return -1;
	}
	if (add_rules(ctx, which, f) < 0) {
		seccomp_release(ctx);
		return -1;
	}
	autoclose int mfd = memfd_create("gl-bpf", MFD_CLOEXEC);
	if (mfd < 0 || (rc = seccomp_export_bpf(ctx, mfd)) < 0) {
		gl_fail(f, GL_E_BOOTSTRAP_FAILED, "seccomp_export_bpf: %s",
			strerror(mfd < 0 ? errno : -rc));
		seccomp_release(ctx);
		return -1;
	}
	seccomp_release(ctx);
	char *buf;
	size_t len;
	if (lseek(mfd, 0, SEEK_SET) < 0 || gl_read_fd_capped(mfd, 1u << 20, &buf, &len) < 0 ||
	    len == 0 || len % sizeof(struct sock_filter)) {
		return gl_fail(f, GL_E_BOOTSTRAP_FAILED,
			       "seccomp: cannot read back the exported program");
	}
	out->insns = buf;
	out->len = len;
	return 0;
}

void gl_bpf_free(struct gl_bpf *b)
{
	free(b->insns);
	*b = (struct gl_bpf){0};
}

void gl_bpf_sha256(const struct gl_bpf *b, char out[65])
{
	unsigned char h[GL_SHA256_BYTES];
	gl_sha256(h, b->insns, b->len);
	gl_hex(h, sizeof h, out);
}

int gl_seccomp_install(const struct gl_bpf *b)
{
	struct sock_fprog prog = {
		.len = (unsigned short)(b->len / sizeof(struct sock_filter)),
		.filter = b->insns,
	};
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

int gl_caps_drop_all(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -1;
	return (int)syscall(SYS_capset, &h, d);
}

/* ---- a copy's confinement (runs in the cloned child) ------------------ */

enum gl_confine_step gl_confine_copy(const struct gl_copy_confine *c)
{
	/* Under the minimal root (its "/" read-only, never the host's)? Asked
	 * as the germline's root: another uid meets EACCES before EROFS. */
	bool minimal = faccessat(AT_FDCWD, "/", W_OK, AT_EACCESS) < 0 && errno == EROFS;
	/* A host uid of its own (lib/sandbox/uids.h): no per-user counter of
	 * the kernel's is shared with another copy alive at the same time.
	 * First: changing the effective uid clears the parent-death signal
	 * and the dumpable flag (commit_creds), which are set again below. */
	if (c->uid >= 0) {
		if (syscall(SYS_setresgid, c->uid, c->uid, c->uid) < 0 ||
		    syscall(SYS_setresuid, c->uid, c->uid, c->uid) < 0 ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
			return GL_CONFINE_UID;
	}
	/* The copy dies with its germline (and the germline with the broker). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return GL_CONFINE_PDEATHSIG;
	/* Its channel on fd 3; this replaces the germline's control socket. */
	if (dup2(c->channel, 3) < 0)
		return GL_CONFINE_CHANNEL;
	/* A /dev/null of its own on 0-2, opened before the copy's Landlock
	 * layer takes write rights away. The germline's description would be
	 * shared with it and with every later copy: its status flags
	 * (F_SETFL O_NONBLOCK|O_APPEND|O_ASYNC, FIONBIO), its F_SETSIG
	 * signal, its OFD locks and flock outlive the copy and are read back
	 * with F_GETFL/F_GETSIG/F_GETLK by the next one (A1). */
	if (!(c->off & GL_OFF_DEVNULL)) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			return GL_CONFINE_DEVNULL;
		if (fd > 3)
			close(fd);
	}
	/* The runtime's own pipes, eventfds and epoll instances: the copy's
	 * own objects in place of the germline's (lib/sandbox/private_fds.h). */
	if (c->keep && !(c->off & GL_OFF_FDCLOSE) && gl_private_fds_apply(c->keep) < 0)
		return GL_CONFINE_DESCRIPTORS;
	/* Before Landlock, which takes no_new_privs in place of CAP_SYS_ADMIN:
	 * a copy with its own uid has no capability left. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return GL_CONFINE_NO_NEW_PRIVS;
	if (!(c->off & GL_OFF_LANDLOCK)) {
		int rs = gl_landlock_copy_ruleset(c->landlock_abi);
		/* the copy's own tmpfs on /tmp, stacked by the broker before it
		 * runs (lib/sandbox/scratch.h: why the rule is on the root) — under the
		 * minimal root only */
		if (rs < 0 ||
		    (minimal && gl_scratch_allow(rs, c->landlock_abi, GL_SCRATCH_RULE_PATH) < 0) ||
		    gl_landlock_restrict(rs) < 0)
			return GL_CONFINE_LANDLOCK;
		close(rs);
	}
	/* Root of its user namespace no more: a copy needs no capability. */
	if (gl_caps_drop_all() < 0)
		return GL_CONFINE_CAPS;
	if (!(c->off & GL_OFF_SECCOMP) && gl_seccomp_install(c->bpf) < 0)
		return GL_CONFINE_SECCOMP;
	/* Last, so the germline's sync pipe reaches EOF only once every step
	 * above is in force (lib/runtime/germline.c verifies them from outside). */
	if (!(c->off & GL_OFF_FDCLOSE) &&
	    (c->keep ? gl_private_fds_close_rest(c->keep) : syscall(SYS_close_range, 4u, ~0u, 0u)) < 0)
		return GL_CONFINE_DESCRIPTORS;
	if (c->sync_fd >= 0)
		close(c->sync_fd); /* already closed above unless GL_OFF_FDCLOSE */
	return GL_CONFINE_OK;
}

const char *gl_confine_step_name(enum gl_confine_step s)
{
	switch (s) {
	case GL_CONFINE_OK: return "ok";
	case GL_CONFINE_PDEATHSIG: return "pdeathsig";
	case GL_CONFINE_CHANNEL: return "channel";
	case GL_CONFINE_LANDLOCK: return "landlock";
	case GL_CONFINE_NO_NEW_PRIVS: return "no_new_privs";
	case GL_CONFINE_CAPS: return "capabilities";
	case GL_CONFINE_SECCOMP: return "seccomp";
	case GL_CONFINE_DESCRIPTORS: return "descriptors";
	case GL_CONFINE_DEVNULL: return "devnull";
	case GL_CONFINE_UID: return "uid";
	}
	return "?";
}
