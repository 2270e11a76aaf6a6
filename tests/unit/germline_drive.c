/* germline_drive — a test driver for germline.h (tests/sandbox.bats).
 *
 * It compiles lib/sandbox/sandbox.c, lib/sandbox/proc.c, lib/runtime/germline.c, lib/runtime/germline_child.c,
 * lib/runtime/germline_fork.c and lib/runtime/germline_pool.c itself with GL_TESTING defined, so the switches that
 * turn mechanisms off (for the reference runs of Table XII) exist in this
 * program only: the linker takes these definitions and never pulls the
 * archive's, and libgermline.a (hence gl-run) is built without them.
 *
 *   germline_drive [OPTIONS] RELEASE_DIR [ACTION...]
 *     --host DIR            host dir (default: build/host)
 *     --interpreter PATH    (default /usr/bin/python3)
 *     --swap FILE           rename FILE over the interpreter after it was opened
 *     --germline-off LIST   landlock,seccomp,newnet,pidns,root: the germline's own
 *                           restrictions (pidns: no PID namespace and init; root:
 *                           the host's filesystem instead of the minimal root)
 *     --copy-off LIST       landlock,seccomp,fdclose,newpid,newnet,newipc,parent,
 *                           signals,atfork,devnull,pidfix (needs a GL_TESTING build of
 *                           _germline.so in --host)
 *     --copy-off-checked LIST  the same, with the broker's copy check still on
 *     --no-g-check          fork without checking G1–G3
 *     --no-copy-check       do not check a copy from outside (implied by --copy-off)
 *     --warm                a Node germline answers a data-free initialize first
 *     --exec-host           a Node germline's copies speak the copy protocol
 *                           (gl-exec-host adopts the server): FUNCTION actions
 *     --state-dir DIR       with it, the copies' workspace (the slot a copy
 *                           stores is the next call's; the manifest's env
 *                           gets DIR for ${GL_STATE_DIR})
 *   ACTION: info | fds | check | FUNCTION[=ARGS_JSON] (one copy per call; "@child"
 *           in ARGS_JSON is the "child" an earlier copy returned) |
 *           mcp=FILE (a Node germline's copy: FILE's JSON-RPC lines sent on its
 *           channel, one answer read per request that has an id) |
 *           proc=NAME (/proc/GERMLINE/NAME's text, e.g. status, root/tmp/x) |
 *           sleep=MS
 * A release whose manifest has runtime "exec" is launched as a Node germline
 * (docs/exec.md "The Node germline"): entry[0] the interpreter, entry[1] the
 * script, the rest its arguments.
 * GL_TEST_COUNTERS_OFF=1: no per-user counter limits or rules (counters.c is
 * compiled in here with GL_TESTING, as the files below).
 * One JSON object per line on stdout for the launch and each action. */
#define _GNU_SOURCE
#define GL_TESTING 1
#include "sandbox/counters.c"
#include "sandbox/sandbox.c"
#include "sandbox/landlock.c"
#include "sandbox/proc.c"
#include "runtime/germline.c"
#include "runtime/germline_allow.c"
#include "runtime/germline_fork.c"
#include "runtime/germline_pool.c"
#include "runtime/germline_child.c"
#include "sandbox/scratch.c"

#include <dirent.h>

#include "json/msg.h"

static void out_str(struct gl_buf *b, const char *key, const char *s)
{
	gl_buf_printf(b, ",\"%s\":", key);
	gl_json_dump_string(b, s, strlen(s)); /* lib/ messages are sanitized ASCII */
}

static void emit(struct gl_buf *b)
{
	gl_buf_adds(b, "}\n");
	fwrite(b->data, 1, b->len, stdout);
	fflush(stdout);
	b->len = 0;
}

