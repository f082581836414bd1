/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /etc/nsguard/nsguard.conf: "key = value" lines, '#' starts a comment
 * (anywhere on a line), blank lines are ignored, CRLF line ends are accepted.
 * Every error names origin:line, so the administrator can fix it directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "fileio.h"
#include "log.h"
#include "policy.h"
#include "util.h"

#define CONFIG_FILE_MAX (64 * 1024)

enum config_key {
	KEY_DEFAULT_MODE,
	KEY_ALLOWED_MODES,
	KEY_MAX_DEPTH,
	KEY_ERRNO,
	KEY_FAIL_MODE,
	KEY_SHARED_CGROUPS,
	KEY_MAX_COUNT,
	KEY_LEARN_DIR,
	KEY_RUNTIME,
	KEY_HOST_CAPABILITIES,
	KEY_IDENTITY_SOURCE,
	KEY_COUNT,
};

static const char *const key_names[KEY_COUNT] = {
	[KEY_DEFAULT_MODE] = "default-mode",
	[KEY_ALLOWED_MODES] = "allowed-modes",
	[KEY_MAX_DEPTH] = "max-depth",
	[KEY_ERRNO] = "errno",
	[KEY_FAIL_MODE] = "fail-mode",
	[KEY_SHARED_CGROUPS] = "shared-cgroups",
	[KEY_MAX_COUNT] = "max-count",
	[KEY_LEARN_DIR] = "learn-dir",
	[KEY_RUNTIME] = "runtime",
	[KEY_HOST_CAPABILITIES] = "host-capabilities",
	[KEY_IDENTITY_SOURCE] = "identity-source",
};

static void set_origin(struct nsguard_config *cfg, const char *origin)
{
	snprintf(cfg->origin, sizeof(cfg->origin), "%s", origin);
}

void config_defaults(struct nsguard_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->default_mode = NSGUARD_MODE_DENY;
	cfg->allowed_modes =
		(1u << NSGUARD_MODE_DENY) | (1u << NSGUARD_MODE_AUDIT) | (1u << NSGUARD_MODE_ALLOW);
	cfg->max_depth = NSGUARD_MAX_DEPTH;
	cfg->default_err = NSGUARD_DEFAULT_ERRNO;
	cfg->max_count = NSGUARD_COUNT_UNLIMITED;
	snprintf(cfg->learn_dir, sizeof(cfg->learn_dir), "%s", NSGUARD_LEARN_DIR);
	cfg->fail_open = false;
	cfg->shared_cgroups = false;
	/* The common Kubernetes runtime; detecting it from annotations would be
	 * the tenant's choice (every annotation is). */
	cfg->identity_source = IDENT_SRC_CONTAINERD;
	set_origin(cfg, "built-in defaults");
}

/*
 * An absolute path into out: learn-dir and runtime, which nsguard writes to
 * or runs as root, so only the admin's own absolute path will do.
 */
static int parse_path(const char *value, char *out, size_t size, const char *origin,
		      unsigned lineno, const char *key)
{
	if (value[0] != '/' || strlen(value) >= size)
		return nsg_fail(EINVAL, "%s:%u: %s \"%.64s\" is not an absolute path", origin,
				lineno, key, value);
	snprintf(out, size, "%s", value);
	return 0;
}

