/* landlock.c — Landlock rulesets of germlines and copies, and the system
 * paths every one of them reads (sandbox.h; docs/sandbox.md; paper Table
 * XIII A1, A2). */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"

/* ---- Landlock ------------------------------------------------------------
 * Debian's <linux/landlock.h> predates ABI 4, so the ABI is spelled out here
 * (the kernel's include/uapi/linux/landlock.h, ABI 1–7). */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct gl_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI >= 4 */
	uint64_t scoped;             /* ABI >= 6 */
};
struct gl_ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_CREATE_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_ABI1 ((1ull << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ull << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15)  /* ABI 5 */
#define LL_NET_BIND_TCP (1ull << 0)   /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ull << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ull << 1)

#define LL_READ_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE)
#define LL_READ_DIR_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)

int gl_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
	if (abi < 0)
		return -1;
	if (abi > GL_LANDLOCK_ABI_KNOWN)
		abi = GL_LANDLOCK_ABI_KNOWN;
#ifdef GL_TESTING
	/* Test-only: pretend an older kernel (tests/sandbox.bats, fail closed). */
	const char *t = getenv("GL_TEST_LANDLOCK_ABI");
	if (t && *t) {
		long want = strtol(t, NULL, 10);
		if (want >= 0 && want < abi)
			abi = want;
		if (abi == 0) {
			errno = EOPNOTSUPP;
			return -1;
		}
	}
#endif
	return (int)abi;
}

