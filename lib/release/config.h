/* config.h — the operator's configuration of a release's server (SPEC §4
 * "config"; docs/secrets.md):
 *
 *   "config":{"server-github":{"args":["--toolsets","repos"],"env":{"LOG":"warn"},
 *             "secrets":{"GITHUB_TOKEN":{"value":"ghp_…","to":["api.github.com"],
 *                                         "in":["header:authorization"]}}}}
 *
 * keyed by the release's manifest "name". args and env are public: they
 * are part of the germline, like the release's own code (data-free, paper
 * A2). A secret never is: the germline and every copy see its variable
 * with the fixed text GERMLINE_SECRET_NAME, and the broker puts the value
 * in that text's place only in what it sends to a host of "to"
 * (lib/broker/secrets.h), and takes it out of every reply. The policy is
 * the deployer's, never the release's (paper §III-A).
 *
 * The checks, each refused by name (usage): at most 64 args and 32 env
 * variables and 16 secrets per release; names [A-Z_][A-Z0-9_]* of at most
 * 64 bytes, none that germline sets itself (PATH, HOME, TMPDIR, LANG,
 * NODE_OPTIONS, LD_*, PYTHON*, GL_*, GERMLINE_*, the thread counts), no
 * name both a variable and a secret; texts of at most 4096 bytes without
 * NUL; a secret value of 8 to 4096 printable ASCII bytes (never a
 * header-breaking byte, never the placeholder prefix), at most 16 hosts in
 * "to" (host names as a manifest spells them), "in" a non-empty subset of
 * "url", "headers", "body" and "header:NAME" (default: all three). */
#ifndef GL_CONFIG_H
#define GL_CONFIG_H

#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/fail.h"

#define GL_CONFIG_RELEASES_MAX 4096
#define GL_CONFIG_ARGS_MAX 64
#define GL_CONFIG_ENV_MAX 32
#define GL_CONFIG_SECRETS_MAX 16
#define GL_CONFIG_TO_MAX 16
#define GL_CONFIG_TEXT_MAX 4096
#define GL_SECRET_VALUE_MIN 8
#define GL_SECRET_PREFIX "GERMLINE_SECRET_"

/* Where in a request to a host of "to" the value replaces the placeholder. */
enum { GL_SECRET_IN_URL = 1u, GL_SECRET_IN_HEADERS = 2u, GL_SECRET_IN_BODY = 4u };

/* How the broker itself authenticates a stream connection to a host:port
 * of "to" with the value ("in": ["auth:redis"] or ["auth:postgres"];
 * lib/broker/stream_auth.c, docs/streams.md "Passwords"): the copy's
 * client sends none, and the value never passes through a copy. */
enum gl_secret_auth { GL_SECRET_AUTH_NONE, GL_SECRET_AUTH_REDIS, GL_SECRET_AUTH_POSTGRES };

struct gl_secret {
	char *name;        /* the copy's variable */
	char *placeholder; /* GERMLINE_SECRET_<name>: all a copy ever sees */
	char *value;       /* NULL in a public configuration (a witness's) */
	size_t value_len;
	char *in_url;      /* the value percent-encoded (RFC 3986 unreserved bytes kept):
			    * what goes in a URL, so no value changes its shape */
	/* the value as a reply may carry it back, each searched for and taken
	 * out (lib/broker/secrets.h): as it is, percent-encoded with upper-
	 * and lowercase hex, JSON-escaped with '/' as it is and as "\/";
	 * distinct, NULL-terminated; all NULL in a public configuration */
	char *form[6];
	char **to;         /* lowercase hosts, or host:port with auth; NULL-terminated */
	unsigned in;       /* GL_SECRET_IN_* (0 with auth) */
	enum gl_secret_auth auth;
	char **header;     /* "header:NAME" entries' names (lowercase), NULL-terminated;
			    * with none and GL_SECRET_IN_HEADERS: every header */
};

/* One text rewritten into another: a secret's placeholder into its value
 * in a request, or a form of its value into its placeholder in a reply
 * (lib/broker/secrets.c). Strings borrowed from the configuration. */
struct gl_secret_form {
	const char *from, *to;
	size_t len; /* of from */
};

struct gl_config {
	char *release;         /* the manifest name it configures */
	char **args;           /* appended to the server's argv, NULL-terminated */
	char **env;            /* "NAME=value", the operator's public variables */
	struct gl_secret *secret;
	size_t nargs, nenv, nsecret;
	/* what the germline and every copy get: env, then one
	 * "NAME=GERMLINE_SECRET_NAME" per secret; NULL-terminated */
	char **copy_env;
	size_t ncopy_env;
	/* "GL_RELEASE_ARGS=<args as a JSON array>" for the python host, which
	 * sets the release's sys.argv[1:] from it; NULL: no args */
	char *args_env;
	/* what every reply is searched for: each form of each value with its
	 * placeholder, the longest first, so that a form inside another is
	 * never taken out of it first (NULL in a public configuration) */
	struct gl_secret_form *forms;
	size_t nforms;
};

/* Read one release's configuration o (borrowed) for release name into c.
 * public_only: the form gl_config_public writes (a witness's), whose
 * secrets carry no value. 0, or -1 with f (usage) naming the field under
 * "config.<name>". */
int gl_config_parse(jv o, const char *name, bool public_only, struct gl_config *c,
		    struct gl_fail *f);
void gl_config_free(struct gl_config *c);

/* c without the secrets' values (owned): {"args","env","secrets":{NAME:
 * {"to","in"}}} — what a witness records, so that gl-replay launches the
 * germline the call's copies came from (A2) without ever holding a secret. */
jv gl_config_public(const struct gl_config *c);

/* SHA-256 (hex) of the canonical JSON of gl_config_public(c): what a
 * launch receipt binds as "config_sha256" (docs/receipts.md). */
void gl_config_digest(const struct gl_config *c, char hex[65]);

/* Whether s is bound to host (one of its "to"). */
bool gl_secret_binds(const struct gl_secret *s, const char *host);

/* The secret with which the broker authenticates stream destination dest
 * (host:port), or NULL: at most one (gl_config_parse). */
const struct gl_secret *gl_config_stream_auth(const struct gl_config *c, const char *dest);

/* Whether header name (any case) is one that s's value may be put in. */
bool gl_secret_in_header(const struct gl_secret *s, const char *name);

#endif
