/* call.c — reading a call envelope into Plan's inputs; see call.h.
 *
 * Only metadata is read. An item's "path" and "data" are checked to be
 * strings and left alone: opening the one or decoding the other here would
 * make Plan depend on contents, which Definition 7 (data independence) and
 * Lemma 2 (a data-dependent rule discloses one bit per call) forbid. */
#define _GNU_SOURCE
#include "plan/call.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "core/util.h"

GL_PRINTF(3, 4)
static int fail(struct gl_call_error *e, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *d = NULL;
	if (vasprintf(&d, fmt, ap) < 0)
		gl_die(GL_EXIT_USAGE, "out of memory");
	va_end(ap);
	free(e->detail);
	e->code = code;
	e->detail = d;
	return -1;
}

static const char *str_or_null(jv v, size_t *len)
{
	if (jv_get_kind(v) != JV_KIND_STRING)
		return NULL;
	*len = (size_t)jv_string_length_bytes(jv_copy(v));
	return jv_string_value(v);
}

static bool name_ok(const char *s, size_t len, size_t max)
{
	if (len == 0 || len > max)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const struct gl_call_item *)a)->name,
		      ((const struct gl_call_item *)b)->name);
}

/* One item object (borrowed; held by c->items), in one pass over its
 * fields. */
static int read_item(struct gl_call *c, jv it, int i, struct gl_call_error *e)
{
	if (jv_get_kind(it) != JV_KIND_OBJECT)
		return fail(e, GL_ERR_BAD_ENVELOPE, "items[%d]: not an object", i);
	int contents = 0;
	bool has_path = false, dir = false;
	jv nm = jv_invalid(), lb = jv_invalid();
	jv_object_foreach(it, k, v)
	{
		const char *key = jv_string_value(k);
		size_t len = 0;
		const char *s = str_or_null(v, &len);
		if (!strcmp(key, "name")) {
			nm = jv_copy(v);
		} else if (!strcmp(key, "label")) {
			lb = jv_copy(v);
		} else if (!strcmp(key, "dir")) {
			/* a directory item (docs/exec.md "Directory items") */
			dir = jv_get_kind(v) == JV_KIND_TRUE;
			if (!dir && jv_get_kind(v) != JV_KIND_FALSE && !e->code)
				fail(e, GL_ERR_BAD_ENVELOPE, "items[%d].dir: not a boolean", i);
		} else if (!strcmp(key, "path") || !strcmp(key, "data")) {
			contents++;
			has_path = has_path || key[0] == 'p';
			if ((!s || (key[0] == 'p' && len == 0)) && !e->code)
				fail(e, GL_ERR_BAD_ENVELOPE, "items[%d].%s: not a %sstring", i, key,
				     key[0] == 'p' ? "non-empty " : "");
		} else if (!e->code) {
			autofree char *q = gl_quote(key, strlen(key));
			fail(e, GL_ERR_BAD_ENVELOPE,
			     "items[%d]: unknown field %s (name, label, path, data, dir)", i, q);
		}
		jv_free(k);
		jv_free(v);
	}
	size_t len = 0;
	const char *name = str_or_null(nm, &len); /* it holds the string */
	struct gl_call_item *x = &c->item[c->nitem];
	autofail struct gl_fail why = {0};
	if (e->code) {
		/* reported above */
	} else if (contents != 1) {
		fail(e, GL_ERR_BAD_ENVELOPE,
		     "items[%d]: needs exactly one of \"path\" or \"data\"", i);
	} else if (dir && !has_path) {
		fail(e, GL_ERR_BAD_ENVELOPE, "items[%d]: \"dir\": true needs a \"path\"", i);
	} else if (!name || !name_ok(name, len, GL_PATH_MAX)) {
		fail(e, GL_ERR_BAD_ENVELOPE,
		     "items[%d].name: not a string of 1..%d bytes without control characters", i,
		     GL_PATH_MAX);
	} else if (!jv_is_valid(lb)) {
		autofree char *q = gl_quote(name, len);
		fail(e, GL_ERR_BAD_LABEL, "item %s: no label (never public by default)", q);
	} else if (gl_labels_from_jv(&x->label, lb, &why) < 0) {
		autofree char *q = gl_quote(name, len);
		fail(e, GL_ERR_BAD_LABEL, "item %s: label %s", q, gl_fail_detail(&why));
	} else {
		x->name = name; /* it holds the name and the tags */
		c->nitem++;
	}
	jv_free(nm);
	jv_free(lb);
	return e->code ? -1 : 0;
}

