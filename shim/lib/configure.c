// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the runtimes' parts of configure|unconfigure share (configure.h):
 * reading and replacing their files, --dry-run's diff, running their own
 * tools, the hooks.d files.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "configure.h"
#include "fileio.h"
#include "json.h"
#include "log.h"
#include "spec.h"
#include "util.h"

/* path's bytes (NUL-terminated), or *existed false when there is none. */
int conf_read_file(const char *path, char **text, size_t *len, bool *existed)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int err;

	*existed = fd >= 0;
	if (fd < 0 && errno == ENOENT) {
		*text = strdup("");
		*len = 0;
		return *text ? 0 : nsg_fail(ENOMEM, "out of memory");
	}
	if (fd < 0)
		return nsg_fail(errno, "%s: %s", path, strerror(errno));
	err = read_capped(fd, CONF_MAX, text, len);
	if (err)
		return nsg_fail(-err, "%s: %s", path, err == -EFBIG ? "over 1 MiB" : strerror(-err));
	return 0;
}

/*
 * configure makes root run what it names (dockerd and containerd run the
 * wrapper; --extra files go into containerd's config.toml): path, links resolved, and
 * every directory above it must be root's and written by no one else (a
 * world-writable directory only with the sticky bit, as /tmp).
 */
int conf_trusted(const char *path)
{
	cleanup_free char *real = realpath(path, NULL);
	struct stat st;
	char *p;

	if (!real)
		return nsg_fail(errno, "%s: %s", path, strerror(errno));
	for (p = real;; p++) {
		char c = *p;
		bool sticky_ok;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (lstat(real[0] ? real : "/", &st) < 0)
			return nsg_fail(errno, "%s: %s", real[0] ? real : "/", strerror(errno));
		sticky_ok = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
		if (st.st_uid != 0 || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_ok))
			return nsg_fail(EPERM,
					"%s: %s is not root's alone (owner %u, mode %04o): root "
					"would run what others can change; install it with make "
					"install",
					path, real[0] ? real : "/", (unsigned)st.st_uid,
					(unsigned)(st.st_mode & 07777));
		*p = c;
		if (!c)
			return 0;
	}
}

int conf_link_ready(const char *link)
{
	if (access(link, X_OK) < 0)
		return nsg_fail(ENOENT, "%s: %s (make install makes the wrapper's links; "
					"--bindir names another place)",
				link, strerror(errno));
	return conf_trusted(link);
}

/* dir and base name of path, for write_file_atomic. */
int conf_split(const char *path, char **dir, char **base)
{
	cleanup_free char *a = strdup(path), *b = strdup(path);

	if (!a || !b)
		return nsg_fail(ENOMEM, "out of memory");
	*dir = strdup(dirname(a));
	*base = strdup(basename(b));
	return *dir && *base ? 0 : nsg_fail(ENOMEM, "out of memory");
}

/* Replace path with exactly text, atomically (a temporary file beside it, renamed). */
int conf_write_text(const char *path, const char *text, mode_t mode)
{
	cleanup_free char *dir = NULL, *base = NULL;
	int err = conf_split(path, &dir, &base);

	return err ?: write_file_exact(dir, base, text, 0755, mode);
}

/* The side file that keeps the original: DIR/.BASE.nsguard-SUFFIX. */
char *conf_side_path(const char *path, const char *suffix)
{
	cleanup_free char *dir = NULL, *base = NULL;
	char *p = NULL;

	if (conf_split(path, &dir, &base) < 0 ||
	    asprintf(&p, "%s/.%s.nsguard-%s", dir, base, suffix) < 0)
		return NULL;
	return p;
}