static unsigned parse_off(const char *list, int copy)
{
	unsigned off = 0;
	autofree char *dup = gl_xstrdup(list);
	char *save = NULL;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "landlock"))
			off |= GL_OFF_LANDLOCK;
		else if (!strcmp(t, "seccomp"))
			off |= GL_OFF_SECCOMP;
		else if (copy && !strcmp(t, "fdclose"))
			off |= GL_OFF_FDCLOSE;
		else if (copy && !strcmp(t, "newpid"))
			off |= GL_OFF_NEWPID;
		else if (!strcmp(t, "newnet"))
			off |= GL_OFF_NEWNET;
		else if (copy && !strcmp(t, "newipc"))
			off |= GL_OFF_NEWIPC;
		else if (!copy && !strcmp(t, "pidns"))
			off |= GL_OFF_PIDNS;
		else if (!copy && !strcmp(t, "root"))
			off |= GL_OFF_ROOT;
		else if (copy && !strcmp(t, "parent"))
			off |= GL_OFF_PARENT;
		else if (copy && !strcmp(t, "signals"))
			off |= GL_OFF_SIGNALS;
		else if (copy && !strcmp(t, "atfork"))
			off |= GL_OFF_ATFORK;
		else if (copy && !strcmp(t, "devnull"))
			off |= GL_OFF_DEVNULL;
		else if (copy && !strcmp(t, "pidfix"))
			off |= GL_OFF_PIDFIX;
		else
			gl_die(2, "unknown mechanism %s", t);
	}
	return off;
}

static const char *swap_src;
static void do_swap(const char *interp)
{
	if (rename(swap_src, interp) < 0)
		gl_die_errno(2, "swap %s -> %s", swap_src, interp);
}

/* Live (non-zombie) processes in the germline's user namespace other than
 * the germline itself and its init; killed too if kill_them. */
static int count_userns(const struct gl_germline *g, int kill_them)
{
	pid_t germline = g->gpid;
	char mine[64];
	if (ns_of(germline, "user", mine) < 0)
		return -1;
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == germline || pid == g->pid || pid == g->mounter.pid)
			continue; /* the broker's mount helper (lib/sandbox/scratch.h) is in that namespace too */
		char ns[64], sp[64];
		if (ns_of((pid_t)pid, "user", ns) < 0 || strcmp(ns, mine))
			continue;
		snprintf(sp, sizeof sp, "/proc/%ld/stat", pid);
		autofree char *st = NULL;
		size_t len;
		if (gl_read_file_capped(sp, 4096, &st, &len) < 0)
			continue;
		char *rp = strrchr(st, ')');
		if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
			continue;
		n++;
		if (kill_them)
			kill((pid_t)pid, SIGKILL);
	}
	closedir(d);
	return n;
}