/* A list of names (borrowed v) into *out; hosts when is_host. */
static int read_names(jv v, const char *field, bool is_host, size_t max, const char ***out,
		      size_t *n, struct gl_call_error *e)
{
	if (jv_get_kind(v) != JV_KIND_ARRAY)
		return fail(e, GL_ERR_BAD_ENVELOPE, "%s: not an array of strings", field);
	int len = jv_array_length(jv_copy(v));
	if ((size_t)len > max)
		return fail(e, GL_ERR_BAD_ENVELOPE, "%s: %d names (at most %zu)", field, len, max);
	*out = gl_xcalloc((size_t)len, sizeof **out);
	for (int i = 0; i < len; i++) {
		jv s = jv_array_get(jv_copy(v), i);
		size_t sl = 0;
		const char *name = str_or_null(s, &sl);
		jv_free(s); /* v holds it */
		if (!name)
			return fail(e, GL_ERR_BAD_ENVELOPE, "%s[%d]: not a string", field, i);
		if (is_host && !gl_dest_ok(name, sl)) {
			autofree char *q = gl_quote(name, sl);
			return fail(e, GL_ERR_BAD_DESTINATION,
				    "%s[%d]: %s is not a lowercase host name or IP literal "
				    "(no scheme or path), or host:port for a TCP stream (a port "
				    "other than 80 and 443)",
				    field, i, q);
		}
		if (!is_host && !name_ok(name, sl, GL_NAME_MAX))
			return fail(e, GL_ERR_BAD_ENVELOPE,
				    "%s[%d]: not a name of 1..%d bytes without control characters",
				    field, i, GL_NAME_MAX);
		(*out)[(*n)++] = name;
	}
	qsort(*out, *n, sizeof **out, cmp_str);
	for (size_t i = 1; i < *n; i++)
		if (!strcmp((*out)[i - 1], (*out)[i])) {
			autofree char *q = gl_quote((*out)[i], strlen((*out)[i]));
			return fail(e, GL_ERR_BAD_ENVELOPE, "%s: %s listed twice", field, q);
		}
	autofail struct gl_fail sf = {0};
	if (is_host && gl_stream_dests_check(v, field, &sf) < 0)
		return fail(e, GL_ERR_BAD_DESTINATION, "%s", gl_fail_detail(&sf));
	return 0;
}

/* The items (each read_item) and the consumers of an envelope whose shape
 * read_shape checked; cons is borrowed. */
static int read_list(struct gl_call *c, jv cons, bool have_cons, struct gl_call_error *e)
{
	int r = 0;
	if (!jv_is_valid(c->items))
		c->items = jv_array();
	int n = jv_array_length(jv_copy(c->items));
	if (n > GL_CALL_ITEMS_MAX)
		return fail(e, GL_ERR_BAD_ENVELOPE, "items: %d items (at most %d)", n,
			    GL_CALL_ITEMS_MAX);
	c->cap = (size_t)n;
	c->item = gl_xcalloc(c->cap, sizeof *c->item);
	jv_array_foreach(c->items, i, it)
	{
		if (r == 0)
			r = read_item(c, it, i, e);
		jv_free(it); /* c->items holds it */
	}
	if (r == 0 && !have_cons) {
		/* SPEC §4 leaves it open; the agent is the usual consumer. */
		static const char *agent = "agent";
		c->consumer = gl_xcalloc(1, sizeof *c->consumer);
		c->consumer[c->nconsumer++] = agent;
	} else if (r == 0) {
		r = read_names(cons, "consumers", false, GL_CALL_CONSUMERS_MAX, &c->consumer,
			       &c->nconsumer, e);
	}
	return r;
}

