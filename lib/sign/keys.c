/* keys.c — Ed25519 key files; see keys.h.
 *
 * The secret part of a key file is never handed to the JSON parser: the
 * 64 hex digits after the one `"private":"` are decoded straight into
 * locked memory and replaced by '0' in the (locked) file buffer before the
 * rest is parsed and checked, so jv strings and parser scratch buffers
 * never hold key material. */
#define _GNU_SOURCE
#include "sign/keys.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "core/sha.h"
#include "json/json.h"
#include "sign/passphrase.h"
#include "core/util.h"

#define SEED_HEX_AT "\"private\":\""
#define KDF_NAME "argon2id13"
/* Bounds on a key file's argon2id cost, so a damaged or hostile key file
 * cannot make the loader spin or allocate without limit. */
#define OPS_MAX 64ull
#define MEM_MAX (1ull << 30)

/* ---- process hardening ------------------------------------------------- */

int gl_keys_harden(struct gl_fail *f)
{
	struct rlimit no = {0, 0};
	if (setrlimit(RLIMIT_CORE, &no) < 0)
		return gl_fail_errno(f, GL_E_IO, "setrlimit(RLIMIT_CORE, 0)");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return gl_fail_errno(f, GL_E_IO, "prctl(PR_SET_DUMPABLE, 0)");
	if (sodium_init() < 0)
		return gl_fail(f, GL_E_IO, "libsodium failed to initialise");
	return 0;
}

/* ---- locked buffers ---------------------------------------------------- */

void *gl_locked(size_t n)
{
	void *p = sodium_malloc(n);
	if (!p)
		gl_die(GL_EXIT_USAGE, "cannot allocate locked memory");
	return p;
}

void gl_locked_freep(void *pp)
{
	void **p = pp;
	if (*p)
		sodium_free(*p); /* wipes before unmapping */
	*p = NULL;
}

/* ---- public keys ------------------------------------------------------- */

jv gl_pubkey_json(const unsigned char pk[32])
{
	char hex[65];
	gl_hex(pk, 32, hex);
	jv kv = jv_object_set(jv_object(), jv_string("public"), jv_string(hex));
	jv o = jv_object_set(jv_object(), jv_string("keytype"), jv_string("ed25519"));
	o = jv_object_set(o, jv_string("scheme"), jv_string("ed25519"));
	return jv_object_set(o, jv_string("keyval"), kv);
}

void gl_keyid(const unsigned char pk[32], char out[GL_KEYID_HEX])
{
	autobuf struct gl_buf b = {0};
	autofail struct gl_fail f = {0};
	jv o = gl_pubkey_json(pk);
	gl_canon_dump(&b, o, &f); /* cannot fail: ASCII strings only */
	jv_free(o);
	unsigned char h[GL_SHA256_BYTES];
	gl_sha256(h, (const unsigned char *)b.data, b.len);
	gl_hex(h, sizeof h, out);
}

/* Is obj (borrowed) an object with exactly the n keys listed? */
static int exact_keys(jv obj, const char *const *keys, int n)
{
	if (jv_get_kind(obj) != JV_KIND_OBJECT || jv_object_length(jv_copy(obj)) != n)
		return 0;
	for (int i = 0; i < n; i++) {
		if (!jv_object_has(jv_copy(obj), jv_string(keys[i])))
			return 0;
	}
	return 1;
}

static int hex_field(jv obj, const char *key, unsigned char *out, size_t n)
{
	const char *s = gl_json_get_str(obj, key);
	return s && gl_unhex(s, strlen(s), out, n) == 0 ? 0 : -1;
}

int gl_pubkey_parse(jv obj, unsigned char pk[32], struct gl_fail *f)
{
	static const char *const top[] = {"keytype", "keyval", "scheme"};
	static const char *const val[] = {"public"};
	jv kv = gl_json_get(obj, "keyval");
	int ok = exact_keys(obj, top, 3) && exact_keys(kv, val, 1);
	const char *kt = gl_json_get_str(obj, "keytype"), *sc = gl_json_get_str(obj, "scheme");
	if (!ok || !kt || !sc || strcmp(kt, "ed25519") || strcmp(sc, "ed25519")) {
		jv_free(kv);
		return gl_fail(f, GL_E_IO,
			       "not an ed25519 public key object "
			       "{\"keytype\",\"keyval\":{\"public\"},\"scheme\"}");
	}
	int r = hex_field(kv, "public", pk, 32);
	jv_free(kv);
	if (r < 0)
		return gl_fail(f, GL_E_IO, "keyval.public is not 64 hex digits");
	return r;
}

