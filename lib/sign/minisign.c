/* minisign.c — FILE.minisig and the public key in minisign's format; see
 * minisign.h. */
#define _GNU_SOURCE
#include "sign/minisign.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>

#include "core/util.h"

int gl_minisign_keynum(const struct gl_key *k, unsigned char out[8], struct gl_fail *f)
{
	/* keyid is 64 lowercase hex digits (gl_keyid); its first 16 give 8 bytes */
	if (gl_unhex(k->keyid, 16, out, 8) < 0)
		return gl_fail(f, GL_E_IO, "minisign: key %s has no keyid", k->path ? k->path : "");
	return 0;
}

/* minisign's printed form of a keynum: the little-endian u64, %016llX. */
static void keynum_text(const unsigned char kn[8], char out[17])
{
	unsigned long long v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | kn[i];
	snprintf(out, 17, "%016llX", v);
}

static void b64(const unsigned char *p, size_t n, char *out, size_t outlen)
{
	sodium_bin2base64(out, outlen, p, n, sodium_base64_VARIANT_ORIGINAL);
}

int gl_minisign_pubkey(const struct gl_key *k, char *out, size_t outlen, struct gl_fail *f)
{
	unsigned char raw[2 + 8 + 32] = {'E', 'd'};
	if (outlen < sodium_base64_ENCODED_LEN(sizeof raw, sodium_base64_VARIANT_ORIGINAL))
		return gl_fail(f, GL_E_IO, "minisign: no room for the public key line");
	if (gl_minisign_keynum(k, raw + 2, f) < 0)
		return -1;
	memcpy(raw + 10, k->pk, 32);
	b64(raw, sizeof raw, out, outlen);
	return 0;
}

enum gl_code gl_minisign_pubkey_write(const struct gl_key *k, const char *path,
					 struct gl_fail *f)
{
	char line[GL_MINISIGN_PUBKEY_LEN], kn_text[17];
	unsigned char kn[8];
	if (gl_minisign_pubkey(k, line, sizeof line, f) < 0 || gl_minisign_keynum(k, kn, f) < 0)
		return f->code;
	keynum_text(kn, kn_text);
	autofree char *text =
	    gl_xasprintf("untrusted comment: minisign public key %s\n%s\n", kn_text, line);
	if (gl_atomic_write(path, text, strlen(text), 0644) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno));
	return GL_E_OK;
}

/* BLAKE2b-512 of the whole file, read in a stream. 0, or -1 with errno. */
static int blake2b_file(const char *file, unsigned char h[64])
{
	autoclose int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	crypto_generichash_state st;
	crypto_generichash_init(&st, NULL, 0, 64);
	static unsigned char chunk[1 << 16];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		crypto_generichash_update(&st, chunk, (size_t)n);
	}
	crypto_generichash_final(&st, h, 64);
	return 0;
}

/* The trusted comment minisign 0.11 writes, with the file's base name made
 * one printable line (control bytes become '?': the comment is a line). */
static char *trusted_comment(const char *file)
{
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	autofree char *name = gl_xstrdup(base);
	for (char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return gl_xasprintf("timestamp:%lld\tfile:%s\thashed", (long long)gl_now(), name);
}

enum gl_code gl_minisign_write(const struct gl_key *k, const char *file, const char *sig_path,
				  struct gl_fail *f)
{
	if (!k->sk)
		return gl_fail_set(f, GL_E_IO, "minisign: the secret key of %s is not loaded",
				   k->path ? k->path : k->keyid);
	autofree char *def = sig_path ? NULL : gl_xasprintf("%s.minisig", file);
	const char *out = sig_path ? sig_path : def;
	unsigned char h[64];
	if (blake2b_file(file, h) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", file, strerror(errno));
	/* "ED" || keynum || Ed25519(BLAKE2b-512(file)) */
	unsigned char sigblob[2 + 8 + 64] = {'E', 'D'};
	if (gl_minisign_keynum(k, sigblob + 2, f) < 0)
		return f->code;
	gl_key_sign(k, h, sizeof h, sigblob + 10);
	autofree char *tc = trusted_comment(file);
	/* global signature: over the signature and the trusted comment */
	size_t tcl = strlen(tc);
	autofree unsigned char *gmsg = gl_xmalloc(64 + tcl);
	memcpy(gmsg, sigblob + 10, 64);
	memcpy(gmsg + 64, tc, tcl);
	unsigned char gsig[64];
	gl_key_sign(k, gmsg, 64 + tcl, gsig);
	char s1[sodium_base64_ENCODED_LEN(sizeof sigblob, sodium_base64_VARIANT_ORIGINAL)];
	char s2[sodium_base64_ENCODED_LEN(sizeof gsig, sodium_base64_VARIANT_ORIGINAL)];
	b64(sigblob, sizeof sigblob, s1, sizeof s1);
	b64(gsig, sizeof gsig, s2, sizeof s2);
	autofree char *text = gl_xasprintf("untrusted comment: signature from germline targets key "
					   "%s\n%s\ntrusted comment: %s\n%s\n",
					   k->keyid, s1, tc, s2);
	if (gl_atomic_write(out, text, strlen(text), 0644) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", out, strerror(errno));
	return GL_E_OK;
}
