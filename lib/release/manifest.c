/* manifest.c — strict validation of release manifests; see manifest.h.
 *
 * The manifest is written by the adversary of paper §III-A: it chooses the
 * declared destinations D_f (which decide how many copies run, Theorem 3)
 * and the determinism declaration (Table XIV), never what a destination may
 * receive. So the checks here are about shape only, and they are total:
 * every field is known, every string bounded, every host in one spelling. */
#define _GNU_SOURCE
#include "release/manifest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "json/json.h"
#include "core/util.h"

/* ---- name rules (hosts and paths: lib/release/names.c) ------------------ */

#define ALPHA "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define ALNUM ALPHA "0123456789"

/* 1..max bytes, the first from first, the others from rest. */
static bool chars_ok(const char *s, size_t len, size_t max, const char *first, const char *rest)
{
	return len > 0 && len <= max && s[0] && strchr(first, s[0]) &&
	       strspn(s + 1, rest) == len - 1;
}

/* An ASCII identifier [A-Za-z_][A-Za-z0-9_]*. */
static bool ident_ok(const char *s, size_t len, size_t max)
{
	return chars_ok(s, len, max, ALPHA "_", ALNUM "_");
}

/* ---- checking --------------------------------------------------------- */

static bool str_of(jv v, const char **s, size_t *len)
{
	if (jv_get_kind(v) != JV_KIND_STRING)
		return false;
	*s = jv_string_value(v);
	*len = (size_t)jv_string_length_bytes(jv_copy(v));
	return true;
}

/* Refuse keys of obj (borrowed) not in allowed (NULL-terminated). */
static int only_keys(jv obj, const char *const *allowed, const char *where, struct gl_fail *f)
{
	int r = 0;
	jv_object_foreach(obj, k, v)
	{
		jv_free(v);
		bool known = false;
		for (size_t i = 0; allowed[i]; i++)
			known = known || strcmp(jv_string_value(k), allowed[i]) == 0;
		if (!known && r == 0) {
			size_t len = (size_t)jv_string_length_bytes(jv_copy(k));
			autofree char *s = gl_quote(jv_string_value(k), len);
			r = where ? gl_fail(f, GL_E_BAD_MANIFEST, "%s: unknown field %s", where, s)
				  : gl_fail(f, GL_E_BAD_MANIFEST, "unknown field %s", s);
		}
		jv_free(k);
	}
	return r;
}

/* A string field matching ok(); required unless opt. Borrows m. */
static int check_str(jv m, const char *key, bool opt, bool (*ok)(const char *, size_t),
		     const char *rule, struct gl_fail *f)
{
	jv v = gl_json_get(m, key);
	if (!jv_is_valid(v)) {
		jv_free(v);
		if (opt)
			return 0;
		return gl_fail(f, GL_E_BAD_MANIFEST, "%s: missing", key);
	}
	const char *s;
	size_t len;
	int r = 0;
	if (!str_of(v, &s, &len)) {
		r = gl_fail(f, GL_E_BAD_MANIFEST, "%s: not a string", key);
	} else if (!ok(s, len)) {
		char *sh = gl_quote(s, len);
		r = gl_fail(f, GL_E_BAD_MANIFEST, "%s: %s is not %s", key, sh, rule);
		free(sh);
	}
	jv_free(v);
	return r;
}

