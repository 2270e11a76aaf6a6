/* broker_items.c — the items of a call, read once by the broker after
 * Plan (Definition 7: Plan never reads contents): files named by path,
 * directories (an exec copy lists them through Landlock), or base64 data
 * from the envelope. See broker_impl.h. */
#define _GNU_SOURCE
#include "broker/broker_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/itempath.h"
#include "json/json.h"
#include "core/util.h"

/* ---- items: contents read once per call, after Plan ------------------- */

int gl_broker_item_index(const struct gl_call *c, const char *name)
{
	size_t lo = 0, hi = c->nitem;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int r = strcmp(c->item[mid].name, name);
		if (r == 0)
			return (int)mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The contents of an item's path into *raw: opened with no symlink in any
 * component (an item is labelled by its path, so /pub/x -> /hr/salary.csv
 * must not pass as /pub/x) and never host state, checked on what was
 * opened (lib/broker/itempath.h: GL_E_ITEM_PATH, else GL_E_BAD_ITEM), a
 * file item a regular file of at most GL_ITEM_MAX bytes, a directory item
 * ("dir": true) a directory, whose contents are empty (an exec copy lists
 * it through its Landlock rule, lib/runtime/exec_launch.c). 0, or -1 with *f
 * (cleared on entry). */
static int read_path_item(const struct gl_state_roots *roots, const char *path, bool dir,
			  char **raw, size_t *len, int *keep, struct gl_fail *f)
{
	autofree char *qp = gl_quote(path, strlen(path));
	autoclose int fd = gl_itempath_open(roots, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, f);
	struct stat st;
	if (f->code != GL_E_OK)
		return -1; /* the rule refused it */
	if (fd < 0 && errno == ELOOP)
		return gl_fail(f, GL_E_BAD_ITEM,
			       "%s resolves through a symlink; an item is labelled by its "
			       "path, so name the real path",
			       qp);
	if (fd < 0 || fstat(fd, &st) < 0)
		return gl_fail(f, GL_E_BAD_ITEM, "%s: %s", qp, strerror(errno));
	if (dir && !S_ISDIR(st.st_mode))
		return gl_fail(f, GL_E_BAD_ITEM, "%s is not a directory (\"dir\": true)", qp);
	if (!dir && S_ISDIR(st.st_mode))
		return gl_fail(f, GL_E_BAD_ITEM,
			       "%s is a directory; a directory item says \"dir\": true "
			       "(dirs_from_args)",
			       qp);
	if (dir) {
		*raw = gl_xstrdup("");
		*len = 0;
		*keep = gl_steal_fd(&fd);
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return gl_fail(f, GL_E_BAD_ITEM, "%s is not a regular file", qp);
	if ((uint64_t)st.st_size > GL_ITEM_MAX || gl_read_fd_capped(fd, GL_ITEM_MAX, raw, len) < 0)
		return gl_fail(f, GL_E_BAD_ITEM, "%s: %s", qp,
			       errno == EFBIG || (uint64_t)st.st_size > GL_ITEM_MAX
				   ? "larger than 32 MiB"
				   : strerror(errno));
	*keep = gl_steal_fd(&fd);
	return 0;
}

/* Contents of every item as base64 (the call message's encoding). Read
 * here, never by Plan (Definition 7). A path is opened by the broker; data
 * must be strict base64. 0, or -1 with *f. */
int gl_broker_load_items(struct run *r, struct gl_fail *f)
{
	const struct gl_call *c = r->c;
	r->b64 = gl_xcalloc(c->nitem ? c->nitem : 1, sizeof *r->b64);
	r->item_fd = gl_xcalloc(c->nitem ? c->nitem : 1, sizeof *r->item_fd);
	for (size_t k = 0; k < c->nitem; k++)
		r->item_fd[k] = -1;
	size_t total = 0;
	int rc = 0;
	jv_array_foreach(c->items, i, it)
	{
		const char *name = gl_json_get_str(it, "name");
		const char *data = gl_json_get_str(it, "data");
		const char *path = gl_json_get_str(it, "path");
		int x = name ? gl_broker_item_index(c, name) : -1;
		autofree char *q = name ? gl_quote(name, strlen(name)) : gl_xstrdup("?");
		autofree char *raw = NULL;
		size_t len = 0;
		autofree unsigned char *dec = NULL;
		autofail struct gl_fail why = {0};
		if (rc < 0 || x < 0 || r->b64[x]) {
			/* an earlier error, or an item gl_call_read did not keep */
		} else if (path && read_path_item(r->b->roots, path, gl_json_get_bool(it, "dir", 0),
						  &raw, &len, &r->item_fd[x], &why) < 0) {
			rc = gl_fail(f, why.code, "item %s: %s", q, gl_fail_detail(&why));
		} else if (!path && !(dec = gl_b64_decode(data, strlen(data), &len))) {
			rc = gl_fail(f, GL_E_BAD_ITEM, "item %s: data is not standard base64", q);
		} else if (len > GL_ITEM_MAX) {
			rc = gl_fail(f, GL_E_BAD_ITEM, "item %s: larger than 32 MiB", q);
		} else {
			struct gl_buf b = {0};
			gl_b64_encode(&b, path ? (unsigned char *)raw : dec, len);
			gl_buf_addc(&b, 0);
			r->b64[x] = b.data;
			total += b.len;
		}
		jv_free(it);
	}
	if (rc == 0 && total > GL_MSG_MAX - (4u << 20))
		rc = gl_fail(f, GL_E_BAD_ITEM, "items hold more than %u bytes of base64 in all",
			     GL_MSG_MAX - (4u << 20));
	return rc;
}

void gl_broker_items_free(struct run *r)
{
	for (size_t i = 0; i < r->c->nitem; i++) {
		if (r->b64)
			free(r->b64[i]);
		if (r->item_fd && r->item_fd[i] >= 0)
			close(r->item_fd[i]);
	}
	free(r->b64);
	free(r->item_fd);
	r->b64 = NULL;
	r->item_fd = NULL;
}