/* ---- signatures -------------------------------------------------------- */

void gl_key_sign(const struct gl_key *k, const void *msg, size_t len, unsigned char sig[64])
{
	crypto_sign_detached(sig, NULL, msg, len, k->sk);
}

int gl_key_verify(const unsigned char pk[32], const void *msg, size_t len,
		  const unsigned char sig[64])
{
	return crypto_sign_verify_detached(sig, msg, len, pk) == 0;
}

/* ---- key files --------------------------------------------------------- */

void gl_key_paths(const char *arg, char **keypath, char **pubpath)
{
	size_t n = strlen(arg);
	if (n > 4 && (!strcmp(arg + n - 4, ".key") || !strcmp(arg + n - 4, ".pub")))
		n -= 4;
	*keypath = gl_xasprintf("%.*s.key", (int)n, arg);
	*pubpath = gl_xasprintf("%.*s.pub", (int)n, arg);
}

void gl_key_free(struct gl_key *k)
{
	if (k->sk)
		sodium_free(k->sk);
	k->sk = NULL;
	free(k->path);
	k->path = NULL;
}

/* Write data to path through a temporary file: link() when the name must
 * be new (atomic O_EXCL), rename() when replacing is allowed. */
static int write_new_file(const char *path, const void *data, size_t len, mode_t mode, int replace,
			  struct gl_fail *f)
{
	autofree char *tmp = gl_xasprintf("%s.tmp.XXXXXX", path);
	autoclose int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return gl_fail_errno(f, GL_E_IO, "%s", path);
	int rc = fchmod(fd, mode) < 0 || gl_write_all(fd, data, len) < 0 || fsync(fd) < 0 ? -1 : 0;
	if (rc == 0)
		rc = replace ? rename(tmp, path) : link(tmp, path);
	int e = errno;
	unlink(tmp);
	if (rc < 0 && e == EEXIST)
		return gl_fail(f, GL_E_IO, "%s exists (use --force to replace it)", path);
	if (rc < 0)
		return gl_fail(f, GL_E_IO, "%s: %s", path, strerror(e));
	return 0;
}

/* The plain key file text for seed/pk, in locked memory (canonical form:
 * keys sorted, no whitespace). */
static char *plain_key_text(const unsigned char *seed, const unsigned char pk[32], size_t *len)
{
	char pub[65];
	gl_hex(pk, 32, pub);
	autolocked char *shex = gl_locked(65);
	sodium_bin2hex(shex, 65, seed, 32); /* constant time: the seed is secret */
	size_t cap = 256;
	char *t = gl_locked(cap);
	int n =
	    snprintf(t, cap,
		     "{\"keytype\":\"ed25519\",\"keyval\":{\"private\":\"%s\",\"public\":\"%s\"},"
		     "\"scheme\":\"ed25519\"}",
		     shex, pub);
	*len = (size_t)n;
	return t;
}

/* The encrypted key file text for seed/pk (no secret in it). */
static enum gl_code encrypted_key_text(const char *what, const unsigned char *seed,
				       const unsigned char pk[32], struct gl_buf *out,
				       struct gl_fail *f)
{
	autolocked char *pass = gl_locked(GL_PASS_MAX + 1);
	enum gl_code st = gl_passphrase(what, 1, pass, f);
	if (st != GL_E_OK)
		return st;
	if (!*pass)
		return gl_fail_set(f, GL_E_IO,
				   "empty passphrase (use --no-passphrase for an unencrypted key)");
	unsigned char salt[crypto_pwhash_SALTBYTES], nonce[crypto_secretbox_NONCEBYTES];
	unsigned char ct[32 + crypto_secretbox_MACBYTES];
	randombytes_buf(salt, sizeof salt);
	randombytes_buf(nonce, sizeof nonce);
	unsigned long long ops = crypto_pwhash_OPSLIMIT_INTERACTIVE;
	size_t mem = crypto_pwhash_MEMLIMIT_INTERACTIVE;
	autolocked unsigned char *key = gl_locked(crypto_secretbox_KEYBYTES);
	if (crypto_pwhash(key, crypto_secretbox_KEYBYTES, pass, strlen(pass), salt, ops, mem,
			  crypto_pwhash_ALG_ARGON2ID13) != 0)
		return gl_fail_set(f, GL_E_IO, "argon2id: out of memory");
	crypto_secretbox_easy(ct, seed, 32, nonce, key);
	char hs[2 * sizeof salt + 1], hn[2 * sizeof nonce + 1], hc[2 * sizeof ct + 1];
	gl_hex(salt, sizeof salt, hs);
	gl_hex(nonce, sizeof nonce, hn);
	gl_hex(ct, sizeof ct, hc);
	jv enc = jv_object();
	enc = jv_object_set(enc, jv_string("kdf"), jv_string(KDF_NAME));
	enc = jv_object_set(enc, jv_string("opslimit"), jv_number((double)ops));
	enc = jv_object_set(enc, jv_string("memlimit"), jv_number((double)mem));
	enc = jv_object_set(enc, jv_string("salt"), jv_string(hs));
	enc = jv_object_set(enc, jv_string("nonce"), jv_string(hn));
	enc = jv_object_set(enc, jv_string("ciphertext"), jv_string(hc));
	jv o = jv_object_set(gl_pubkey_json(pk), jv_string("encrypted"), enc);
	autofail struct gl_fail cf = {0};
	gl_canon_dump(out, o, &cf); /* cannot fail: ASCII strings and integers */
	jv_free(o);
	return GL_E_OK;
}