/* An array of at most max strings, each ok(), none repeated. Borrows a. */
static int check_str_array(jv a, const char *where, size_t max, bool allow_dups,
			   bool (*ok)(const char *, size_t), const char *rule, struct gl_fail *f)
{
	if (jv_get_kind(a) != JV_KIND_ARRAY)
		return gl_fail(f, GL_E_BAD_MANIFEST, "%s: not an array", where);
	int n = jv_array_length(jv_copy(a));
	if ((size_t)n > max)
		return gl_fail(f, GL_E_BAD_MANIFEST, "%s: %d elements (at most %zu)", where, n,
			       max);
	for (int i = 0; i < n; i++) {
		jv e = jv_array_get(jv_copy(a), i);
		const char *s = NULL;
		size_t len = 0;
		int r = 0;
		if (!str_of(e, &s, &len)) {
			r = gl_fail(f, GL_E_BAD_MANIFEST, "%s[%d]: not a string", where, i);
		} else if (ok && !ok(s, len)) {
			char *sh = gl_quote(s, len);
			r = gl_fail(f, GL_E_BAD_MANIFEST, "%s[%d]: %s is not %s", where, i, sh,
				    rule);
			free(sh);
		}
		for (int j = 0; r == 0 && !allow_dups && j < i; j++) {
			jv o = jv_array_get(jv_copy(a), j);
			if (jv_equal(o, jv_copy(e))) {
				char *sh = gl_quote(s, len);
				r = gl_fail(f, GL_E_BAD_MANIFEST, "%s[%d]: %s listed twice", where,
					    i, sh);
				free(sh);
			}
		}
		jv_free(e);
		if (r)
			return -1;
	}
	return 0;
}

static bool name_ok(const char *s, size_t len) { return chars_ok(s, len, 64, ALNUM, ALNUM "._-"); }

static bool version_ok(const char *s, size_t len)
{
	return chars_ok(s, len, 64, ALNUM, ALNUM ".+_-");
}

static bool runtime_ok(const char *s, size_t len)
{
	return (len == 6 && !memcmp(s, "python", 6)) || (len == 4 && !memcmp(s, "exec", 4));
}

static bool protocol_ok(const char *s, size_t len)
{
	return (len == 8 && !memcmp(s, "germline", 8)) || (len == 9 && !memcmp(s, "mcp-stdio", 9));
}

/* A dotted Python module path of ASCII identifiers: "pkg.mod". */
static bool module_ok(const char *s, size_t len)
{
	if (len == 0 || len > 256)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++)
		if (i == len || s[i] == '.') {
			if (!ident_ok(s + start, i - start, 256))
				return false;
			start = i + 1;
		}
	return true;
}

static bool description_ok(const char *s, size_t len) { return s && len <= 4096; }
static bool argv_ok(const char *s, size_t len) { return s && len <= GL_PATH_MAX; }

/* argv[0] of an exec entry: absolute, or relative inside the release. */
static bool argv0_ok(const char *s, size_t len)
{
	if (s[0] == '/')
		return gl_path_clean(s, len);
	if (len == 0 || len > GL_PATH_MAX - 1)
		return false;
	char *abs = gl_xasprintf("/%.*s", (int)len, s);
	bool ok = gl_path_clean(abs, len + 1);
	free(abs);
	return ok;
}

static bool fn_name_ok(const char *s, size_t len) { return ident_ok(s, len, 128); }
static bool mcp_name_ok(const char *s, size_t len)
{
	return chars_ok(s, len, 128, ALNUM "_", ALNUM "_.-");
}
static bool arg_name_ok(const char *s, size_t len) { return mcp_name_ok(s, len); }

bool gl_mcp_method_fn(const char *name)
{
	return !strcmp(name, GL_MCP_RESOURCE_READ) || !strcmp(name, GL_MCP_PROMPT_GET) ||
	       !strcmp(name, GL_MCP_COMPLETE);
}

static int check_entry(jv m, bool exec, struct gl_fail *f)
{
	if (!exec)
		return check_str(m, "entry", false, module_ok,
				 "a dotted Python module name (runtime python)", f);
	jv e = gl_json_get(m, "entry");
	int r = 0;
	if (!jv_is_valid(e)) {
		r = gl_fail(f, GL_E_BAD_MANIFEST, "entry: missing");
	} else if (jv_get_kind(e) != JV_KIND_ARRAY || jv_array_length(jv_copy(e)) == 0) {
		r = gl_fail(f, GL_E_BAD_MANIFEST,
			    "entry: not a non-empty argv array (runtime exec)");
	} else if (check_str_array(e, "entry", GL_MANIFEST_ARGV_MAX, true, argv_ok,
				   "at most 4096 bytes", f) < 0) {
		r = -1;
	} else {
		jv a0 = jv_array_get(jv_copy(e), 0);
		const char *s = "";
		size_t len = 0;
		if (!str_of(a0, &s, &len) || !argv0_ok(s, len)) {
			char *sh = gl_quote(s, len);
			r = gl_fail(f, GL_E_BAD_MANIFEST,
				    "entry[0]: %s is not a normalised path (absolute, or "
				    "relative without '..')",
				    sh);
			free(sh);
		}
		jv_free(a0);
	}
	jv_free(e);
	return r;
}