static int read_msg(int fd, struct gl_buf *msg)
{
	struct timespec dl;
	gl_ctl_deadline_in(&dl, 20000);
	unsigned char hdr[4];
	size_t got = 0, want = 4;
	unsigned char *dst = hdr;
	msg->len = 0;
	for (int phase = 0; phase < 2; phase++) {
		while (got < want) {
			if (gl_ctl_wait_readable(fd, &dl) <= 0)
				return -1;
			ssize_t r = read(fd, dst + got, want - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return -1;
			got += (size_t)r;
		}
		if (phase == 0) {
			want = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
			if (want > (1u << 20))
				return -1;
			gl_buf_reserve(msg, want + 1);
			dst = (unsigned char *)msg->data;
			got = 0;
		}
	}
	msg->len = want;
	msg->data[want] = 0;
	return 0;
}

/* The germline checked (unless gcheck is 0) and one copy forked: 0 with
 * *mine (the driver's end of the copy's channel), *pidfd and *t0 (when the
 * fork was asked for), or -1 with the failure written to o. */
static int checked_fork(struct gl_germline *g, int gcheck, struct gl_buf *o, int *mine, int *pidfd,
			int64_t *t0)
{
	autofail struct gl_fail err = {0};
	if (gcheck && gl_germline_check(g, &err) < 0) {
		gl_buf_adds(o, ",\"ok\":false,\"error\":\"germline_check\"");
		out_str(o, "detail", gl_fail_detail(&err));
		emit(o);
		return -1;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		gl_die_errno(2, "socketpair");
	*t0 = gl_mono_ns();
	if (gl_germline_fork(g, sv[1], sv[0], pidfd, &err) < 0) {
		close(sv[0]);
		gl_buf_adds(o, ",\"ok\":false,\"error\":\"fork\"");
		out_str(o, "detail", gl_fail_detail(&err));
		emit(o);
		return -1;
	}
	*mine = sv[0];
	return 0;
}

/* The slot a call message carries ("state"): what the last copy stored
 * with state_put (an exec host's workspace, "gl.files"), or {}. */
static jv slot;

/* A message of len bytes on fd, framed as the channel's (4-byte length). */
static int send_framed(int fd, const char *m, size_t len)
{
	unsigned char hdr[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
				(unsigned char)(len >> 8), (unsigned char)len};
	return gl_write_all(fd, hdr, 4) == 0 && gl_write_all(fd, m, len) == 0 ? 0 : -1;
}

/* Is m a state_put? Then the slot is its key and value. */
static bool slot_put(const struct gl_buf *m)
{
	jv v = gl_json_parse(m->data, m->len);
	const char *type = jv_get_kind(v) == JV_KIND_OBJECT ? gl_json_get_str(v, "type") : NULL;
	const char *key = type && !strcmp(type, "state_put") ? gl_json_get_str(v, "key") : NULL;
	if (key) {
		jv_free(slot);
		jv entry = jv_object_set(jv_object(), jv_string("value"),
					 jv_object_get(jv_copy(v), jv_string("value")));
		slot = jv_object_set(jv_object(), jv_string(key), entry); /* as the broker's slots */
	}
	jv_free(v);
	return key != NULL;
}

/* The "child" an earlier copy reported; "@child" in ARGS stands for it. */
static long last_child = -1;

static void do_call(struct gl_germline *g, const char *action, int gcheck, struct gl_buf *o)
{
	autofree char *fn = gl_xstrdup(action);
	char *eq = strchr(fn, '=');
	const char *args = "{}";
	autofree char *subst = NULL;
	if (eq) {
		*eq = 0;
		args = eq + 1;
		char *at = strstr(args, "@child");
		if (at) {
			subst = gl_xasprintf("%.*s%ld%s", (int)(at - args), args, last_child, at + 6);
			args = subst;
		}
	}
	gl_buf_printf(o, "{\"action\":\"call\"");
	out_str(o, "function", fn);
	autoclose int mine = -1;
	int pidfd;
	int64_t t0;
	if (checked_fork(g, gcheck, o, &mine, &pidfd, &t0) < 0)
		return;
	struct gl_buf call = {0};
	gl_buf_printf(&call, "{\"type\":\"call\",\"function\":");
	gl_json_dump_string(&call, fn, strlen(fn));
	gl_buf_printf(&call, ",\"args\":%s,\"items\":[],\"state\":", args);
	gl_json_dump(&call, slot);
	gl_buf_printf(&call, ",\"twin\":{\"time\":1764489600.0,\"seed\":\"%064d\"}}", 0);
	struct gl_buf reply = {0};
	int ok = send_framed(mine, call.data, call.len) == 0 && read_msg(mine, &reply) == 0;
	bool stored = false;
	while (ok && slot_put(&reply)) { /* an exec host's state_put: the slot, acknowledged */
		stored = true;
		static const char ack[] = "{\"type\":\"state_ok\"}";
		ok = send_framed(mine, ack, sizeof ack - 1) == 0 && read_msg(mine, &reply) == 0;
	}
	double ms = (double)(gl_mono_ns() - t0) / 1e6;
	gl_buf_free(&call);
	gl_copy_kill(pidfd);
	close(pidfd);
	if (ok) {
		jv v = gl_json_parse(reply.data, reply.len);
		ok = jv_get_kind(v) == JV_KIND_OBJECT;
		jv val = ok ? jv_object_get(jv_copy(v), jv_string("value")) : jv_invalid();
		if (jv_get_kind(val) == JV_KIND_OBJECT) {
			jv c = jv_object_get(jv_copy(val), jv_string("child"));
			if (jv_get_kind(c) == JV_KIND_NUMBER)
				last_child = (long)jv_number_value(c);
			jv_free(c);
		}
		jv_free(val);
		jv_free(v);
	}
	if (ok)
		gl_buf_printf(o, ",\"ok\":true,\"ms\":%.1f,\"stored\":%s,\"reply\":%s", ms,
			      stored ? "true" : "false", reply.data);
	else
		gl_buf_adds(o, ",\"ok\":false,\"error\":\"protocol\"");
	gl_buf_printf(o, ",\"survivors\":%d", count_userns(g, 0));
	gl_buf_free(&reply);
	emit(o);
}

/* One line from fd into line (NUL-terminated, without its newline) within
 * the deadline: 0, or -1. buf/have keep what was read past it. */
static int read_line(int fd, struct gl_buf *in, struct gl_buf *line, const struct timespec *dl)
{
	for (;;) {
		char *nl = in->len ? memchr(in->data, '\n', in->len) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - in->data);
			line->len = 0;
			gl_buf_add(line, in->data, n);
			gl_buf_add(line, "", 1);
			memmove(in->data, nl + 1, in->len - n - 1);
			in->len -= n + 1;
			return 0;
		}
		if (in->len > (1u << 20) || gl_ctl_wait_readable(fd, dl) <= 0)
			return -1;
		char b[65536];
		ssize_t r = read(fd, b, sizeof b);
		if (r <= 0)
			return -1;
		gl_buf_add(in, b, (size_t)r);
	}
}

