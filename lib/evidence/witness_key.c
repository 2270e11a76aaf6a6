/* witness_key.c — the witness signing key and the auditor's trusted keys;
 * see witness_key.h and docs/witness.md "Who made a witness". */
#define _GNU_SOURCE
#include "evidence/witness_key.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha.h"
#include "core/util.h"
#include "json/json.h"

int gl_witness_key_own(const char *home, struct gl_key *k, struct gl_fail *f)
{
	autofree char *dir = gl_xasprintf("%s/keys", home);
	autofree char *path = gl_xasprintf("%s/witness.key", dir);
	if (gl_mkdir_p(dir, 0700) < 0) /* GL_HOME too, as witnesses/ is made */
		return gl_fail_errno(f, GL_E_IO, "%s", dir);
	if (access(path, F_OK) < 0) {
		/* A key of our own under a name no other gl-run uses, then linked
		 * into place: two first runs never leave two keys, nor a torn one. */
		unsigned char r[8];
		char rh[17];
		randombytes_buf(r, sizeof r);
		gl_hex(r, sizeof r, rh);
		autofree char *tmp = gl_xasprintf("%s/.witness-%s", dir, rh);
		autofree char *tkey = gl_xasprintf("%s.key", tmp), *tpub = gl_xasprintf("%s.pub", tmp);
		struct gl_key fresh = {0};
		enum gl_code st = gl_key_generate(tmp, 1, 0, &fresh, f);
		gl_key_free(&fresh);
		int rc = st == GL_E_OK ? link(tkey, path) : -1;
		int e = errno;
		unlink(tkey);
		unlink(tpub);
		if (st != GL_E_OK)
			return -1;
		if (rc < 0 && e != EEXIST)
			return gl_fail(f, GL_E_IO, "%s: %s", path, strerror(e));
	}
	if (gl_key_load(path, GL_KEY_SECRET, k, f) != GL_E_OK)
		return -1;
	return 0;
}

int gl_witness_key_record(const char *home, const struct gl_key *k, struct gl_fail *f)
{
	autofree char *dir = gl_xasprintf("%s/keys/trusted", home);
	if (gl_mkdir_p(dir, 0700) < 0)
		return gl_fail_errno(f, GL_E_IO, "%s", dir);
	autofree char *path = gl_xasprintf("%s/%s.pub", dir, k->keyid);
	autobuf struct gl_buf b = {0};
	autofail struct gl_fail cf = {0};
	jv po = gl_pubkey_json(k->pk);
	gl_canon_dump(&b, po, &cf); /* cannot fail: ASCII strings only */
	jv_free(po);
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == b.len)
		return 0; /* recorded before (gl_witness_trust_home checks its bytes) */
	if (gl_atomic_write(path, b.data, b.len, 0644) < 0)
		return gl_fail_errno(f, GL_E_IO, "%s", path);
	return 0;
}

/* GL_WITNESS_SIG_CONTEXT followed by the digest's 64 hex digits. */
int gl_statement_digest(jv v, char hex[65], struct gl_fail *f)
{
	autobuf struct gl_buf body = {0};
	if (gl_canon_dump(&body, v, f) < 0)
		return -1;
	unsigned char h[32];
	gl_sha256(h, (unsigned char *)body.data, body.len);
	gl_hex(h, 32, hex);
	return 0;
}

int gl_witness_digest(jv rec, bool without_signature, char hex[65], struct gl_fail *f)
{
	jv rest = jv_object_delete(jv_copy(rec), jv_string("record_sha256"));
	if (without_signature)
		rest = jv_object_delete(rest, jv_string("signature"));
	int rc = gl_statement_digest(rest, hex, f);
	jv_free(rest);
	return rc;
}

/* context then digest (64 hex): the signed bytes of a statement. */
static size_t message(const char *context, const char digest[65], char out[128])
{
	size_t c = strlen(context);
	memcpy(out, context, c);
	memcpy(out + c, digest, 64);
	return c + 64;
}

void gl_statement_sign(const struct gl_key *k, const char *context, const char digest[65],
		       char sig[129])
{
	char m[128];
	unsigned char s[64];
	size_t n = message(context, digest, m);
	gl_key_sign(k, m, n, s);
	gl_hex(s, sizeof s, sig);
}

bool gl_statement_sig_ok(const unsigned char pk[32], const char *context, const char digest[65],
			 const char *sig)
{
	unsigned char s[64];
	if (!sig || strlen(sig) != 128 || strspn(sig, "0123456789abcdef") != 128 ||
	    gl_unhex(sig, 128, s, sizeof s) < 0)
		return false;
	char m[128];
	size_t n = message(context, digest, m);
	return gl_key_verify(pk, m, n, s) == 1;
}

void gl_witness_sign(const struct gl_key *k, const char digest[65], char sig[129])
{
	gl_statement_sign(k, GL_WITNESS_SIG_CONTEXT, digest, sig);
}

bool gl_witness_sig_ok(const unsigned char pk[32], const char digest[65], const char *sig)
{
	return gl_statement_sig_ok(pk, GL_WITNESS_SIG_CONTEXT, digest, sig);
}

static int add_id(struct gl_witness_trust *t, const char *keyid, struct gl_fail *f)
{
	if (gl_witness_trusted(t, keyid))
		return 0;
	if (t->n >= GL_WITNESS_TRUST_MAX)
		return gl_fail(f, GL_E_IO, "more than %u trusted keys", GL_WITNESS_TRUST_MAX);
	t->id = gl_xrealloc(t->id, (t->n + 1) * sizeof *t->id);
	memcpy(t->id[t->n++], keyid, 65);
	return 0;
}

int gl_witness_trust_add(struct gl_witness_trust *t, const char *arg, struct gl_fail *f)
{
	struct gl_key k;
	if (gl_key_load(arg, GL_KEY_PUBLIC, &k, f) != GL_E_OK)
		return -1;
	int rc = add_id(t, k.keyid, f);
	gl_key_free(&k);
	return rc;
}

bool gl_witness_trusted(const struct gl_witness_trust *t, const char *keyid)
{
	for (size_t i = 0; keyid && i < t->n; i++)
		if (!strcmp(t->id[i], keyid))
			return true;
	return false;
}

bool gl_witness_key_local(const char *home, const char *keyid)
{
	if (!home || !keyid || !gl_sha256_hex_ok(keyid, strlen(keyid)))
		return false;
	autofree char *p = gl_xasprintf("%s/keys/trusted/%s.pub", home, keyid);
	struct gl_key k;
	autofail struct gl_fail f = {0};
	if (gl_key_load(p, GL_KEY_PUBLIC, &k, &f) != GL_E_OK)
		return false; /* none, or not a key */
	/* the name is what is trusted: the file must hold that key */
	bool ok = !strcmp(k.keyid, keyid);
	gl_key_free(&k);
	return ok;
}

bool gl_witness_trusted_home(struct gl_witness_trust *t, const char *home, const char *keyid)
{
	if (gl_witness_trusted(t, keyid))
		return true;
	autofail struct gl_fail f = {0};
	return gl_witness_key_local(home, keyid) && add_id(t, keyid, &f) == 0;
}

void gl_witness_trust_free(struct gl_witness_trust *t)
{
	free(t->id);
	*t = (struct gl_witness_trust){0};
}

bool gl_witness_trust_off(void)
{
	return GL_TEST_SWITCH("GL_TEST_WITNESS_TRUST_OFF");
}
