/* archive.c — a release archive (lib/sign/archive.c, archive_extract.c):
 * the input is the archive's bytes, in a memory file.
 * gl_archive_read_member reads manifest.json out of it (as gl-verify does
 * before installing), then gl_archive_extract writes it into a fresh
 * directory under a temporary base (on /dev/shm when it can: extraction
 * fsyncs, which costs nothing on tmpfs), removed after each input whether
 * extraction took it or not. The bounds are lowered (4 MiB, 256
 * entries; the defaults are 1 GiB and 65536) so that a compression bomb
 * is refused in milliseconds, not after a gigabyte on disk. */
#include "fuzz.h"

#include <stdio.h>

#include "sign/archive.h"

static char base[4096];
static const struct gl_archive_limits lim = {.max_bytes = 4u << 20, .max_entries = 256};

static void cleanup(void)
{
	gl_rm_rf(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	snprintf(base, sizeof base, "%s/gl-fuzz-archive.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base))
		abort();
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autoclose int fd = fuzz_memfd(data, size);
	if (fd < 0)
		return 0;
	{
		autofree char *out = NULL;
		size_t len = 0;
		autofail struct gl_fail f = {0};
		gl_archive_read_member(fd, "manifest.json", 1u << 20, &out, &len, &f);
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		return 0;
	autofree char *dest = gl_xasprintf("%s/x", base);
	jv files = jv_invalid();
	autofail struct gl_fail f = {0};
	gl_archive_extract(fd, dest, &lim, &files, &f);
	jv_free(files);
	gl_rm_rf(dest); /* read-only directories made writable first */
	return 0;
}