/* A field of /proc/P/smaps_rollup, in KiB (0 if absent). */
static long rollup_kb(pid_t pid, const char *key)
{
	autofree char *path = gl_xasprintf("/proc/%d/smaps_rollup", (int)pid), *t = NULL;
	size_t len;
	if (gl_read_file_capped(path, 1u << 16, &t, &len) < 0)
		return 0;
	const char *k = strstr(t, key);
	return k ? atol(k + strlen(key)) : 0;
}

/* The CPU time P's main thread has used, ms (/proc/P/schedstat's first
 * field, in ns: finer than stat's clock ticks), or -1. */
static double cpu_ms(pid_t pid)
{
	autofree char *path = gl_xasprintf("/proc/%d/schedstat", (int)pid), *t = NULL;
	size_t len;
	unsigned long long ns;
	if (gl_read_file_capped(path, 4096, &t, &len) < 0 || sscanf(t, "%llu", &ns) != 1)
		return -1;
	return (double)ns / 1e6;
}

/* The pid of a pidfd (its fdinfo's "Pid:"), or -1. */
static pid_t pidfd_pid(int pidfd)
{
	autofree char *path = gl_xasprintf("/proc/self/fdinfo/%d", pidfd), *t = NULL;
	size_t len;
	const char *k = gl_read_file_capped(path, 4096, &t, &len) == 0 ? strstr(t, "Pid:") : NULL;
	return k ? (pid_t)atol(k + 4) : -1;
}

/* mcp=FILE: a copy of a Node germline, FILE's requests on its channel;
 * with the answers, the copy's memory (PSS, private) and CPU time as it
 * answered, before it is killed. */