/* "dirs_from_args" (docs/exec.md "Directory items"): argument names like
 * items_from_args, none of them also there, and only for runtime exec,
 * whose copies read a directory item through their Landlock rules. */
static int check_dirs(jv fn, const char *where, bool exec, struct gl_fail *f)
{
	jv d = gl_json_get(fn, "dirs_from_args");
	jv a = gl_json_get(fn, "items_from_args");
	autofree char *w = gl_xasprintf("%s.dirs_from_args", where);
	int r = 0;
	if (!jv_is_valid(d)) {
		/* none */
	} else if (!exec) {
		r = gl_fail(f, GL_E_BAD_MANIFEST,
			    "%s: only for runtime exec (a copy reads a directory item "
			    "through its Landlock rules)",
			    w);
	} else {
		r = check_str_array(d, w, GL_MANIFEST_ARGS_MAX, false, arg_name_ok,
				    "an argument name", f);
	}
	if (r == 0 && jv_is_valid(d) && jv_get_kind(a) == JV_KIND_ARRAY) {
		jv_array_foreach(d, i, s)
		{
			jv_array_foreach(a, j, t)
			{
				if (r == 0 && jv_equal(jv_copy(s), jv_copy(t))) {
					autofree char *q = gl_quote(jv_string_value(s),
								    strlen(jv_string_value(s)));
					r = gl_fail(f, GL_E_BAD_MANIFEST,
						    "%s[%d]: %s is also in items_from_args "
						    "(an argument names files or directories)",
						    w, i, q);
				}
				(void)j;
				jv_free(t);
			}
			jv_free(s);
		}
	}
	jv_free(d);
	jv_free(a);
	return r;
}

/* "state" (issue 19; docs/formats.md): "slot", the default, the function's
 * copies read and write their horizon slot (Algorithm 1 lines 10, 23);
 * "none", the publisher's signed declaration that the function keeps no
 * state across calls: its copies get an empty call.state, any state_put
 * of theirs is refused (the call fails "protocol") and its calls take no
 * slot, so gl-run --jobs runs calls of one slot side by side. A release
 * keeping its workspace in the slot ("state_dir": true) cannot declare it. */
static int check_state(jv fn, const char *where, bool workspace, struct gl_fail *f)
{
	jv st = gl_json_get(fn, "state");
	int r = 0;
	if (!jv_is_valid(st)) {
		/* the default: a slot */
	} else if (jv_get_kind(st) != JV_KIND_STRING ||
		   (strcmp(jv_string_value(st), "slot") && strcmp(jv_string_value(st), "none"))) {
		r = gl_fail(f, GL_E_BAD_MANIFEST, "%s.state: not \"slot\" or \"none\"", where);
	} else if (workspace && !strcmp(jv_string_value(st), "none")) {
		r = gl_fail(f, GL_E_BAD_MANIFEST,
			    "%s.state: \"none\" with \"state_dir\": true (the workspace is "
			    "kept in the slot)",
			    where);
	}
	jv_free(st);
	return r;
}

int gl_stream_dests_check(jv dests, const char *where, struct gl_fail *f)
{
	unsigned port[GL_STREAM_DESTS_MAX];
	size_t n = 0;
	int r = 0;
	jv_array_foreach(dests, i, d)
	{
		unsigned p = jv_get_kind(d) == JV_KIND_STRING ? gl_dest_port(jv_string_value(d)) : 0;
		for (size_t k = 0; p && r == 0 && k < n; k++)
			if (port[k] == p)
				r = gl_fail(f, GL_E_BAD_MANIFEST,
					    "%s[%d]: a second stream destination on port %u (an exec "
					    "copy's relay listens once per port)",
					    where, i, p);
		if (p && r == 0 && n == GL_STREAM_DESTS_MAX)
			r = gl_fail(f, GL_E_BAD_MANIFEST, "%s: more than %d stream destinations",
				    where, GL_STREAM_DESTS_MAX);
		if (p && r == 0)
			port[n++] = p;
		jv_free(d);
	}
	return r;
}