enum gl_code gl_key_generate(const char *prefix, int plain, int force, struct gl_key *k,
			     struct gl_fail *f)
{
	autofree char *keypath = NULL, *pubpath = NULL;
	gl_key_paths(prefix, &keypath, &pubpath);
	if (!force && (access(keypath, F_OK) == 0 || access(pubpath, F_OK) == 0))
		return gl_fail_set(f, GL_E_IO, "%s exists (use --force to replace it)",
				   access(keypath, F_OK) == 0 ? keypath : pubpath);
	autolocked unsigned char *seed = gl_locked(32);
	unsigned char *sk = gl_locked(crypto_sign_SECRETKEYBYTES);
	randombytes_buf(seed, 32);
	crypto_sign_seed_keypair(k->pk, sk, seed);
	gl_keyid(k->pk, k->keyid);
	k->sk = sk;
	k->path = gl_xstrdup(keypath);

	if (plain) {
		size_t len;
		autolocked char *text = plain_key_text(seed, k->pk, &len);
		if (write_new_file(keypath, text, len, 0600, force, f) < 0)
			return GL_E_IO;
	} else {
		autobuf struct gl_buf text = {0};
		enum gl_code st = encrypted_key_text(keypath, seed, k->pk, &text, f);
		if (st != GL_E_OK)
			return st;
		if (write_new_file(keypath, text.data, text.len, 0600, force, f) < 0)
			return GL_E_IO;
	}
	autobuf struct gl_buf pub = {0};
	autofail struct gl_fail cf = {0};
	jv po = gl_pubkey_json(k->pk);
	gl_canon_dump(&pub, po, &cf); /* cannot fail: ASCII strings only */
	jv_free(po);
	return write_new_file(pubpath, pub.data, pub.len, 0644, force, f) < 0 ? GL_E_IO : GL_E_OK;
}

/* Read a key file (at most GL_KEY_FILE_MAX bytes) into locked memory. */
static enum gl_code read_locked(const char *path, char **out, size_t *len, struct gl_fail *f)
{
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_size > GL_KEY_FILE_MAX)
		return gl_fail_set(f, GL_E_IO,
				   "%s: not a key file (a regular file of at most %u bytes)", path,
				   GL_KEY_FILE_MAX);
	char *buf = gl_locked(GL_KEY_FILE_MAX + 2);
	ssize_t n = gl_read_full(fd, buf, GL_KEY_FILE_MAX + 1);
	if (n < 0 || n > GL_KEY_FILE_MAX) {
		sodium_free(buf);
		return gl_fail_set(f, GL_E_IO, "%s: %s", path,
				   n < 0 ? strerror(errno) : "file too large");
	}
	buf[n] = 0;
	*out = buf;
	*len = (size_t)n;
	return GL_E_OK;
}

/* Decode n secret bytes from exactly 2n hex digits with libsodium's
 * constant-time decoder (no branch or table index on a digit's value);
 * -1 for a wrong length or a non-hex digit, as gl_unhex. */
static int unhex_secret(const char *hex, size_t hexlen, unsigned char *out, size_t n)
{
	size_t got = 0;
	const char *end = NULL;
	if (hexlen != 2 * n || sodium_hex2bin(out, n, hex, hexlen, NULL, &got, &end) != 0 ||
	    got != n || end != hex + hexlen) {
		sodium_memzero(out, n);
		return -1;
	}
	return 0;
}

