/* installed.c — installed releases listed and found by name; see
 * installed.h. */
#define _GNU_SOURCE
#include "release/installed.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "core/util.h"
#include "json/json.h"
#include "release/manifest.h"

/* One entry of the list from release sha's manifest m (borrowed). */
static jv entry(const char *sha, jv m)
{
	jv o = JV_OBJECT(jv_string("release"), jv_string(sha));
	static const char *const keys[] = {"name", "version", "runtime"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const char *v = gl_json_get_str(m, keys[i]);
		o = jv_object_set(o, jv_string(keys[i]), v ? jv_string(v) : jv_null());
	}
	const char *proto = gl_json_get_str(m, "protocol"); /* absent: SPEC §4's default */
	o = jv_object_set(o, jv_string("protocol"), jv_string(proto ? proto : "germline"));
	return jv_object_set(o, jv_string("deterministic"),
			     jv_bool(gl_json_get_bool(m, "deterministic", 0) == 1));
}

int gl_installed_list(const char *dir, jv *out, struct gl_fail *f)
{
	*out = jv_array();
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : gl_fail_errno(f, GL_E_IO, "%s", dir);
	jv list = jv_array(), keys = jv_array();
	size_t seen = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (++seen > GL_INSTALLED_MAX) {
			rc = gl_fail(f, GL_E_IO, "%s: more than %d entries", dir, GL_INSTALLED_MAX);
			break;
		}
		if (!gl_sha256_hex_ok(e->d_name, strlen(e->d_name)))
			continue; /* a staging directory, a lock: not a release */
		autofree char *rd = gl_xasprintf("%s/%s", dir, e->d_name);
		jv m;
		if (gl_manifest_read(rd, &m) != GL_MANIFEST_OK) {
			jv_free(m);
			continue;
		}
		jv o = entry(e->d_name, m);
		jv_free(m);
		keys = jv_array_append(keys, JV_ARRAY(gl_json_get(o, "name"), gl_json_get(o, "version"),
						      jv_string(e->d_name)));
		list = jv_array_append(list, o);
	}
	closedir(d);
	if (rc < 0) {
		jv_free(list);
		jv_free(keys);
		return -1;
	}
	jv_free(*out);
	*out = jv_sort(list, keys);
	return 0;
}

/* NAME[@VERSION] split at the last '@' (a version holds none); name and
 * version point into buf (owned by the caller). */
static void split(char *buf, const char **name, const char **version)
{
	char *at = strrchr(buf, '@');
	*name = buf;
	*version = NULL;
	if (at) {
		*at = 0;
		*version = at + 1;
	}
}

int gl_installed_find(const char *dir, const char *spec, char sha[65], struct gl_fail *f)
{
	size_t n = strlen(spec);
	if (gl_sha256_hex_ok(spec, n)) {
		memcpy(sha, spec, 65);
		return 0;
	}
	if (!n || n > 256)
		return gl_fail(f, GL_E_USAGE, "--release: empty, or longer than 256 bytes");
	autofree char *buf = gl_xstrdup(spec);
	const char *name, *version;
	split(buf, &name, &version);
	if (!*name || (version && !*version))
		return gl_fail(f, GL_E_USAGE, "--release %s: not a sha256, NAME or NAME@VERSION",
			       spec);
	jv list;
	if (gl_installed_list(dir, &list, f) < 0)
		return -1;
	jv hits = jv_array(), versions = jv_array();
	jv_array_foreach(list, i, o)
	{
		const char *nm = gl_json_get_str(o, "name"), *v = gl_json_get_str(o, "version");
		if (nm && !strcmp(nm, name)) {
			versions = jv_array_append(versions, jv_string(v ? v : "?"));
			if (!version || (v && !strcmp(v, version)))
				hits = jv_array_append(hits, jv_copy(o));
		}
		jv_free(o);
	}
	jv_free(list);
	int nh = jv_array_length(jv_copy(hits));
	autofree char *vs = NULL;
	{
		jv j = jv_array_length(jv_copy(versions)) ? jv_dump_string(jv_copy(versions), 0)
							   : jv_string("none");
		vs = gl_xstrdup(jv_string_value(j));
		jv_free(j);
	}
	int rc = 0;
	if (nh == 1) {
		jv h = jv_array_get(jv_copy(hits), 0);
		snprintf(sha, 65, "%s", gl_json_get_str(h, "release"));
		jv_free(h);
	} else if (nh == 0) {
		rc = gl_fail(f, GL_E_UNKNOWN_RELEASE,
			     "--release %s: no installed release has that name%s (versions of %s "
			     "installed: %s; gl-verify list)",
			     spec, version ? " and version" : "", name, vs);
	} else {
		rc = gl_fail(f, GL_E_USAGE,
			     "--release %s: %d installed releases fit (versions %s): give "
			     "NAME@VERSION or the sha256 (gl-verify list)",
			     spec, nh, vs);
	}
	jv_free(hits);
	jv_free(versions);
	return rc;
}