static int check_function(jv fn, const char *name, bool exec, bool workspace, struct gl_fail *f)
{
	static const char *const keys[] = {"destinations", "destinations_from_call",
					   "items_from_args", "dirs_from_args", "state", NULL};
	autofree char *where = gl_xasprintf("functions.%s", name);
	if (jv_get_kind(fn) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_BAD_MANIFEST, "%s: not an object", where);
	if (only_keys(fn, keys, where, f) < 0)
		return -1;
	int r = 0;
	jv d = gl_json_get(fn, "destinations");
	if (jv_is_valid(d)) {
		autofree char *w = gl_xasprintf("%s.destinations", where);
		r = check_str_array(d, w, GL_MANIFEST_DESTS_MAX, false, gl_dest_ok,
				    "a lowercase host name or IP literal (no scheme or path), or "
				    "host:port for a TCP stream (a port other than 80 and 443)",
				    f);
		if (r == 0)
			r = gl_stream_dests_check(d, w, f);
	}
	jv_free(d);
	jv dfc = gl_json_get(fn, "destinations_from_call");
	if (r == 0 && jv_is_valid(dfc) && jv_get_kind(dfc) != JV_KIND_TRUE &&
	    jv_get_kind(dfc) != JV_KIND_FALSE)
		r = gl_fail(f, GL_E_BAD_MANIFEST, "%s.destinations_from_call: not a boolean",
			    where);
	jv_free(dfc);
	jv a = gl_json_get(fn, "items_from_args");
	if (r == 0 && jv_is_valid(a)) {
		autofree char *w = gl_xasprintf("%s.items_from_args", where);
		r = check_str_array(a, w, GL_MANIFEST_ARGS_MAX, false, arg_name_ok,
				    "an argument name", f);
	}
	jv_free(a);
	if (r == 0)
		r = check_dirs(fn, where, exec, f);
	if (r == 0)
		r = check_state(fn, where, workspace, f);
	return r;
}

static int check_functions(jv m, bool mcp, bool exec, struct gl_fail *f)
{
	bool workspace = gl_json_get_bool(m, "state_dir", 0) == 1;
	jv fns = gl_json_get(m, "functions");
	int r = 0;
	if (!jv_is_valid(fns)) {
		r = gl_fail(f, GL_E_BAD_MANIFEST, "functions: missing");
	} else if (jv_get_kind(fns) != JV_KIND_OBJECT) {
		r = gl_fail(f, GL_E_BAD_MANIFEST, "functions: not an object");
	} else {
		int n = jv_object_length(jv_copy(fns));
		if (n == 0 || n > GL_MANIFEST_FUNCTIONS_MAX) {
			r = gl_fail(f, GL_E_BAD_MANIFEST, "functions: %d declared (1 to %d)", n,
				    GL_MANIFEST_FUNCTIONS_MAX);
		}
	}
	if (r < 0) {
		jv_free(fns);
		return r;
	}
	jv_object_foreach(fns, k, v)
	{
		const char *s = jv_string_value(k);
		size_t len = (size_t)jv_string_length_bytes(jv_copy(k));
		if (r == 0 && !(mcp ? mcp_name_ok(s, len) || (strlen(s) == len && gl_mcp_method_fn(s)) : fn_name_ok(s, len))) {
			char *sh = gl_quote(s, len);
			r = gl_fail(f, GL_E_BAD_MANIFEST,
				    "functions: %s is not a function name (%s)", sh,
				    mcp ? "[A-Za-z0-9_][A-Za-z0-9_.-]*, MCP tool name, or "
					  "resources/read, prompts/get or completion/complete"
					: "an identifier [A-Za-z_][A-Za-z0-9_]*");
			free(sh);
		}
		if (r == 0)
			r = check_function(v, s, exec, workspace, f);
		jv_free(k);
		jv_free(v);
	}
	jv_free(fns);
	return r;
}

