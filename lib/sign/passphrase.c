/* passphrase.c — see passphrase.h. */
#define _GNU_SOURCE
#include "sign/passphrase.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sodium.h>
#include <string.h>
#include <termios.h>

/* GL_PASSPHRASE, read once into locked memory and wiped from the
 * environment, then used for every key of this process. */
static char *env_pass;
static int env_checked;

static int tty_fd = -1;
static struct termios tty_saved;
static volatile sig_atomic_t tty_echo_off;

static void tty_restore(void)
{
	if (tty_echo_off) {
		tcsetattr(tty_fd, TCSAFLUSH, &tty_saved);
		tty_echo_off = 0;
	}
}

static void tty_signal(int sig)
{
	tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static const char *take_env_pass(void)
{
	if (!env_checked) {
		env_checked = 1;
		char *e = getenv("GL_PASSPHRASE");
		if (e) {
			size_t n = strlen(e);
			if (n > GL_PASS_MAX)
				n = GL_PASS_MAX;
			env_pass = gl_locked(GL_PASS_MAX + 1);
			memcpy(env_pass, e, n);
			env_pass[n] = 0;
			sodium_memzero(e, strlen(e));
			unsetenv("GL_PASSPHRASE");
		}
	}
	return env_pass;
}

/* Read one line from the terminal with echo off into out (locked,
 * GL_PASS_MAX+1). 0, or -1 with f (io). */
static int tty_read(int fd, const char *prompt, char *out, struct gl_fail *f)
{
	if (gl_write_all(fd, prompt, strlen(prompt)) < 0)
		return gl_fail_errno(f, GL_E_IO, "writing to the terminal");
	size_t n = 0;
	int toolong = 0;
	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || c == '\n')
			break;
		if (n < GL_PASS_MAX)
			out[n++] = c;
		else
			toolong = 1;
	}
	if (n && out[n - 1] == '\r')
		n--;
	out[n] = 0;
	if (toolong)
		return gl_fail(f, GL_E_IO, "passphrase longer than %d bytes", GL_PASS_MAX);
	return 0;
}

/* Prompt on /dev/tty (echo off), twice when confirm. */
static enum gl_code tty_passphrase(const char *what, int confirm, char *out, struct gl_fail *f)
{
	autoclose int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		/* exit 2 with this hint (no passphrase is a usage error, SPEC §2) */
		return gl_fail_set(f, GL_E_IO,
				   "no passphrase: set GL_PASSPHRASE or run on a terminal "
				   "(CI keys: gl-sign keygen --no-passphrase)");
	if (tcgetattr(fd, &tty_saved) < 0)
		return gl_fail_set(f, GL_E_IO, "/dev/tty: %s", strerror(errno));
	struct termios t = tty_saved;
	t.c_lflag &= (tcflag_t)~ECHO;
	t.c_lflag |= ECHONL;
	tty_fd = fd;
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], tty_signal);
	tty_echo_off = 1;
	tcsetattr(fd, TCSAFLUSH, &t);
	autofree char *prompt = gl_xasprintf("Passphrase for %s: ", what);
	int rc = tty_read(fd, prompt, out, f);
	if (rc == 0 && confirm) {
		autolocked char *again = gl_locked(GL_PASS_MAX + 1);
		rc = tty_read(fd, "Again: ", again, f);
		if (rc == 0 &&
		    (strlen(again) != strlen(out) || sodium_memcmp(again, out, strlen(out)) != 0))
			rc = gl_fail(f, GL_E_IO, "the two passphrases differ");
	}
	tty_restore();
	tty_fd = -1;
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	return rc == 0 ? GL_E_OK : GL_E_IO;
}

enum gl_code gl_passphrase(const char *what, int confirm, char *out, struct gl_fail *f)
{
	const char *e = take_env_pass();
	if (e) {
		strcpy(out, e);
		return GL_E_OK;
	}
	return tty_passphrase(what, confirm, out, f);
}