static void do_mcp(struct gl_germline *g, const char *file, int gcheck, struct gl_buf *o)
{
	gl_buf_adds(o, "{\"action\":\"mcp\"");
	autofree char *req = NULL;
	size_t len;
	if (gl_read_file_capped(file, 1u << 20, &req, &len) < 0)
		gl_die_errno(2, "%s", file);
	autoclose int mine = -1;
	int pidfd;
	int64_t t0;
	if (checked_fork(g, gcheck, o, &mine, &pidfd, &t0) < 0)
		return;
	int want = 0;
	for (const char *p = req; (p = strstr(p, "\"id\"")); p += 4)
		want++;
	struct timespec dl;
	gl_ctl_deadline_in(&dl, 20000);
	struct gl_buf in = {0}, line = {0};
	bool ok = gl_write_all(mine, req, len) == 0;
	gl_buf_adds(o, ",\"replies\":[");
	for (int k = 0; ok && k < want; k++) {
		ok = read_line(mine, &in, &line, &dl) == 0;
		if (ok)
			gl_buf_printf(o, "%s%s", k ? "," : "", line.data);
	}
	double ms = (double)(gl_mono_ns() - t0) / 1e6;
	pid_t cp = pidfd_pid(pidfd);
	gl_buf_printf(o, "],\"ok\":%s,\"ms\":%.1f,\"copy_pss_kb\":%ld,\"copy_private_kb\":%ld,"
			 "\"copy_cpu_ms\":%.1f",
		      ok ? "true" : "false", ms, rollup_kb(cp, "Pss:"),
		      rollup_kb(cp, "Private_Clean:") + rollup_kb(cp, "Private_Dirty:"), cpu_ms(cp));
	gl_copy_kill(pidfd);
	close(pidfd);
	gl_buf_free(&in);
	gl_buf_free(&line);
	gl_buf_printf(o, ",\"survivors\":%d", count_userns(g, 0));
	emit(o);
}

static void do_proc(const struct gl_germline *g, const char *name, struct gl_buf *o)
{
	autofree char *path = gl_xasprintf("/proc/%d/%s", (int)g->gpid, name), *text = NULL;
	size_t len = 0;
	gl_buf_adds(o, "{\"action\":\"proc\"");
	out_str(o, "name", name);
	if (gl_read_file_capped(path, 1u << 16, &text, &len) == 0) {
		autofree char *clean = gl_sanitize(text, len);
		out_str(o, "text", clean);
	}
	emit(o);
}

static void do_fds(const struct gl_germline *g, struct gl_buf *o)
{
	gl_buf_adds(o, "{\"action\":\"fds\",\"fds\":{");
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)g->gpid);
	DIR *d = opendir(path);
	int first = 1;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char lp[512], link[256];
		snprintf(lp, sizeof lp, "%s/%s", path, e->d_name);
		ssize_t n = readlink(lp, link, sizeof link - 1);
		link[n < 0 ? 0 : n] = 0;
		if (!strncmp(link, "socket:[", 8) && strtoull(link + 8, NULL, 10) == g->ctl_ino)
			snprintf(link, sizeof link, "control socket");
		gl_buf_printf(o, "%s\"%s\":", first ? "" : ",", e->d_name);
		gl_json_dump_string(o, link, strlen(link));
		first = 0;
	}
	if (d)
		closedir(d);
	gl_buf_adds(o, "}");
	emit(o);
}

static void do_info(const struct gl_germline *g, struct gl_buf *o)
{
	char exe[64], link[PATH_MAX];
	snprintf(exe, sizeof exe, "/proc/%d/exe", (int)g->gpid);
	ssize_t n = readlink(exe, link, sizeof link - 1);
	link[n < 0 ? 0 : n] = 0;
	gl_buf_printf(o, "{\"action\":\"info\",\"pid\":%d,\"interpreter_sha256\":\"%s\"", (int)g->gpid,
		      g->interpreter_sha256);
	out_str(o, "exe", link);
	const struct gl_enforcement *e = &g->enf;
	gl_buf_printf(o, ",\"landlock_abi\":%d,\"fs\":%s,\"net\":%s,\"scoped\":%s,\"seccomp\":%s,"
			 "\"seccomp_filter_sha256\":\"%s\",\"namespaces\":[",
		      e->landlock_abi, e->fs_enforced ? "true" : "false", e->net_enforced ? "true" : "false",
		      e->scoped_enforced ? "true" : "false", e->seccomp_enforced ? "true" : "false",
		      e->seccomp_filter_sha256);
	for (int i = 0; e->namespaces[i]; i++)
		gl_buf_printf(o, "%s\"%s\"", i ? "," : "", e->namespaces[i]);
	gl_buf_adds(o, "]");
	emit(o);
}