/* The sandboxer's fallthrough: every right this ABI knows. */
static uint64_t fs_rights(int abi)
{
	uint64_t r = LL_FS_ABI1;
	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

static int create_ruleset(int abi, uint64_t fs)
{
	struct gl_ll_ruleset_attr a = {.handled_access_fs = fs};
	size_t size = sizeof a.handled_access_fs;
	if (abi >= 4) {
		a.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(struct gl_ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		a.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size = sizeof a;
	}
	/* The kernel returns the ruleset with O_CLOEXEC. */
	return (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
}

static int add_read_rule(int ruleset, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	struct gl_ll_path_beneath pb = {
		.allowed_access = S_ISDIR(st.st_mode) ? LL_READ_DIR_RIGHTS : LL_READ_FILE_RIGHTS,
		.parent_fd = fd,
	};
	return (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
}

int gl_landlock_germline_ruleset(int abi, const char *const *paths, size_t n, int extra_fd,
				 const char **bad)
{
	*bad = NULL;
	autoclose int rs = create_ruleset(abi, fs_rights(abi));
	if (rs < 0)
		return -1;
	if (extra_fd >= 0 && add_read_rule(rs, extra_fd) < 0) {
		*bad = "(retained interpreter)";
		return -1;
	}
	{
		/* /dev/null read and write: each copy opens its own for 0-2
		 * (gl_confine_copy), and runtimes open it O_RDWR for a child's
		 * stdio. Nothing written there is kept. */
		autoclose int fd = open("/dev/null", O_PATH | O_CLOEXEC);
		struct gl_ll_path_beneath pb = {.allowed_access = LL_FS_READ_FILE | LL_FS_WRITE_FILE,
						.parent_fd = fd};
		if (fd < 0 || syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			*bad = "/dev/null";
			return -1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		autoclose int fd = open(paths[i], O_PATH | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue; /* absent: nothing to allow */
			*bad = paths[i];
			return -1;
		}
		if (add_read_rule(rs, fd) < 0) {
			*bad = paths[i];
			return -1;
		}
	}
	return gl_steal_fd(&rs);
}

int gl_landlock_exec_ruleset(int abi, const char *const *paths, size_t n, const int *extra_fds,
			     size_t nfd, const char *write_dir, const int *ports, size_t nport,
			     const char **bad)
{
	*bad = NULL;
	autoclose int rs = gl_landlock_germline_ruleset(abi, paths, n, nfd ? extra_fds[0] : -1, bad);
	if (rs < 0)
		return -1;
	for (size_t i = 1; i < nfd; i++)
		if (add_read_rule(rs, extra_fds[i]) < 0) {
			*bad = "(retained executable)";
			return -1;
		}
	if (write_dir) {
		autoclose int fd = open(write_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct gl_ll_path_beneath pb = {.allowed_access = fs_rights(abi) & ~LL_FS_EXECUTE,
						.parent_fd = fd};
		if (fd < 0 || syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			*bad = write_dir;
			return -1;
		}
	}
	/* /dev/null read and write: in gl_landlock_germline_ruleset */
	for (size_t i = 0; i < nport && abi >= 4; i++) {
		struct {
			uint64_t allowed_access, port;
		} __attribute__((packed)) np = {LL_NET_CONNECT_TCP, (uint64_t)ports[i]};
		if (syscall(SYS_landlock_add_rule, rs, 2 /* LANDLOCK_RULE_NET_PORT */, &np, 0) < 0) {
			*bad = "(TCP connect port)";
			return -1;
		}
	}
	return gl_steal_fd(&rs);
}

int gl_landlock_copy_ruleset(int abi)
{
	/* Only write-type rights are handled; reads stay governed by the
	 * germline's layer. No rule: no writable path anywhere. */
	return create_ruleset(abi, fs_rights(abi) & ~(LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR));
}

int gl_landlock_allow_item(int ruleset_fd, int fd, bool dir)
{
	struct gl_ll_path_beneath pb = {
		.allowed_access = dir ? LL_FS_READ_FILE | LL_FS_READ_DIR : LL_FS_READ_FILE,
		.parent_fd = fd,
	};
	return (int)syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_PATH_BENEATH, &pb, 0);
}

int gl_landlock_restrict(int ruleset_fd)
{
	return (int)syscall(SYS_landlock_restrict_self, ruleset_fd, 0);
}

/* ---- the system paths ------------------------------------------------------ */

/* The directory of the C library this process was loaded with (the
 * running system's multiarch directory, e.g. /usr/lib/x86_64-linux-gnu, or
 * /usr/lib64 on a system without multiarch): the dynamic loader's search
 * path for the libraries of the interpreter, gl-exec-host and the target. */
static int libc_dir_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
	if (!slash || strncmp(slash + 1, "libc.so", 7))
		return 0;
	char *out = data;
	size_t n = (size_t)(slash - name);
	if (n == 0 || n >= PATH_MAX)
		return 0;
	memcpy(out, name, n);
	out[n] = 0;
	return 1;
}

#define ALT_DIR "/etc/alternatives/"

/* Is name a versioned shared library ("libblas.so.3": what a DT_NEEDED
 * names; the unversioned "libblas.so" is for the link editor only)? */
static bool versioned_so(const char *name)
{
	const char *so = strstr(name, ".so.");
	return !strncmp(name, "lib", 3) && so && so[4];
}

/* The library alternatives of sp->libdir into sp->alt (see sandbox.h): a
 * symlink LIBDIR/libX.so.N -> /etc/alternatives/NAME whose final file is
 * beneath LIBDIR. Only the link the host made is granted, one name, never
 * /etc/alternatives itself. Read once per process (the directory is the
 * system's, not the release's); at most max, n returned. */
static size_t lib_alternatives(struct gl_syspaths *sp, size_t max)
{
	static char found[GL_SYSPATHS_ALT][256];
	static size_t nfound;
	static bool scanned;
	if (!scanned) {
		scanned = true;
		DIR *d = opendir(sp->libdir);
		size_t lib = strlen(sp->libdir);
		for (struct dirent *e; d && nfound < GL_SYSPATHS_ALT && (e = readdir(d));) {
			char link[256], real[PATH_MAX];
			if ((e->d_type != DT_LNK && e->d_type != DT_UNKNOWN) || !versioned_so(e->d_name))
				continue;
			ssize_t k = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
			if (k <= (ssize_t)strlen(ALT_DIR) || (link[k] = 0, strncmp(link, ALT_DIR, strlen(ALT_DIR))) ||
			    strchr(link + strlen(ALT_DIR), '/') || !strcmp(link + strlen(ALT_DIR), "..") ||
			    !realpath(link, real) || strncmp(real, sp->libdir, lib) || real[lib] != '/')
				continue;
			bool dup = false;
			for (size_t i = 0; i < nfound; i++)
				dup |= !strcmp(found[i], link);
			if (!dup)
				memcpy(found[nfound++], link, (size_t)k + 1);
		}
		if (d)
			closedir(d);
	}
	size_t n = nfound < max ? nfound : max;
	for (size_t i = 0; i < n; i++)
		memcpy(sp->alt[i], found[i], sizeof found[i]);
	return n;
}

size_t gl_landlock_system_paths(struct gl_syspaths *sp, const char **list, size_t cap)
{
	char dir[PATH_MAX] = "";
	size_t n = 0;
	dl_iterate_phdr(libc_dir_cb, dir);
	/* resolved: /lib is /usr/lib on a merged-/usr system */
	if (dir[0] && realpath(dir, sp->libdir) && n < cap)
		list[n++] = sp->libdir;
	static const char *const fixed[] = {"/lib64", "/etc/ld.so.cache", "/etc/localtime",
					    "/usr/share/zoneinfo"};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed && n < cap; i++)
		list[n++] = fixed[i];
	size_t na = n < cap && sp->libdir[0] ? lib_alternatives(sp, cap - n) : 0;
	for (size_t i = 0; i < na; i++)
		list[n++] = sp->alt[i];
	return n;
}