/* Shape of the envelope, items and consumers: everything that needs no
 * manifest. The envelope's fields are fetched in one pass; unknown ones
 * travel on untouched (other stages may annotate envelopes). */
static int read_shape(struct gl_call *c, struct gl_call_error *e)
{
	if (jv_get_kind(c->env) != JV_KIND_OBJECT)
		return fail(e, GL_ERR_BAD_ENVELOPE, "not a JSON object");
	jv id = jv_invalid(), release = jv_invalid(), function = jv_invalid(),
	   cons = jv_invalid();
	jv_object_foreach(c->env, k, v)
	{
		const char *key = jv_string_value(k);
		jv *slot = !strcmp(key, "id")		  ? &id
			   : !strcmp(key, "release")	  ? &release
			   : !strcmp(key, "function")	  ? &function
			   : !strcmp(key, "args")	  ? &c->args
			   : !strcmp(key, "items")	  ? &c->items
			   : !strcmp(key, "consumers")	  ? &cons
			   : !strcmp(key, "destinations") ? &c->given
							  : NULL;
		if (slot)
			*slot = v;
		else
			jv_free(v);
		jv_free(k);
	}
	/* From here on env holds every string these point into. */
	size_t len = 0;
	const char *s = str_or_null(id, &len);
	bool have_id = jv_is_valid(id);
	bool id_ok = jv_get_kind(id) == JV_KIND_NUMBER || (s && name_ok(s, len, GL_CALL_ID_MAX));
	if (id_ok)
		c->id = jv_copy(id);
	c->release = str_or_null(release, &len);
	bool release_ok = c->release && gl_sha256_hex_ok(c->release, len);
	c->function = str_or_null(function, &len);
	bool function_ok = c->function && name_ok(c->function, len, 128);
	bool have_cons = jv_is_valid(cons);
	jv_free(id);
	jv_free(release);
	jv_free(function);

	int r = 0;
	if (have_id && !id_ok)
		r = fail(e, GL_ERR_BAD_ENVELOPE,
			 "id: not a number or a string of 1..%d bytes without control characters",
			 GL_CALL_ID_MAX);
	else if (!release_ok)
		r = fail(e, GL_ERR_BAD_ENVELOPE,
			 "release: not a SHA-256 in 64 lowercase hex digits");
	else if (!function_ok)
		r = fail(e, GL_ERR_BAD_ENVELOPE, "function: not a name of 1..128 bytes");
	else if (jv_is_valid(c->args) && jv_get_kind(c->args) != JV_KIND_OBJECT)
		r = fail(e, GL_ERR_BAD_ENVELOPE, "args: not an object");
	else if (jv_is_valid(c->items) && jv_get_kind(c->items) != JV_KIND_ARRAY)
		r = fail(e, GL_ERR_BAD_ENVELOPE, "items: not an array");
	if (r < 0) {
		jv_free(cons);
		return r;
	}

	r = read_list(c, cons, have_cons, e);
	jv_free(cons); /* env holds it */
	return r;
}

/* D_f: the manifest's destinations, and the call's where the function
 * declares destinations_from_call (SPEC §4). */
