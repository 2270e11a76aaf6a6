/* Unit tests of the failures of lib/sandbox and lib/runtime (issue 18 "One
 * failure type"): each fallible function fills a struct gl_fail whose code
 * is the one its callers refuse with (SPEC §6, §9; docs/gl-run.md "Refused
 * calls") and whose detail is the text they print, and leaves it empty when
 * it succeeds. Real inputs, no stand-ins: the host's root, a regular file
 * where a device is wanted, this process as a "germline" (its signals are
 * not blocked, G1), a descriptor that is not a pidfd, receipts that do not
 * pair, a release name that is not a SHA-256, a scratch directory that
 * cannot be made.
 * Run by tests/lib.bats under the plain and the sanitizer build. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fail.h"
#include "runtime/admit.h"
#include "runtime/exec_scratch.h"
#include "runtime/receipt.h"
#include "sandbox/cgroup.h"
#include "sandbox/proc.h"
#include "sandbox/root.h"
#include "sandbox/sandbox.h"

#include "check.h"

/* f holds code and a detail starting with want; then it is cleared. */
static void want(struct gl_fail *f, int rc, enum gl_code code, const char *want)
{
	CHECK(rc == -1, "returned %d, want -1 (%s)", rc, want);
	CHECK(f->code == code, "code %s, want %s (%s)", gl_code_name(f->code), gl_code_name(code),
	      gl_fail_detail(f));
	CHECK(!strncmp(gl_fail_detail(f), want, strlen(want)), "detail \"%s\", want \"%s…\"",
	      gl_fail_detail(f), want);
	gl_fail_clear(f);
}

static struct gl_root root; /* 96 entries: not on the stack */

static void minimal_root(void)
{
	struct gl_fail f = {0};
	want(&f, gl_root_add_bind(&root, "/", &f), GL_E_BOOTSTRAP_FAILED,
	     "minimal root: refusing to bind the host's root");
	want(&f, gl_root_add_dev(&root, "/etc/passwd", &f), GL_E_BOOTSTRAP_FAILED,
	     "minimal root: /etc/passwd is not a character device");
	char opts[200];
	memset(opts, 'x', sizeof opts - 1);
	opts[sizeof opts - 1] = 0;
	want(&f, gl_root_add_tmpfs(&root, "/tmp", opts, &f), GL_E_BOOTSTRAP_FAILED,
	     "minimal root: tmpfs options too long");
	/* a path that is not there is skipped, as Landlock skips it */
	CHECK(gl_root_add_bind(&root, "/no/such/path", &f) == 0 && !f.detail && f.code == GL_E_OK,
	      "a missing path failed: %s", gl_fail_detail(&f));
	CHECK(gl_root_add_system(&root, &f) == 0 && !f.detail, "system: %s", gl_fail_detail(&f));
	gl_root_free(&root);
}

static void proc_checks(void)
{
	struct gl_fail f = {0};
	want(&f, gl_proc_check_germline(0, 0, 0, &f), GL_E_GERMLINE_CHECK,
	     "G1: the germline has exited");
	/* this process blocks no signal: a germline that could run a handler */
	want(&f, gl_proc_check_germline(getpid(), getpid(), 0, &f), GL_E_GERMLINE_CHECK, "G1: ");
	want(&f, gl_proc_check_quiet(getpid(), &f), GL_E_GERMLINE, "G1: signal ");
	/* this process shares the caller's namespaces: neither a copy nor an exec copy */
	want(&f, gl_proc_check_copy(getpid(), getpid(), getpid(), 0, -1, -1, &f), GL_E_GERMLINE, "copy: ");
	want(&f, gl_proc_check_exec(getpid(), 0, 0, 0, &f), GL_E_LAUNCH,
	     "exec copy: shares the broker's pid namespace");
}

static void bounds(void)
{
	struct gl_fail f = {0};
	struct gl_cg cg = {.kind = GL_CG_NONE};
	struct gl_cg_copy cc;
	struct gl_limits l = GL_LIMITS_DEFAULT;
	/* stdin is no pidfd: the copy's pid cannot be read, the copy is refused */
	want(&f, gl_cg_bound_pidfd(&cg, &l, 0, false, &cc, &f), GL_E_GERMLINE,
	     "limits: the copy's pid is unknown");
	want(&f, gl_cg_bound_pidfd(&cg, &l, 0, true, &cc, &f), GL_E_LAUNCH,
	     "limits: the copy's pid is unknown");
}

static void seccomp(void)
{
	struct gl_fail f = {0};
	struct gl_bpf b;
	CHECK(gl_seccomp_build(GL_FILTER_COPY, &b, &f) == 0 && !f.detail && f.code == GL_E_OK,
	      "the copy's filter: %s", gl_fail_detail(&f));
	gl_bpf_free(&b);
}

static void receipts(void)
{
	struct gl_fail f = {0};
	jv launched = JV_OBJECT(jv_string("state"), jv_string("rejected"));
	jv exited = JV_OBJECT(jv_string("state"), jv_string("exited"), jv_string("closes"),
			      jv_string("x"));
	want(&f, gl_receipt_check_pair(exited, launched, "x", &f), GL_E_MISMATCH,
	     "the launch receipt is rejected, not fully_enforced");
	jv_free(launched);
	launched = JV_OBJECT(jv_string("state"), jv_string("fully_enforced"));
	want(&f, gl_receipt_check_pair(exited, launched, "y", &f), GL_E_MISMATCH,
	     "closes names another launch receipt");
	jv_free(launched);
	jv_free(exited);
}

static void admission(void)
{
	struct gl_fail f = {0};
	struct gl_admit a;
	enum gl_admit_status st = gl_admit_open("/nonexistent", "not-a-sha", "m", &a, &f);
	CHECK(st == GL_ADMIT_NO_RECORD, "status %d", (int)st);
	want(&f, st == GL_ADMIT_OK ? 0 : -1, GL_E_REJECTED, "not a release SHA-256");
	char hex[65];
	memset(hex, 'a', 64);
	hex[64] = 0;
	st = gl_admit_open("/nonexistent", hex, "m", &a, &f);
	want(&f, st == GL_ADMIT_OK ? 0 : -1, GL_E_REJECTED, "");
}

static void exec_scratch(void)
{
	struct gl_fail f = {0};
	struct gl_exec x;
	memset(&x, 0, sizeof x);
	x.home = (char *)"/proc/self/no-such-home";
	char *dir = gl_exec_scratch_make(&x, NULL, 0, &f);
	want(&f, dir ? 0 : -1, GL_E_LAUNCH, "exec copy: /proc/self/no-such-home/scratch: ");
	free(dir);
}

int main(void)
{
	minimal_root();
	proc_checks();
	bounds();
	seccomp();
	receipts();
	admission();
	exec_scratch();
	return check_done();
}