/* Take the seed out of a plain key file's text (see the top comment).
 * 1 taken, 0 none present, -1 malformed. */
static int take_seed(char *buf, size_t len, unsigned char *seed)
{
	const size_t tag = sizeof SEED_HEX_AT - 1;
	char *at = memmem(buf, len, SEED_HEX_AT, tag);
	if (!at)
		return 0;
	char *hex = at + tag;
	if (memmem(hex, len - (size_t)(hex - buf), SEED_HEX_AT, tag))
		return -1;
	if ((size_t)(buf + len - hex) < 65 || hex[64] != '"' ||
	    unhex_secret(hex, 64, seed, 32) < 0)
		return -1;
	memset(hex, '0', 64);
	return 1;
}

static int is_zero_hex64(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0") == 64;
}

/* Decrypt the "encrypted" object of a key file into seed. */
static enum gl_code decrypt_seed(const char *path, jv enc, unsigned char *seed,
				 struct gl_fail *f)
{
	static const char *const fields[] = {"kdf",  "opslimit", "memlimit",
					     "salt", "nonce",	 "ciphertext"};
	unsigned char salt[crypto_pwhash_SALTBYTES], nonce[crypto_secretbox_NONCEBYTES];
	unsigned char ct[32 + crypto_secretbox_MACBYTES];
	int64_t ops, mem;
	const char *kdf = gl_json_get_str(enc, "kdf");
	if (!exact_keys(enc, fields, 6) || !kdf || strcmp(kdf, KDF_NAME) ||
	    gl_json_get_int(enc, "opslimit", &ops) < 0 ||
	    gl_json_get_int(enc, "memlimit", &mem) < 0 ||
	    hex_field(enc, "salt", salt, sizeof salt) < 0 ||
	    hex_field(enc, "nonce", nonce, sizeof nonce) < 0 ||
	    hex_field(enc, "ciphertext", ct, sizeof ct) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: malformed \"encrypted\" object", path);
	if (ops < (int64_t)crypto_pwhash_OPSLIMIT_MIN || (uint64_t)ops > OPS_MAX ||
	    mem < (int64_t)crypto_pwhash_MEMLIMIT_MIN || (uint64_t)mem > MEM_MAX)
		return gl_fail_set(
		    f, GL_E_IO, "%s: argon2id limits out of bounds (opslimit %lld, memlimit %lld)",
		    path, (long long)ops, (long long)mem);
	autolocked char *pass = gl_locked(GL_PASS_MAX + 1);
	enum gl_code st = gl_passphrase(path, 0, pass, f);
	if (st != GL_E_OK)
		return st;
	autolocked unsigned char *key = gl_locked(crypto_secretbox_KEYBYTES);
	if (crypto_pwhash(key, crypto_secretbox_KEYBYTES, pass, strlen(pass), salt,
			  (unsigned long long)ops, (size_t)mem,
			  crypto_pwhash_ALG_ARGON2ID13) != 0)
		return gl_fail_set(f, GL_E_IO, "argon2id: out of memory");
	if (crypto_secretbox_open_easy(seed, ct, sizeof ct, nonce, key) != 0)
		return gl_fail_set(f, GL_E_BAD_PASSPHRASE,
				   "%s: wrong passphrase or damaged key file", path);
	return GL_E_OK;
}

/* Check a parsed key file (borrowed) and fill pk; seed_taken says whether
 * take_seed() found a plain seed. */
static enum gl_code check_key_obj(const char *path, jv o, int seed_taken, unsigned char pk[32],
				  struct gl_fail *f)
{
	jv pubobj = jv_copy(o), kv = gl_json_get(o, "keyval");
	const char *priv = gl_json_get_str(kv, "private");
	int enc = jv_object_has(jv_copy(o), jv_string("encrypted"));
	int shape = seed_taken ? (!enc && is_zero_hex64(priv)) : (enc && !priv);
	if (shape) {
		pubobj = jv_object_delete(pubobj, jv_string("encrypted"));
		jv pkv = jv_object_delete(jv_copy(kv), jv_string("private"));
		pubobj = jv_object_set(pubobj, jv_string("keyval"), pkv);
	}
	autofail struct gl_fail pf = {0};
	int bad = !shape || gl_pubkey_parse(pubobj, pk, &pf) < 0;
	const char *perr = pf.detail;
	jv_free(pubobj);
	jv_free(kv);
	if (bad)
		return gl_fail_set(f, GL_E_IO, "%s: not a germline key file (%s)", path,
				   perr ? perr : "expected keyval.private or \"encrypted\"");
	return GL_E_OK;
}