static int read_dests(struct gl_call *c, struct gl_call_error *e)
{
	jv given = c->given; /* borrowed */
	bool from_call = gl_json_get_bool(c->fn, "destinations_from_call", 0);
	if (jv_is_valid(given) && !from_call) {
		autofree char *q = gl_quote(c->function, strlen(c->function));
		return fail(e, GL_ERR_DESTS_NOT_ALLOWED,
			    "function %s does not declare destinations_from_call; its destinations "
			    "are the manifest's",
			    q);
	}
	jv decl = gl_json_get(c->fn, "destinations");
	const char **call_d = NULL;
	size_t ncall = 0;
	int r = 0;
	if (jv_is_valid(given))
		r = read_names(given, "destinations", true, GL_MANIFEST_DESTS_MAX, &call_d, &ncall,
			       e);
	int nd = jv_is_valid(decl) ? jv_array_length(jv_copy(decl)) : 0;
	c->dest = gl_xcalloc((size_t)nd + ncall, sizeof *c->dest);
	for (int i = 0; r == 0 && i < nd; i++) {
		jv s = jv_array_get(jv_copy(decl), i);
		c->dest[c->ndest++] = jv_string_value(s); /* c->fn holds it */
		jv_free(s);
	}
	jv_free(decl);
	for (size_t i = 0; r == 0 && i < ncall; i++)
		c->dest[c->ndest++] = call_d[i];
	free(call_d);
	qsort(c->dest, c->ndest, sizeof *c->dest, cmp_str);
	size_t m = 0;
	for (size_t i = 0; i < c->ndest; i++)
		if (m == 0 || strcmp(c->dest[m - 1], c->dest[i]))
			c->dest[m++] = c->dest[i];
	c->ndest = m;
	return r;
}

/* add_path_item's second half: the item of path (consumed; its string s)
 * labelled l. */
static int add_labelled(struct gl_call *c, jv path, const char *s, size_t first, bool dir,
			const struct gl_labels *l, struct gl_call_error *e)
{
	/* gl-plan | gl-run: a planned envelope already holds the items gl-plan
	 * added. An explicit item that is exactly the one this path makes (the
	 * same name and path, the policy's label) is that item; any other
	 * explicit item of the name stays a duplicate_item. */
	for (size_t i = 0; i < first; i++)
		if (!strcmp(c->item[i].name, s) && gl_labels_equal(&c->item[i].label, l)) {
			jv it = jv_array_get(jv_copy(c->items), (int)i);
			const char *ip = gl_json_get_str(it, "path");
			bool same = ip && !strcmp(ip, s) && gl_json_get_bool(it, "dir", 0) == dir;
			jv_free(it);
			if (same) {
				jv_free(path);
				return 0;
			}
		}
	if (c->nitem >= GL_CALL_ITEMS_MAX) {
		jv_free(path);
		return fail(e, GL_ERR_BAD_ENVELOPE, "more than %d items", GL_CALL_ITEMS_MAX);
	}
	if (c->nitem == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4;
		c->item = gl_xrealloc(c->item, c->cap * sizeof *c->item);
	}
	jv it = jv_object();
	it = jv_object_set(it, jv_string("name"), jv_copy(path));
	it = jv_object_set(it, jv_string("label"), gl_labels_to_jv(l));
	it = jv_object_set(it, jv_string("path"), path);
	if (dir)
		it = jv_object_set(it, jv_string("dir"), jv_true());
	struct gl_call_item *x = &c->item[c->nitem++];
	x->name = s; /* the string lives in c->items from here on */
	gl_labels_copy(&x->label, l);
	c->items = jv_array_append(c->items, it);
	return 0;
}

/* Is item i of c->items a directory item ("dir": true)? */
static bool item_is_dir(const struct gl_call *c, size_t i)
{
	jv it = jv_array_get(jv_copy(c->items), (int)i);
	bool d = gl_json_get_bool(it, "dir", 0);
	jv_free(it);
	return d;
}

/* Is s (a clean absolute path) the release's workspace or beneath it? Its
 * files are the horizon's state, restored from the copy's own slot and
 * labelled by the slot's label join (paper §IV-E, Algorithm 1 lines 11–28),
 * not the user's files: neither labelled by the policy nor read here. */
static bool in_workspace(const struct gl_call *c, const char *s)
{
	size_t n = strlen(GL_WORKSPACE_DIR);
	return c->workspace && !strncmp(s, GL_WORKSPACE_DIR, n) && (s[n] == 0 || s[n] == '/');
}

/* The path of a file URI's rest (after "file://": an empty authority, then
 * the path, percent-decoded), or jv_null() when it is not one (a host, a
 * bad or NUL escape). */