/* A key with two values: off -> false, on -> true. */
static int parse_switch(const char *value, const char *off, const char *on, bool *out,
			const char *origin, unsigned lineno, const char *key)
{
	if (strcmp(value, off) == 0)
		*out = false;
	else if (strcmp(value, on) == 0)
		*out = true;
	else
		return nsg_fail(EINVAL, "%s:%u: %s \"%.64s\" is not %s or %s", origin, lineno, key,
				value, off, on);
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* "deny, audit allow": commas and/or blanks separate; at least one mode. */
static int parse_modes(char *value, __u32 *mask)
{
	char *save = NULL, *tok;
	__u32 m, out = 0;

	for (tok = strtok_r(value, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (policy_mode_parse(tok, &m) < 0)
			return -EINVAL;
		out |= 1u << m;
	}
	if (!out)
		return -EINVAL;
	*mask = out;
	return 0;
}

static int parse_line(char *line, const char *origin, unsigned lineno, struct nsguard_config *cfg,
		      unsigned seen[KEY_COUNT])
{
	char *eq, *key, *value, *hash;
	__u32 v = 0;
	int k;

	hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	line = trim(line);
	if (!line[0])
		return 0;
	eq = strchr(line, '=');
	if (!eq)
		return nsg_fail(EINVAL, "%s:%u: expected \"key = value\"", origin, lineno);
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);

	for (k = 0; k < KEY_COUNT; k++)
		if (strcmp(key, key_names[k]) == 0)
			break;
	if (k == KEY_COUNT) {
		char known[512];
		size_t off = 0;

		for (k = 0; k < KEY_COUNT && off < sizeof(known); k++)
			off += snprintf(known + off, sizeof(known) - off, "%s%s", k ? ", " : "",
					key_names[k]);
		return nsg_fail(EINVAL, "%s:%u: unknown key \"%.64s\" (known: %s)", origin, lineno,
				key, known);
	}
	if (seen[k])
		return nsg_fail(EINVAL, "%s:%u: %s is already set on line %u", origin, lineno,
				key_names[k], seen[k]);
	seen[k] = lineno;
	cfg->key_line[k] = lineno;
	if (!value[0])
		return nsg_fail(EINVAL, "%s:%u: %s has no value", origin, lineno, key_names[k]);

	switch (k) {
	case KEY_DEFAULT_MODE:
		if (policy_mode_parse(value, &v) < 0)
			return nsg_fail(EINVAL,
					"%s:%u: default-mode \"%.64s\" is not deny, audit, allow or learn",
					origin, lineno, value);
		cfg->default_mode = v;
		break;
	case KEY_ALLOWED_MODES:
		if (parse_modes(value, &v) < 0)
			return nsg_fail(EINVAL,
					"%s:%u: allowed-modes must list deny, audit, allow and/or learn",
					origin, lineno);
		cfg->allowed_modes = v;
		break;
	case KEY_MAX_DEPTH:
		if (policy_depth_parse(value, &v) < 0)
			return nsg_fail(EINVAL, "%s:%u: max-depth \"%.64s\" is not a number in 0..%d",
					origin, lineno, value, NSGUARD_MAX_DEPTH);
		cfg->max_depth = v;
		break;
	case KEY_ERRNO:
		if (policy_errno_parse(value, &v) < 0)
			return nsg_fail(EINVAL, "%s:%u: errno \"%.64s\" is not EPERM, ENOSPC or EACCES",
					origin, lineno, value);
		cfg->default_err = v;
		break;
	case KEY_MAX_COUNT:
		if (policy_count_parse(value, &v) < 0)
			return nsg_fail(EINVAL,
					"%s:%u: max-count \"%.64s\" is not a number in 0..%d or unlimited",
					origin, lineno, value, NSGUARD_MAX_COUNT);
		cfg->max_count = v;
		break;
	case KEY_LEARN_DIR:
		return parse_path(value, cfg->learn_dir, sizeof(cfg->learn_dir), origin, lineno,
				  key_names[k]);
	case KEY_RUNTIME:
		return parse_path(value, cfg->runtime, sizeof(cfg->runtime), origin, lineno,
				  key_names[k]);
	case KEY_FAIL_MODE:
		return parse_switch(value, "closed", "open", &cfg->fail_open, origin, lineno,
				    key_names[k]);
	case KEY_SHARED_CGROUPS:
		return parse_switch(value, "refuse", "allow", &cfg->shared_cgroups, origin, lineno,
				    key_names[k]);
	case KEY_HOST_CAPABILITIES:
		return parse_switch(value, "refuse", "allow", &cfg->host_caps, origin, lineno,
				    key_names[k]);
	case KEY_IDENTITY_SOURCE:
		if (identity_source_parse(value, &cfg->identity_source) < 0)
			return nsg_fail(EINVAL,
					"%s:%u: identity-source \"%.64s\" is not containerd, cri-o or "
					"none",
					origin, lineno, value);
		break;
	}
	return 0;
}

unsigned config_key_line(const struct nsguard_config *cfg, const char *key)
{
	for (int k = 0; k < KEY_COUNT; k++)
		if (strcmp(key, key_names[k]) == 0)
			return cfg->key_line[k];
	return 0;
}

/*
 * Without err, the first error ends the parse (what every command but check
 * wants: fail closed); with it, each error is reported and parsing goes on
 * at the next line.  Returns the number of errors, or -errno without err.
 */
static int parse_text(const char *text, size_t len, const char *origin, config_error_fn report,
		      void *data, struct nsguard_config *cfg)
{
	unsigned seen[KEY_COUNT] = { 0 };
	struct nsguard_config c;
	unsigned lineno = 0;
	size_t pos = 0;
	int err = 0, errors = 0;

	config_defaults(&c);
	set_origin(&c, origin);
	if (memchr(text, '\0', len)) {
		err = nsg_fail(EINVAL, "%s: contains a NUL byte", origin);
		if (!report)
			return err;
		report(0, nsg_last_error(), data);
		return 1;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		cleanup_free char *line = strndup(text + pos, n);

		lineno++;
		if (!line)
			return nsg_fail(ENOMEM, "%s: out of memory", origin);
		err = parse_line(line, origin, lineno, &c, seen);
		if (err < 0 && !report)
			return err;
		if (err < 0) {
			report(lineno, nsg_last_error(), data);
			errors++;
		}
		pos += n + 1;
	}
	if (!(c.allowed_modes & (1u << c.default_mode))) {
		/* Point at whichever of the two lines the administrator wrote. */
		unsigned at = seen[KEY_DEFAULT_MODE] ? seen[KEY_DEFAULT_MODE] : seen[KEY_ALLOWED_MODES];

		err = nsg_fail(EINVAL, "%s:%u: default-mode %s is not in allowed-modes", origin, at,
			       policy_mode_name(c.default_mode));
		if (!report)
			return err;
		report(at, nsg_last_error(), data);
		errors++;
	}
	if (!errors)
		*cfg = c;
	return errors;
}

int config_parse(const char *text, size_t len, const char *origin, struct nsguard_config *cfg)
{
	return parse_text(text, len, origin, NULL, NULL, cfg);
}

int config_parse_all(const char *text, size_t len, const char *origin, config_error_fn err,
		     void *data, struct nsguard_config *cfg)
{
	return parse_text(text, len, origin, err, data, cfg);
}

/* The file's text; -ENOENT without a message when it does not exist. */
static int read_config(const char *path, char **buf_out, size_t *len_out)
{
	cleanup_free char *buf = NULL;
	cleanup_close int fd = -1;
	struct stat sb;
	size_t len = 0;
	int err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0)
		return nsg_fail(errno, "open config %s: %s", path, strerror(errno));
	if (fstat(fd, &sb) < 0)
		return nsg_fail(errno, "stat config %s: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return nsg_fail(EINVAL, "config %s is not a regular file", path);
	err = read_capped(fd, CONFIG_FILE_MAX, &buf, &len);
	if (err == -EFBIG)
		return nsg_fail(EFBIG, "config %s is larger than %d KiB", path, CONFIG_FILE_MAX >> 10);
	if (err == -ENOMEM)
		return nsg_fail(ENOMEM, "read config %s: out of memory", path);
	if (err < 0)
		return nsg_fail(-err, "read config %s: %s", path, strerror(-err));
	*buf_out = steal_pointer(&buf);
	*len_out = len;
	return 0;
}

int config_load(const char *path, bool explicit, struct nsguard_config *cfg)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int err = read_config(path, &buf, &len);

	if (err == -ENOENT && !explicit) {
		config_defaults(cfg);
		return 0;
	}
	if (err == -ENOENT)
		return nsg_fail(ENOENT, "open config %s: %s", path, strerror(ENOENT));
	if (err)
		return err;
	return config_parse(buf, len, path, cfg);
}

int config_check(const char *path, config_error_fn report, void *data, struct nsguard_config *cfg)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int err = read_config(path, &buf, &len);

	if (err == -ENOENT)
		nsg_fail(ENOENT, "open config %s: %s", path, strerror(ENOENT));
	if (err) {
		report(0, nsg_last_error(), data);
		return err;
	}
	return parse_text(buf, len, path, report, data, cfg);
}