/* Load a .key file: decrypt it into k->sk when want_secret, else only
 * read its public half (no passphrase asked). */
static enum gl_code load_key_file(const char *path, int want_secret, struct gl_key *k,
				  struct gl_fail *f)
{
	struct stat st;
	if (want_secret && stat(path, &st) == 0 && (st.st_mode & 077))
		gl_warn("%s is readable by others (mode %04o); chmod 600 it", path,
			(unsigned)(st.st_mode & 07777));
	autolocked char *buf = NULL;
	size_t len = 0;
	enum gl_code s = read_locked(path, &buf, &len, f);
	if (s != GL_E_OK)
		return s;
	autolocked unsigned char *seed = gl_locked(32);
	int taken = take_seed(buf, len, seed);
	jv o = taken < 0 ? jv_invalid_with_msg(jv_string("malformed keyval.private"))
			 : gl_json_parse(buf, len);
	if (!jv_is_valid(o)) {
		jv msg = jv_invalid_get_msg(o);
		gl_fail_set(f, GL_E_IO, "%s: %s", path,
			    jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "bad JSON");
		jv_free(msg);
		return GL_E_IO;
	}
	unsigned char filepk[32];
	s = check_key_obj(path, o, taken, filepk, f);
	if (s == GL_E_OK && !want_secret) {
		jv_free(o);
		memcpy(k->pk, filepk, 32);
		return GL_E_OK;
	}
	if (s == GL_E_OK && !taken) {
		jv enc = gl_json_get(o, "encrypted");
		s = decrypt_seed(path, enc, seed, f);
		jv_free(enc);
	}
	jv_free(o);
	if (s != GL_E_OK)
		return s;
	k->sk = gl_locked(crypto_sign_SECRETKEYBYTES);
	crypto_sign_seed_keypair(k->pk, k->sk, seed);
	if (sodium_memcmp(k->pk, filepk, 32) != 0)
		return gl_fail_set(f, GL_E_IO, "%s: keyval.public does not match the private key",
				   path);
	return GL_E_OK;
}

/* The public key from a .pub file, or from a .key file's public half. */
static enum gl_code load_public(const char *path, struct gl_key *k, struct gl_fail *f)
{
	autofree char *buf = NULL;
	size_t len;
	if (gl_read_file_capped(path, GL_KEY_FILE_MAX, &buf, &len) < 0)
		return gl_fail_set(f, GL_E_IO, "%s: %s", path, strerror(errno));
	jv o = gl_json_parse(buf, len);
	autofail struct gl_fail pf = {0};
	int bad = !jv_is_valid(o) || gl_pubkey_parse(o, k->pk, &pf) < 0;
	const char *perr = pf.detail;
	jv_free(o);
	if (bad)
		return gl_fail_set(f, GL_E_IO, "%s: not a public key file (%s)", path,
				   perr ? perr : "invalid JSON");
	return GL_E_OK;
}

enum gl_code gl_key_load(const char *arg, enum gl_key_need need, struct gl_key *k,
			 struct gl_fail *f)
{
	memset(k, 0, sizeof *k);
	if (sodium_init() < 0)
		return gl_fail_set(f, GL_E_IO, "libsodium failed to initialise");
	autofree char *keypath = NULL, *pubpath = NULL;
	gl_key_paths(arg, &keypath, &pubpath);
	size_t n = strlen(arg);
	int named_pub = n > 4 && !strcmp(arg + n - 4, ".pub");
	const char *path;
	if (need == GL_KEY_SECRET)
		path = keypath;
	else if (need == GL_KEY_ANY)
		path = !named_pub && access(keypath, F_OK) == 0 ? keypath : pubpath;
	else
		path = access(pubpath, F_OK) == 0 || named_pub ? pubpath : keypath;
	if (need == GL_KEY_SECRET && named_pub)
		return gl_fail_set(f, GL_E_IO, "%s: a public key cannot sign; give the .key", arg);
	k->path = gl_xstrdup(path);
	enum gl_code s;
	if (path == keypath)
		s = load_key_file(path, need != GL_KEY_PUBLIC, k, f);
	else
		s = load_public(path, k, f);
	if (s != GL_E_OK) {
		gl_key_free(k);
		return s;
	}
	gl_keyid(k->pk, k->keyid);
	return GL_E_OK;
}