static jv file_uri_path(const char *r, size_t n)
{
	if (n == 0 || r[0] != '/')
		return jv_null();
	struct gl_buf b = {0};
	for (size_t i = 0; i < n; i++) {
		unsigned char ch;
		if (r[i] != '%') {
			gl_buf_addc(&b, r[i]);
		} else if (i + 2 < n && gl_unhex(r + i + 1, 2, &ch, 1) == 0 && ch) {
			gl_buf_addc(&b, (char)ch);
			i += 2;
		} else {
			free(b.data);
			return jv_null();
		}
	}
	jv out = jv_string_sized(b.data, (int)b.len);
	free(b.data);
	return out;
}

/* One file named by an argument becomes an item labelled by the policy's
 * first matching glob (SPEC §11); no match refuses the call. A directory
 * (dir: dirs_from_args) becomes an item with "dir": true labelled by
 * gl_policy_label_for_dir: every glob that may match it or a path beneath
 * it, up to the first that matches them all; none refuses the call. */
static int add_path_item(struct gl_call *c, const char *arg, jv path, size_t first, bool dir,
			 const struct gl_policy *p, struct gl_call_error *e)
{
	size_t len = 0;
	const char *s = str_or_null(path, &len);
	/* a file:/// URI (an MCP resource's: resources/read's uri) names the
	 * file at its path */
	if (s && len > 7 && !strncmp(s, "file://", 7)) {
		jv fp = file_uri_path(s + 7, len - 7);
		jv_free(path);
		path = fp;
		s = str_or_null(path, &len);
	}
	if (!s || !gl_path_clean(s, len)) {
		autofree char *q = s ? gl_quote(s, len) : gl_xstrdup("(not a string)");
		jv_free(path);
		return fail(e, GL_ERR_BAD_ARGS,
			    "args.%s: %s is not an absolute normalised path (no '.', '..', '//' "
			    "or trailing '/')",
			    arg, q);
	}
	if (in_workspace(c, s)) { /* the horizon's state, not an item */
		jv_free(path);
		return 0;
	}
	/* The same file named twice by arguments is one item; a file also
	 * given as an explicit item is a duplicate_item below, so the caller's
	 * label can never stand in for the policy's. */
	for (size_t i = first; i < c->nitem; i++)
		if (!strcmp(c->item[i].name, s)) {
			bool was_dir = item_is_dir(c, i);
			autofree char *q = gl_quote(s, len);
			jv_free(path);
			if (was_dir == dir)
				return 0;
			return fail(e, GL_ERR_BAD_ARGS,
				    "args.%s: %s is named both as a file (items_from_args) and as a "
				    "directory (dirs_from_args)",
				    arg, q);
		}
	struct gl_labels dl = {0};
	const struct gl_labels *l = dir ? NULL : gl_policy_label_for(p, s);
	if (dir && gl_policy_label_for_dir(p, s, &dl) == 0)
		l = &dl;
	if (!l) {
		autofree char *q = gl_quote(s, len);
		autofree char *all = gl_xasprintf("%s/**", s);
		autofree char *qa = gl_quote(all, strlen(all));
		jv_free(path);
		if (dir)
			return fail(e, GL_ERR_UNLABELLED_PATH,
				    "args.%s: directory %s: no glob of the policy's \"labels\" "
				    "matches it and every path beneath it, so a file it holds could "
				    "be listed unlabelled (a glob such as %s covers it all)",
				    arg, q, qa);
		return fail(e, GL_ERR_UNLABELLED_PATH,
			    "args.%s: no glob of the policy's \"labels\" matches %s", arg, q);
	}
	int r = add_labelled(c, path, s, first, dir, l, e);
	gl_labels_free(&dl);
	return r;
}

/* The items of the arguments the function's field (items_from_args or
 * dirs_from_args) names; before: c->nitem before any of them. */