static bool env_name_ok(const char *s, size_t len)
{
	return chars_ok(s, len, 64, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_",
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
}

/* runtime exec only (docs/exec.md): "env", an object of at most 32
 * NAME -> value strings (NAME [A-Z_][A-Z0-9_]*, value at most 4096 bytes,
 * no NUL), and "state_dir", a boolean: a writable scratch directory per
 * copy, restored from and stored to its horizon slot. */
static int check_exec_extras(jv m, bool exec, struct gl_fail *f)
{
	jv env = gl_json_get(m, "env");
	jv sd = gl_json_get(m, "state_dir");
	int r = 0;
	if (!exec && (jv_is_valid(env) || jv_is_valid(sd))) {
		r = gl_fail(f, GL_E_BAD_MANIFEST,
			    jv_is_valid(env) ? "env: only for runtime exec"
					     : "state_dir: only for runtime exec");
	} else if (jv_is_valid(sd) && jv_get_kind(sd) != JV_KIND_TRUE &&
		   jv_get_kind(sd) != JV_KIND_FALSE) {
		r = gl_fail(f, GL_E_BAD_MANIFEST, "state_dir: not a boolean");
	} else if (jv_is_valid(env) && (jv_get_kind(env) != JV_KIND_OBJECT ||
					jv_object_length(jv_copy(env)) > 32)) {
		r = gl_fail(f, GL_E_BAD_MANIFEST, "env: not an object of at most 32 strings");
	} else if (jv_is_valid(env)) {
		jv_object_foreach(env, k, v)
		{
			const char *ks = jv_string_value(k);
			size_t kl = (size_t)jv_string_length_bytes(jv_copy(k));
			if (r == 0 && !env_name_ok(ks, kl)) {
				autofree char *q = gl_quote(ks, kl);
				r = gl_fail(f, GL_E_BAD_MANIFEST,
					    "env: %s is not a variable name ([A-Z_][A-Z0-9_]*)", q);
			} else if (r == 0 && (jv_get_kind(v) != JV_KIND_STRING ||
					      jv_string_length_bytes(jv_copy(v)) > 4096 ||
					      strlen(jv_string_value(v)) !=
						  (size_t)jv_string_length_bytes(jv_copy(v)))) {
				r = gl_fail(f, GL_E_BAD_MANIFEST,
					    "env.%s: not a string of at most 4096 bytes", ks);
			}
			jv_free(k);
			jv_free(v);
		}
	}
	jv_free(env);
	jv_free(sd);
	return r;
}

int gl_manifest_check(jv m, struct gl_fail *f)
{
	static const char *const keys[] = {"name",	 "version",    "runtime",
					   "entry",	 "protocol",   "functions",
					   "read_paths", "deterministic", "description",
					   "env",	 "state_dir",  NULL};
	if (jv_get_kind(m) != JV_KIND_OBJECT)
		return gl_fail(f, GL_E_BAD_MANIFEST, "not a JSON object");
	if (only_keys(m, keys, NULL, f) < 0 ||
	    check_str(m, "name", false, name_ok,
		      "a name ([A-Za-z0-9][A-Za-z0-9._-]*, at most 64 bytes)", f) < 0 ||
	    check_str(m, "version", false, version_ok,
		      "a version ([A-Za-z0-9][A-Za-z0-9.+_-]*, at most 64 bytes)", f) < 0 ||
	    check_str(m, "runtime", false, runtime_ok, "\"python\" or \"exec\"", f) < 0 ||
	    check_str(m, "protocol", true, protocol_ok, "\"germline\" or \"mcp-stdio\"", f) < 0 ||
	    check_str(m, "description", true, description_ok, "at most 4096 bytes", f) < 0)
		return -1;
	const char *rt = gl_json_get_str(m, "runtime");
	const char *proto = gl_json_get_str(m, "protocol");
	if (check_entry(m, strcmp(rt, "exec") == 0, f) < 0 ||
	    check_functions(m, proto && strcmp(proto, "mcp-stdio") == 0, strcmp(rt, "exec") == 0,
			    f) < 0)
		return -1;
	jv rp = gl_json_get(m, "read_paths");
	int r = 0;
	if (jv_is_valid(rp))
		r = check_str_array(rp, "read_paths", GL_MANIFEST_PATHS_MAX, false, gl_path_clean,
				    "an absolute normalised path (no '.', '..', '//' or trailing "
				    "'/')",
				    f);
	jv_free(rp);
	jv det = gl_json_get(m, "deterministic");
	if (r == 0 && jv_is_valid(det) && jv_get_kind(det) != JV_KIND_TRUE &&
	    jv_get_kind(det) != JV_KIND_FALSE)
		r = gl_fail(f, GL_E_BAD_MANIFEST, "deterministic: not a boolean");
	jv_free(det);
	if (r == 0)
		r = check_exec_extras(m, strcmp(rt, "exec") == 0, f);
	return r;
}

jv gl_manifest_parse(const char *buf, size_t len)
{
	if (len > GL_MANIFEST_MAX)
		return jv_invalid_with_msg(
		    jv_string_fmt("%zu bytes (at most %u)", len, GL_MANIFEST_MAX));
	jv m = gl_json_parse(buf, len);
	if (!jv_is_valid(m))
		return m;
	autofail struct gl_fail f = {0};
	if (gl_manifest_check(m, &f) < 0) {
		jv_free(m);
		return jv_invalid_with_msg(jv_string(gl_fail_detail(&f)));
	}
	return m;
}

enum gl_manifest_status gl_manifest_read(const char *release_dir, jv *out)
{
	autofree char *path = gl_xasprintf("%s/manifest.json", release_dir);
	autofree char *buf = NULL;
	size_t len;
	if (gl_read_file_capped(path, GL_MANIFEST_MAX, &buf, &len) < 0) {
		int e = errno;
		*out = jv_invalid_with_msg(jv_string_fmt(
		    "manifest.json: %s", e == EFBIG ? "larger than 1 MiB" : strerror(e)));
		return e == ENOENT || e == ENOTDIR ? GL_MANIFEST_MISSING : GL_MANIFEST_BAD;
	}
	jv m = gl_manifest_parse(buf, len);
	if (!jv_is_valid(m)) {
		jv msg = jv_invalid_get_msg(m);
		*out = jv_invalid_with_msg(
		    jv_string_fmt("manifest.json: %s", jv_string_value(msg)));
		jv_free(msg);
		return GL_MANIFEST_BAD;
	}
	*out = m;
	return GL_MANIFEST_OK;
}

jv gl_manifest_load(const char *release_dir)
{
	jv m;
	gl_manifest_read(release_dir, &m);
	return m;
}

jv gl_manifest_function(jv m, const char *fn)
{
	jv fns = gl_json_get(m, "functions");
	jv f = gl_json_get(fns, fn);
	jv_free(fns);
	return f;
}

bool gl_manifest_stateless(jv fn)
{
	if (jv_get_kind(fn) != JV_KIND_OBJECT)
		return false;
	const char *st = gl_json_get_str(fn, "state");
	return st && !strcmp(st, "none");
}

enum gl_runtime_kind gl_manifest_runtime(jv m)
{
	const char *rt = jv_get_kind(m) == JV_KIND_OBJECT ? gl_json_get_str(m, "runtime") : NULL;
	if (!rt)
		return GL_RT_UNKNOWN;
	if (!strcmp(rt, "python"))
		return GL_RT_PYTHON;
	if (!strcmp(rt, "exec"))
		return GL_RT_EXEC;
	return GL_RT_UNKNOWN;
}

enum gl_protocol_kind gl_manifest_protocol(jv m)
{
	if (jv_get_kind(m) != JV_KIND_OBJECT)
		return GL_PROTO_UNKNOWN;
	jv p = gl_json_get(m, "protocol");
	enum gl_protocol_kind k = GL_PROTO_UNKNOWN;
	if (!jv_is_valid(p))
		k = GL_PROTO_GERMLINE;
	else if (jv_get_kind(p) == JV_KIND_STRING && !strcmp(jv_string_value(p), "germline"))
		k = GL_PROTO_GERMLINE;
	else if (jv_get_kind(p) == JV_KIND_STRING && !strcmp(jv_string_value(p), "mcp-stdio"))
		k = GL_PROTO_MCP_STDIO;
	jv_free(p);
	return k;
}
