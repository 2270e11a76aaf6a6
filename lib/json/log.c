/* log.c — the operator's JSON Lines log and terminal progress; see log.h. */
#define _GNU_SOURCE
#include "json/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json/json.h"
#include "json/msg.h"
#include "json/refusal.h"

static int log_fd = -1;
static const char *log_prog = "gl";
static bool log_failed;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t prog_start, prog_last;
static bool prog_shown;

int gl_log_start(const char *prog, const char *path, struct gl_fail *f)
{
	log_prog = prog;
	prog_start = gl_mono_ns();
	if (!path || !*path)
		path = getenv("GL_LOG");
	if (!path || !*path)
		return 0;
	log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
	if (log_fd < 0)
		return gl_fail_errno(f, GL_E_IO, "--log %s", path);
	return 0;
}

void gl_log_open(const char *prog, const char *path)
{
	autofail struct gl_fail f = {0};
	if (gl_log_start(prog, path, &f) < 0)
		gl_fail_exit(&f);
}

void gl_log_take_flag(const char *prog, int *argc, char **argv)
{
	autofail struct gl_fail f = {0};
	if (gl_log_take(prog, argc, argv, &f) < 0)
		gl_fail_exit(&f);
}

int gl_log_take(const char *prog, int *argc, char **argv, struct gl_fail *f)
{
	const char *path = NULL;
	int j = 1, i = 1;
	for (; i < *argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--log")) {
			if (i + 1 >= *argc)
				return gl_fail(f, GL_E_USAGE, "--log wants a FILE");
			path = argv[++i];
		} else if (!strncmp(argv[i], "--log=", 6)) {
			path = argv[i] + 6;
		} else {
			argv[j++] = argv[i];
		}
	}
	for (; i < *argc; i++)
		argv[j++] = argv[i];
	argv[j] = NULL;
	*argc = j;
	return gl_log_start(prog, path, f);
}

void gl_log_command(const char *command, int status, const char *error)
{
	if (log_fd < 0)
		return;
	gl_log_event("command", JV_OBJECT(jv_string("command"), jv_string(command ? command : ""),
					  jv_string("exit"), jv_number(status), jv_string("error"),
					  error ? jv_string(error) : jv_null(), jv_string("elapsed_ms"),
					  jv_number((double)((gl_mono_ns() - prog_start) / 1000000))));
}

bool gl_log_on(void)
{
	return log_fd >= 0;
}

void gl_log_event(const char *event, jv fields)
{
	if (log_fd < 0) {
		jv_free(fields);
		return;
	}
	char ts[21];
	gl_time_format(gl_now(), ts);
	jv e = JV_OBJECT(jv_string("ts"), jv_string(ts), jv_string("prog"), jv_string(log_prog),
			 jv_string("pid"), jv_number(getpid()), jv_string("event"), jv_string(event));
	if (jv_get_kind(fields) == JV_KIND_OBJECT)
		e = jv_object_merge(e, fields);
	else
		jv_free(fields);
	struct gl_buf b = {0};
	gl_json_dump(&b, e);
	jv_free(e);
	gl_buf_addc(&b, '\n');
	pthread_mutex_lock(&log_mu);
	ssize_t n;
	do
		n = write(log_fd, b.data, b.len); /* one write: O_APPEND keeps it whole */
	while (n < 0 && errno == EINTR);
	if ((n < 0 || (size_t)n != b.len) && !log_failed) {
		log_failed = true;
		gl_warn("log: write failed: %s", n < 0 ? strerror(errno) : "short write");
	}
	pthread_mutex_unlock(&log_mu);
	free(b.data);
}

/* A string member of o (borrowed) as a jv, or jv_null(). */
static jv str_or_null(jv o, const char *k)
{
	const char *s = jv_get_kind(o) == JV_KIND_OBJECT ? gl_json_get_str(o, k) : NULL;
	return s ? jv_string(s) : jv_null();
}

jv gl_log_field(jv obj, const char *key)
{
	jv v = jv_get_kind(obj) == JV_KIND_OBJECT ? gl_json_get(obj, key) : jv_invalid();
	return jv_is_valid(v) ? v : jv_null();
}

static bool is_limit(const char *e)
{
	return e && (!strcmp(e, "memory") || !strcmp(e, "pids") || !strcmp(e, "cpu") ||
		     !strcmp(e, "disk"));
}

/* Per consumer: copy_failed or limit, with its code only. */
static void log_results(jv rec, jv base)
{
	jv res = gl_json_get(rec, "results");
	if (jv_get_kind(res) == JV_KIND_ARRAY)
		jv_array_foreach(res, i, r)
		{
			(void)i;
			if (jv_get_kind(r) == JV_KIND_OBJECT && gl_json_get_bool(r, "ok", 0) != 1) {
				const char *e = gl_json_get_str(r, "error");
				jv f = jv_object_merge(jv_copy(base),
						       JV_OBJECT(jv_string("consumer"), str_or_null(r, "consumer"),
								 jv_string("error"), str_or_null(r, "error")));
				gl_log_event(is_limit(e) ? "limit" : "copy_failed", f);
			}
			jv_free(r);
		}
	jv_free(res);
}

void gl_log_result(jv rec)
{
	if (log_fd < 0 || jv_get_kind(rec) != JV_KIND_OBJECT)
		return;
	jv id = gl_json_get(rec, "id");
	jv base = JV_OBJECT(jv_string("id"), jv_is_valid(id) ? id : jv_null(), jv_string("release"),
			    str_or_null(rec, "release"), jv_string("function"),
			    str_or_null(rec, "function"));
	bool ok = gl_json_get_bool(rec, "ok", 0) == 1;
	jv copies = gl_json_get(rec, "copies"), ms = gl_json_get(rec, "elapsed_ms");
	jv end = jv_object_merge(jv_copy(base),
				 JV_OBJECT(jv_string("ok"), jv_bool(ok), jv_string("mode"),
					   str_or_null(rec, "mode"), jv_string("copies"),
					   jv_is_valid(copies) ? copies : jv_number(0),
					   jv_string("elapsed_ms"), jv_is_valid(ms) ? ms : jv_null()));
	if (!ok) {
		end = jv_object_set(end, jv_string("error"), str_or_null(rec, "error"));
		gl_log_event("refusal", jv_object_set(jv_copy(base), jv_string("error"),
						      str_or_null(rec, "error")));
	}
	log_results(rec, base);
	jv trig = gl_json_get(rec, "triggers");
	if (jv_get_kind(trig) == JV_KIND_ARRAY)
		jv_array_foreach(trig, i, t)
		{
			(void)i;
			gl_log_event("trigger",
				     jv_object_merge(jv_copy(base),
						     JV_OBJECT(jv_string("destination"),
							       str_or_null(t, "destination"),
							       jv_string("kind"), str_or_null(t, "kind"),
							       jv_string("witness"), str_or_null(t, "id"))));
			jv_free(t);
		}
	jv_free(trig);
	gl_log_event("call_end", end);
	jv_free(base);
}

void gl_log_close(void)
{
	gl_log_progress_end();
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

void gl_log_progress(const char *fmt, ...)
{
	int64_t now = gl_mono_ns();
	if (!log_prog || now - prog_start < 2000000000LL || now - prog_last < 1000000000LL ||
	    !isatty(2))
		return;
	prog_last = now;
	char text[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\r%s: %s\033[K", log_prog, text);
	fflush(stderr);
	prog_shown = true;
}

void gl_log_progress_end(void)
{
	if (prog_shown)
		fputc('\n', stderr);
	prog_shown = false;
}