static int read_arg_list(struct gl_call *c, const char *field, bool dir, size_t before,
			 const struct gl_policy *p, struct gl_call_error *e)
{
	jv names = gl_json_get(c->fn, field);
	if (!jv_is_valid(names)) {
		jv_free(names);
		return 0;
	}
	jv args = jv_copy(c->args);
	int r = 0;
	jv_array_foreach(names, i, an)
	{
		(void)i;
		const char *arg = jv_string_value(an);
		jv v = gl_json_get(args, arg);
		if (r == 0 && jv_get_kind(v) == JV_KIND_STRING) {
			r = add_path_item(c, arg, jv_copy(v), before, dir, p, e);
		} else if (r == 0 && jv_get_kind(v) == JV_KIND_ARRAY) {
			jv_array_foreach(v, j, pj)
			{
				(void)j;
				if (r == 0)
					r = add_path_item(c, arg, pj, before, dir, p, e);
				else
					jv_free(pj);
			}
		} else if (r == 0 && jv_is_valid(v)) {
			r = fail(e, GL_ERR_BAD_ARGS,
				 "args.%s: names %s (%s), so it must be a path or an array of paths",
				 arg, dir ? "directories" : "files", field);
		}
		jv_free(v);
		jv_free(an);
	}
	jv_free(args);
	jv_free(names);
	return r;
}

static int read_arg_items(struct gl_call *c, const struct gl_policy *p, struct gl_call_error *e)
{
	size_t before = c->nitem;
	int r = read_arg_list(c, "items_from_args", false, before, p, e);
	if (r == 0)
		r = read_arg_list(c, "dirs_from_args", true, before, p, e);
	if (r == 0 && c->nitem > before) {
		c->env = jv_object_set(c->env, jv_string("items"), jv_copy(c->items));
		c->env_changed = true;
	}
	return r;
}

int gl_call_read(struct gl_call *c, jv env, const struct gl_policy *p, struct gl_releases *rel,
		 struct gl_call_error *e)
{
	memset(c, 0, sizeof *c);
	c->env = env;
	c->id = c->fn = c->items = c->args = c->given = jv_invalid();
	e->code = NULL;
	e->detail = NULL;
	if (read_shape(c, e) < 0)
		return -1;

	jv m;
	autofail struct gl_fail why = {0};
	enum gl_code rc = gl_releases_get(rel, c->release, &m, &why);
	if (rc == GL_E_UNKNOWN_RELEASE)
		return fail(e, GL_ERR_UNKNOWN_RELEASE, "release %s is not installed (%s)",
			    c->release, gl_fail_detail(&why));
	if (rc != GL_E_OK)
		return fail(e, GL_ERR_BAD_MANIFEST, "release %s: %s", c->release,
			    gl_fail_detail(&why));
	jv sd = gl_json_get(m, "state_dir");
	c->workspace = jv_get_kind(sd) == JV_KIND_TRUE;
	jv_free(sd);
	c->fn = gl_manifest_function(m, c->function);
	if (!jv_is_valid(c->fn)) {
		autofree char *q = gl_quote(c->function, strlen(c->function));
		return fail(e, GL_ERR_UNKNOWN_FUNCTION, "release %s declares no function %s",
			    c->release, q);
	}
	if (read_dests(c, e) < 0 || read_arg_items(c, p, e) < 0)
		return -1;
	qsort(c->item, c->nitem, sizeof *c->item, cmp_item);
	for (size_t i = 1; i < c->nitem; i++)
		if (!strcmp(c->item[i - 1].name, c->item[i].name)) {
			autofree char *q = gl_quote(c->item[i].name, strlen(c->item[i].name));
			return fail(e, GL_ERR_DUPLICATE_ITEM, "two items are named %s", q);
		}
	return 0;
}

void gl_call_free(struct gl_call *c)
{
	for (size_t i = 0; i < c->nitem; i++)
		gl_labels_free(&c->item[i].label);
	free(c->item);
	free(c->dest);
	free(c->consumer);
	jv_free(c->items);
	jv_free(c->args);
	jv_free(c->given);
	jv_free(c->fn);
	jv_free(c->id);
	jv_free(c->env);
	memset(c, 0, sizeof *c);
	c->env = c->id = c->fn = c->items = c->args = c->given = jv_invalid();
}