/* --dry-run: what would change, as diff -U0 shows it: the changed lines alone. */
int conf_show_diff(const char *path, const char *old, const char *new)
{
	char a[] = "/tmp/nsguard-configure.XXXXXX", b[] = "/tmp/nsguard-configure.XXXXXX";
	cleanup_close int fa = mkstemp(a), fb = mkstemp(b);
	pid_t pid;
	int status = 0;

	if (fa < 0 || fb < 0 || write_all(fa, old, strlen(old)) < 0 ||
	    write_all(fb, new, strlen(new)) < 0)
		return nsg_fail(errno ?: EIO, "--dry-run: temporary files: %s", strerror(errno ?: EIO));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char la[512], lb[512];

		snprintf(la, sizeof(la), "--label=%s", path);
		snprintf(lb, sizeof(lb), "--label=%s (nsguard)", path);
		execlp("diff", "diff", "-U0", la, lb, a, b, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	unlink(a);
	unlink(b);
	return pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1 ?
		       nsg_fail(EIO, "--dry-run: diff failed") :
		       0;
}

/* One hooks.d file (oci-hooks(5) 1.0.0) running this binary at stage. */
char *conf_hook_json(const struct conf *c, const char *stage)
{
	cleanup_jv struct jv *o = jv_new_object();
	cleanup_free char *path = NULL, *text = NULL;
	const char *args[] = { "nsguard", "hook", stage };
	struct jv *hook, *when;
	char *t = NULL;

	if (!o || asprintf(&path, "%s/nsguard", c->bindir) < 0)
		return NULL;
	hook = jv_add_object(o, "hook");
	when = jv_add_object(o, "when");
	if (!jv_add_string(o, "version", "1.0.0") || !hook || !when ||
	    !jv_add_string(hook, "path", path) ||
	    !jv_add_take(hook, "args", jv_new_string_array(args, 3)) ||
	    !jv_add_number(hook, "timeout", SPEC_HOOK_TIMEOUT) ||
	    !jv_add_bool(when, "always", true) ||
	    !jv_add_take(o, "stages", jv_new_string_array(&stage, 1)))
		return NULL;
	text = jv_format_pretty(o);
	if (!text || asprintf(&t, "%s\n", text) < 0)
		return NULL;
	return t;
}

int conf_hooks_files(const struct conf *c, const char *dir, bool add, size_t *changed)
{
	static const char *const stages[] = { "createRuntime", "poststop" };
	int err = 0;

	*changed = 0;
	if (add) {
		cleanup_free char *self = NULL;

		if (asprintf(&self, "%s/nsguard", c->bindir) < 0)
			return nsg_fail(ENOMEM, "out of memory");
		err = conf_trusted(self);
		if (err)
			return err;
	}
	for (size_t i = 0; i < ARRAY_SIZE(stages) && !err; i++) {
		cleanup_free char *path = NULL, *want = conf_hook_json(c, stages[i]), *text = NULL;
		bool existed;
		size_t len;

		if (!want || asprintf(&path, "%s/nsguard-%s.json", dir, stages[i]) < 0)
			return nsg_fail(ENOMEM, "out of memory");
		err = conf_read_file(path, &text, &len, &existed);
		if (err)
			break;
		if (add && existed && strcmp(text, want) == 0)
			continue;
		if (!add && !existed)
			continue;
		if (!add && strcmp(text, want) != 0) {
			err = nsg_fail(EEXIST, "%s is not what configure wrote (edited?): left alone",
				       path);
			break;
		}
		(*changed)++;
		if (c->dry_run) {
			err = conf_show_diff(path, add ? text : want, add ? want : "");
			continue;
		}
		if (add)
			err = conf_write_text(path, want, 0644);
		else if (unlink(path) < 0)
			err = nsg_fail(errno, "%s: %s", path, strerror(errno));
	}
	return err;
}

/*
 * Run argv (argv[0] looked up in PATH) to its end: with out, its standard
 * output is taken (malloc'd); without, it is the user's.
 */
int conf_spawn(char *const argv[], char **out)
{
	int fds[2] = { -1, -1 }, status = 0, err = 0;
	size_t len = 0;
	pid_t pid;

	if (out)
		*out = NULL;
	if (out && pipe2(fds, O_CLOEXEC) < 0)
		return nsg_fail(errno, "pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (out)
			dup2(fds[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		fprintf(stderr, "nsguard: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		err = -errno;
	if (out) {
		close(fds[1]);
		if (!err)
			err = read_capped(fds[0], CONF_MAX, out, &len);
		close(fds[0]);
	}
	if (pid > 0 && waitpid(pid, &status, 0) < 0 && !err)
		err = -errno;
	if (err)
		return nsg_fail(-err, "%s: %s", argv[0], strerror(-err));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return nsg_fail(EIO, "%s failed (status %d)", argv[0],
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