/* The manifest's "env" as "K=V" strings into out (at most
 * GL_NODE_ARGS_MAX, malloc'd), ${GL_STATE_DIR} replaced by dir. */
static void manifest_env(jv m, const char *dir, char **out)
{
	jv env = jv_object_get(jv_copy(m), jv_string("env"));
	int k = 0;
	if (jv_get_kind(env) == JV_KIND_OBJECT)
		jv_object_foreach(env, key, val) {
			if (k < GL_NODE_ARGS_MAX && jv_get_kind(val) == JV_KIND_STRING) {
				const char *v = jv_string_value(val), *at = strstr(v, "${GL_STATE_DIR}");
				out[k++] = at ? gl_xasprintf("%s=%.*s%s%s", jv_string_value(key),
							     (int)(at - v), v, dir ? dir : "/nonexistent",
							     at + 15)
					      : gl_xasprintf("%s=%s", jv_string_value(key), v);
			}
			jv_free(key);
			jv_free(val);
		}
	jv_free(env);
}

int main(int argc, char **argv)
{
	gl_stdio_init("germline_drive");
	struct gl_launch_spec spec = {.host_dir = GL_BUILD_HOST_DIR, .interpreter = "/usr/bin/python3"};
	int gcheck = 1, i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--no-g-check")) {
			gcheck = 0;
			continue;
		}
		if (!strcmp(a, "--no-copy-check")) {
			gl_launch_test.no_copy_check = 1;
			continue;
		}
		if (!strcmp(a, "--warm")) {
			spec.warm = true;
			continue;
		}
		if (!strcmp(a, "--exec-host")) {
			spec.exec_host = true;
			continue;
		}
		if (!v)
			gl_die(2, "%s needs a value", a);
		i++;
		if (!strcmp(a, "--host"))
			spec.host_dir = v;
		else if (!strcmp(a, "--interpreter"))
			spec.interpreter = v;
		else if (!strcmp(a, "--state-dir"))
			spec.state_dir = v;
		else if (!strcmp(a, "--swap"))
			swap_src = v, gl_launch_test.after_open = do_swap;
		else if (!strcmp(a, "--germline-off"))
			gl_launch_test.off = parse_off(v, 0);
		else if (!strcmp(a, "--copy-off"))
			gl_launch_test.copy_off = parse_off(v, 1), gl_launch_test.no_copy_check = 1;
		else if (!strcmp(a, "--copy-off-checked")) /* the broker's copy check stays on */
			gl_launch_test.copy_off = parse_off(v, 1);
		else
			gl_die(2, "unknown option %s", a);
	}
	if (i >= argc)
		gl_die(2, "usage: germline_drive [OPTIONS] RELEASE_DIR [ACTION...]");
	spec.release_dir = argv[i++];
	/* The manifest (SPEC §5) gives the entry module and read_paths. */
	autofree char *mpath = gl_xasprintf("%s/manifest.json", spec.release_dir), *mtext = NULL;
	size_t mlen;
	if (gl_read_file_capped(mpath, 1u << 20, &mtext, &mlen) < 0)
		gl_die_errno(2, "%s", mpath);
	jv m = gl_json_parse(mtext, mlen);
	const char *node_args[GL_NODE_ARGS_MAX + 1] = {0};
	char *owned[GL_NODE_ARGS_MAX + 2] = {0}; /* the entry's strings, freed at the end */
	jv ent = jv_object_get(jv_copy(m), jv_string("entry"));
	if (jv_get_kind(ent) == JV_KIND_ARRAY) { /* runtime exec: a Node germline */
		spec.node = true;
		for (int k = 0; k < jv_array_length(jv_copy(ent)) && k < GL_NODE_ARGS_MAX + 2; k++) {
			jv a = jv_array_get(jv_copy(ent), k);
			const char *v = owned[k] =
				gl_xstrdup(jv_get_kind(a) == JV_KIND_STRING ? jv_string_value(a) : "");
			jv_free(a);
			if (k == 0)
				spec.interpreter = v;
			else if (k == 1)
				spec.entry = v;
			else
				node_args[k - 2] = v;
		}
		spec.entry_args = node_args;
	} else {
		spec.entry = gl_json_get_str(m, "entry");
	}
	jv_free(ent);
	if (!spec.entry)
		gl_die(2, "%s: no entry", mpath);
	char *env_owned[GL_NODE_ARGS_MAX + 1] = {0};
	manifest_env(m, spec.state_dir, env_owned);
	spec.env = (const char *const *)env_owned;
	slot = jv_object();
	const char *rp[16] = {0};
	jv paths = jv_object_get(jv_copy(m), jv_string("read_paths"));
	for (int k = 0; jv_get_kind(paths) == JV_KIND_ARRAY && k < jv_array_length(jv_copy(paths)) && k < 15; k++) {
		jv s = jv_array_get(jv_copy(paths), k);
		rp[k] = jv_get_kind(s) == JV_KIND_STRING ? gl_xstrdup(jv_string_value(s)) : NULL;
		jv_free(s);
	}
	jv_free(paths);
	spec.read_paths = rp;

	/* Orphans of a copy (with --copy-off newpid) come back to us, to be
	 * counted and killed. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	struct gl_germline g;
	autofail struct gl_fail err = {0};
	struct gl_buf o = {0};
	int64_t t0 = gl_mono_ns();
	enum gl_launch_step step = gl_germline_launch(&spec, &g, &err);
	gl_buf_printf(&o, "{\"action\":\"launch\",\"ok\":%s,\"step\":\"%s\",\"ms\":%.1f",
		      step == GL_LAUNCH_OK ? "true" : "false", gl_launch_step_name(step),
		      (double)(gl_mono_ns() - t0) / 1e6);
	if (err.detail)
		out_str(&o, "error", err.detail);
	emit(&o);
	gl_fail_clear(&err);
	int rc = step == GL_LAUNCH_OK ? 0 : 1;
	for (; !rc && i < argc; i++) {
		if (!strcmp(argv[i], "info"))
			do_info(&g, &o);
		else if (!strcmp(argv[i], "fds"))
			do_fds(&g, &o);
		else if (!strcmp(argv[i], "check")) {
			gl_buf_adds(&o, "{\"action\":\"check\"");
			int ok = gl_germline_check(&g, &err) == 0;
			gl_buf_printf(&o, ",\"ok\":%s", ok ? "true" : "false");
			if (!ok)
				out_str(&o, "detail", gl_fail_detail(&err)), gl_fail_clear(&err);
			emit(&o);
		} else if (!strncmp(argv[i], "proc=", 5)) {
			do_proc(&g, argv[i] + 5, &o);
		} else if (!strncmp(argv[i], "sleep=", 6)) {
			struct timespec ts = {0, atol(argv[i] + 6) % 1000 * 1000000L};
			ts.tv_sec = atol(argv[i] + 6) / 1000;
			nanosleep(&ts, NULL);
		} else if (!strncmp(argv[i], "mcp=", 4))
			do_mcp(&g, argv[i] + 4, gcheck, &o);
		else
			do_call(&g, argv[i], gcheck, &o);
	}
	if (step == GL_LAUNCH_OK) {
		count_userns(&g, 1);
		gl_germline_stop(&g);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	gl_buf_free(&o);
	for (int k = 0; rp[k]; k++)
		free((char *)rp[k]);
	for (int k = 0; k < GL_NODE_ARGS_MAX + 2; k++)
		free(owned[k]);
	for (int k = 0; env_owned[k]; k++)
		free(env_owned[k]);
	jv_free(slot);
	jv_free(m);
	return rc;
}
