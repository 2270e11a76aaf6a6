/* broker_witness.c — what gl-run keeps of a call for its witnesses and
 * writing them (paper §IV-F, Definition 6; docs/witness.md). The record
 * itself is built, written and read back by lib/evidence/witness.c. */
#include "broker/broker_impl.h"
#include "json/json.h"
#include "evidence/witness.h"

/* ---- witnesses (paper §IV-F, Definition 6) ------------------------------ */

/* A group's members, view (item names) and horizon (owned). */
static jv group_json(const struct run *r, size_t gi)
{
	const struct gl_plan_group *g = &r->plan->group[gi];
	jv d = jv_array(), u = jv_array(), v = jv_array();
	for (size_t i = 0; i < g->ndest; i++)
		d = jv_array_append(d, jv_string(r->c->dest[g->dest[i]]));
	for (size_t i = 0; i < g->nconsumer; i++)
		u = jv_array_append(u, jv_string(r->c->consumer[g->consumer[i]]));
	for (size_t x = 0; x < r->c->nitem; x++)
		if (in_view(g, x))
			v = jv_array_append(v, jv_string(r->c->item[x].name));
	return JV_OBJECT(jv_string("destinations"), d, jv_string("consumers"), u,
			 jv_string("view"), v, jv_string("horizon"), gl_labels_to_jv(&g->horizon));
}

/* Where each item was (public: the plan labelled it by its path), so an
 * exec release is replayed with its files where it read them: *path and
 * *dir per c->item index (malloc'd; the strings alive in c->items). */
static void item_places(const struct gl_call *c, const char ***path, bool **dir)
{
	*path = gl_xcalloc(c->nitem ? c->nitem : 1, sizeof **path);
	*dir = gl_xcalloc(c->nitem ? c->nitem : 1, sizeof **dir);
	jv_array_foreach(c->items, i, it)
	{
		const char *name = gl_json_get_str(it, "name");
		int k = name ? gl_broker_item_index(c, name) : -1;
		if (k >= 0) {
			(*path)[k] = gl_json_get_str(it, "path");
			(*dir)[k] = gl_json_get_bool(it, "dir", 0) == 1;
		}
		jv_free(it);
	}
}

/* The witness of each trigger raised by the copy of group r->gi (from index
 * `from` of r->triggers on), written once that copy is gone, with the twin
 * inputs germline gm imported the release under; the trigger
 * gets its path and hash, or "witness_error". */
void gl_broker_witnesses(struct run *r, const struct gl_germline *gm, int from)
{
	const struct gl_call *c = r->c;
	const struct gl_plan_group *gw = &r->plan->group[r->gi];
	const char **data = gl_xcalloc(c->nitem ? c->nitem : 1, sizeof *data);
	for (size_t x = 0; x < c->nitem; x++)
		data[x] = r->b->witness_items && in_view(gw, x) ? r->b64[x] : NULL;
	const char **ipath;
	bool *dir;
	item_places(c, &ipath, &dir);
	jv args = jv_is_valid(c->args) ? jv_copy(c->args) : jv_object();
	jv dests = jv_array();
	for (size_t e = 0; e < c->ndest; e++)
		dests = jv_array_append(dests, jv_string(c->dest[e]));
	int n = jv_array_length(jv_copy(r->triggers));
	for (int t = from; t < n; t++) {
		jv trig = jv_array_get(jv_copy(r->triggers), t);
		size_t ge = r->dest[dest_index(c, gl_json_get_str(trig, "destination"))].group;
		int64_t pos = 0;
		gl_json_get_int(trig, "position", &pos);
		struct gl_witness_in in = {
		    .id = gl_json_get_str(trig, "id"),
		    .call = c->id,
		    .release = c->release,
		    .function = c->function,
		    .mode = r->b->no_twin ? "no_twin" : "germline",
		    .args = args,
		    .dests = dests,
		    .item = r->items,
		    .data = data,
		    .path = ipath,
		    .dir = dir,
		    .nitem = c->nitem,
		    .destination = gl_json_get_str(trig, "destination"),
		    .kind = gl_json_get_str(trig, "kind"),
		    .position = pos,
		    .served = {group_json(r, ge), r->snap[ge], &r->twin[ge]},
		    .comparing = {group_json(r, r->gi), r->snap[r->gi], &r->twin[r->gi]},
		    .transcript = r->trans[ge],
		    .compared = r->trans[r->gi],
		    .deadline_ms = (int64_t)(r->b->deadline_s * 1000 + 0.5),
		    /* what the release's import read (A2, A4; germline.h) */
		    .import_twin = gm->import_twinned ? &gm->import_twin : NULL,
		    .caps = &r->b->witness_caps, /* bounded evidence (issue 15) */
		    .signer = r->b->witness_key,  /* who made it (witness_key.h) */
		    /* the bounds its copies ran under (unset: the defaults) */
		    .limits = gm->lim.memory_mb ? &gm->lim : NULL,
		    .config = r->config,
		};
		char *path = NULL, sha[65];
		bool too_large = false;
		autofail struct gl_fail f = {0};
		if (gl_witness_save(r->b->home, &in, &path, sha, &too_large, &f) == 0) {
			trig = jv_object_set(trig, jv_string("witness"), jv_string(path));
			trig = jv_object_set(trig, jv_string("witness_sha256"), jv_string(sha));
		} else {
			const char *err = gl_fail_detail(&f);
			gl_warn("witness %s: %s", in.id, err);
			trig = jv_object_set(trig, jv_string("witness"), jv_null());
			/* a fixed text for too_large (its size is the copies') */
			trig = jv_object_set(trig, jv_string("witness_error"),
					     jv_string(too_large ? GL_WITNESS_TOO_LARGE_TEXT : err));
		}
		free(path);
		jv_free(in.served.group);
		jv_free(in.comparing.group);
		r->triggers = jv_array_set(r->triggers, t, trig);
	}
	jv_free(args);
	jv_free(dests);
	free(data);
	free(ipath);
	free(dir);
}

