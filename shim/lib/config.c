/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /etc/nsguard/nsguard.conf: "key = value" lines, '#' starts a comment
 * (anywhere on a line), blank lines are ignored, CRLF line ends are accepted.
 * Every error names origin:line, so the administrator can fix it directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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

_Static_assert(KEY_COUNT <= CONFIG_KEYS_MAX, "key_line[] too small");

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
	cfg->section = -1;
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

/*
 * The keys a [namespace] section may set: those policy_fields[] names as a
 * field's default or ceiling, so a new policy field is a section key too.
 */
static bool section_key(const char *key)
{
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];

		if ((f->default_key && strcmp(key, f->default_key) == 0) ||
		    (f->limit_key && strcmp(key, f->limit_key) == 0))
			return true;
	}
	return false;
}

static int parse_line(char *line, const char *origin, unsigned lineno, struct nsguard_config *cfg,
		      unsigned seen[KEY_COUNT], bool in_section)
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
	if (in_section && !section_key(key_names[k]))
		return nsg_fail(EINVAL,
				"%s:%u: %s is node-wide, not a [namespace] key: set it before the "
				"first section",
				origin, lineno, key_names[k]);
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

bool config_namespace_valid(const char *ns)
{
	size_t n = strlen(ns);

	if (n == 0 || n > CONFIG_NAMESPACE_MAX || ns[0] == '-' || ns[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((ns[i] >= 'a' && ns[i] <= 'z') || (ns[i] >= '0' && ns[i] <= '9') ||
		      ns[i] == '-'))
			return false;
	return true;
}

/* '*' matches any run of characters, also none; nothing else is special. */
static bool glob_match(const char *p, const char *s)
{
	const char *star = NULL, *retry = NULL;

	while (*s) {
		if (*p == '*') {
			star = p++;
			retry = s;
		} else if (*p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++retry;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

int config_section_match(const struct nsguard_config *cfg, const char *ns, bool *by_glob)
{
	int glob = -1;

	if (by_glob)
		*by_glob = false;
	if (!config_namespace_valid(ns))
		return -1;
	for (unsigned i = 0; i < cfg->n_sections; i++) {
		const struct config_section *sec = &cfg->sections[i];

		if (!sec->glob && strcmp(sec->pattern, ns) == 0)
			return i;
		if (sec->glob && glob < 0 && glob_match(sec->pattern, ns))
			glob = i;
	}
	if (glob >= 0 && by_glob)
		*by_glob = true;
	return glob;
}

void config_section_apply(const struct nsguard_config *node, int idx, struct nsguard_config *out)
{
	const struct config_section *sec;

	if (out != node)
		*out = *node;
	out->section = -1;
	if (idx < 0 || (unsigned)idx >= node->n_sections)
		return;
	sec = &node->sections[idx];
	out->section = idx;
	out->default_mode = sec->default_mode;
	out->allowed_modes = sec->allowed_modes;
	out->max_depth = sec->max_depth;
	out->default_err = sec->default_err;
	out->max_count = sec->max_count;
	for (int k = 0; k < KEY_COUNT; k++)
		if (sec->key_line[k])
			out->key_line[k] = sec->key_line[k];
}

const char *config_section_name(const struct nsguard_config *cfg, int idx, char *buf, size_t len)
{
	if (idx < 0 || (unsigned)idx >= cfg->n_sections)
		snprintf(buf, len, "node");
	else
		snprintf(buf, len, "namespace:%s", cfg->sections[idx].pattern);
	return buf;
}

/* An error at line: returned without report (fail closed), else reported and counted. */
static int report_error(config_error_fn report, void *data, unsigned line, int err, int *errors)
{
	if (!report)
		return err;
	report(line, nsg_last_error(), data);
	(*errors)++;
	return 0;
}

/* "[namespace NAME]" (trimmed, comment gone) into sec. */
static int parse_header(char *line, const char *origin, unsigned lineno,
			const struct nsguard_config *c, struct config_section *sec)
{
	size_t n = strlen(line);
	char *name;

	if (n < 2 || line[n - 1] != ']' || strncmp(line + 1, "namespace", 9) != 0 ||
	    (line[10] != ' ' && line[10] != '\t'))
		return nsg_fail(EINVAL, "%s:%u: expected \"[namespace NAME]\"", origin, lineno);
	line[n - 1] = '\0';
	name = trim(line + 10);
	n = strlen(name);
	memset(sec, 0, sizeof(*sec));
	sec->line = lineno;
	sec->glob = strchr(name, '*') != NULL;
	if (n == 0 || n > CONFIG_NAMESPACE_MAX || strstr(name, "**") ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-*") != n ||
	    (!sec->glob && !config_namespace_valid(name)))
		return nsg_fail(EINVAL,
				"%s:%u: [namespace %.64s]: not a Kubernetes namespace (a DNS label "
				"of 1..%d bytes a-z, 0-9, '-') or a glob of one with '*'",
				origin, lineno, name, CONFIG_NAMESPACE_MAX);
	for (unsigned i = 0; i < c->n_sections; i++)
		if (strcmp(c->sections[i].pattern, name) == 0)
			return nsg_fail(EINVAL, "%s:%u: [namespace %s] is already on line %u",
					origin, lineno, name, c->sections[i].line);
	if (c->n_sections >= CONFIG_SECTIONS_MAX)
		return nsg_fail(EINVAL, "%s:%u: more than %d [namespace] sections", origin, lineno,
				CONFIG_SECTIONS_MAX);
	snprintf(sec->pattern, sizeof(sec->pattern), "%s", name);
	return 0;
}

/* "line 3" or "built-in default" for the node's key k. */
static const char *node_line(const struct nsguard_config *c, int k, char *buf, size_t len)
{
	if (c->key_line[k])
		snprintf(buf, len, "line %u", c->key_line[k]);
	else
		snprintf(buf, len, "built-in default");
	return buf;
}

/*
 * The section parsed into s (the node's values, the section's keys laid
 * over them) against the node c: never above the node's ceiling, and its
 * default-mode among its allowed-modes.  Kept in c when sound.
 */
static int finish_section(struct nsguard_config *c, const struct nsguard_config *s,
			  struct config_section *sec, const char *origin, config_error_fn report,
			  void *data, int *errors)
{
	char have[64], node[64], where[32], num[16], num2[16];
	int before = *errors, err;

	memcpy(sec->key_line, s->key_line, sizeof(sec->key_line));
	for (int k = 0; k < KEY_COUNT; k++)
		if (sec->key_line[k] == c->key_line[k])
			sec->key_line[k] = 0; /* the node's */
	if (s->allowed_modes & ~c->allowed_modes) {
		policy_modes_list(s->allowed_modes, have, sizeof(have));
		policy_modes_list(c->allowed_modes, node, sizeof(node));
		err = nsg_fail(EINVAL,
			       "%s:%u: [namespace %s] allowed-modes %s exceeds the node's "
			       "allowed-modes %s (%s)",
			       origin, sec->key_line[KEY_ALLOWED_MODES], sec->pattern, have, node,
			       node_line(c, KEY_ALLOWED_MODES, where, sizeof(where)));
		if ((err = report_error(report, data, sec->key_line[KEY_ALLOWED_MODES], err, errors)))
			return err;
	}
	if (s->max_depth > c->max_depth) {
		err = nsg_fail(EINVAL,
			       "%s:%u: [namespace %s] max-depth %u exceeds the node's max-depth %u "
			       "(%s)",
			       origin, sec->key_line[KEY_MAX_DEPTH], sec->pattern, s->max_depth,
			       c->max_depth, node_line(c, KEY_MAX_DEPTH, where, sizeof(where)));
		if ((err = report_error(report, data, sec->key_line[KEY_MAX_DEPTH], err, errors)))
			return err;
	}
	if (s->max_count > c->max_count) {
		const struct policy_field *f = &policy_fields[POLICY_MAX_COUNT];

		err = nsg_fail(EINVAL,
			       "%s:%u: [namespace %s] max-count %s exceeds the node's max-count %s "
			       "(%s)",
			       origin, sec->key_line[KEY_MAX_COUNT], sec->pattern,
			       policy_field_show(f, s->max_count, num, sizeof(num)),
			       policy_field_show(f, c->max_count, num2, sizeof(num2)),
			       node_line(c, KEY_MAX_COUNT, where, sizeof(where)));
		if ((err = report_error(report, data, sec->key_line[KEY_MAX_COUNT], err, errors)))
			return err;
	}
	if (!(s->allowed_modes & (1u << s->default_mode))) {
		unsigned at = sec->key_line[KEY_DEFAULT_MODE] ?: sec->key_line[KEY_ALLOWED_MODES];

		err = nsg_fail(EINVAL,
			       "%s:%u: [namespace %s] default-mode %s%s is not in its allowed-modes",
			       origin, at, sec->pattern, policy_mode_name(s->default_mode),
			       sec->key_line[KEY_DEFAULT_MODE] ? "" : " (the node's)");
		if ((err = report_error(report, data, at, err, errors)))
			return err;
	}
	if (*errors != before)
		return 0;
	sec->default_mode = s->default_mode;
	sec->allowed_modes = s->allowed_modes;
	sec->max_depth = s->max_depth;
	sec->default_err = s->default_err;
	sec->max_count = s->max_count;
	c->sections[c->n_sections++] = *sec;
	return 0;
}

/*
 * Without err, the first error ends the parse (what every command but check
 * wants: fail closed); with it, each error is reported and parsing goes on
 * at the next line.  Node keys come first; each "[namespace NAME]" line
 * starts a section that lasts until the next one or the end of the file.
 * Returns the number of errors, or -errno without err.
 */
static int parse_text(const char *text, size_t len, const char *origin, config_error_fn report,
		      void *data, struct nsguard_config *cfg)
{
	unsigned seen[KEY_COUNT] = { 0 }, sec_seen[KEY_COUNT] = { 0 };
	cleanup_free struct nsguard_config *c = calloc(2, sizeof(*c));
	struct nsguard_config *s = c ? c + 1 : NULL; /* the section being parsed */
	struct config_section sec;
	bool in_section = false, node_checked = false, bad;
	unsigned lineno = 0;
	size_t pos = 0;
	int err = 0, errors = 0;

	if (!c)
		return nsg_fail(ENOMEM, "%s: out of memory", origin);
	config_defaults(c);
	set_origin(c, origin);
	if (memchr(text, '\0', len)) {
		err = nsg_fail(EINVAL, "%s: contains a NUL byte", origin);
		if (!report)
			return err;
		report(0, nsg_last_error(), data);
		return 1;
	}
	for (;;) {
		bool eof = pos >= len;
		const char *nl = !eof ? memchr(text + pos, '\n', len - pos) : NULL;
		size_t n = nl ? (size_t)(nl - (text + pos)) : eof ? 0 : len - pos;
		cleanup_free char *line = !eof ? strndup(text + pos, n) : NULL;
		char *hash, *t = NULL;

		pos += n + 1;
		if (!eof && !line)
			return nsg_fail(ENOMEM, "%s: out of memory", origin);
		if (!eof) {
			lineno++;
			hash = strchr(line, '#');
			if (hash)
				*hash = '\0';
			t = trim(line);
			if (t[0] != '[') {
				err = parse_line(t, origin, lineno, in_section ? s : c,
						 in_section ? sec_seen : seen, in_section);
				if (err < 0 && (err = report_error(report, data, lineno, err, &errors)))
					return err;
				continue;
			}
		}
		/* A header or the end: the section before it is complete. */
		if (in_section) {
			err = finish_section(c, s, &sec, origin, report, data, &errors);
			if (err)
				return err;
			in_section = false;
		}
		if (!node_checked && !(c->allowed_modes & (1u << c->default_mode))) {
			/* Point at whichever of the two lines the administrator wrote. */
			unsigned at = seen[KEY_DEFAULT_MODE] ? seen[KEY_DEFAULT_MODE]
							     : seen[KEY_ALLOWED_MODES];

			err = nsg_fail(EINVAL, "%s:%u: default-mode %s is not in allowed-modes",
				       origin, at, policy_mode_name(c->default_mode));
			if ((err = report_error(report, data, at, err, &errors)))
				return err;
		}
		node_checked = true;
		if (eof)
			break;
		memset(&sec, 0, sizeof(sec));
		err = parse_header(t, origin, lineno, c, &sec);
		bad = err < 0;
		if (bad && (err = report_error(report, data, lineno, err, &errors)))
			return err;
		/* A bad header's keys are still checked, against the node's. */
		*s = *c;
		s->n_sections = 0;
		memset(sec_seen, 0, sizeof(sec_seen));
		in_section = true;
		if (bad)
			snprintf(sec.pattern, sizeof(sec.pattern), "?");
	}
	if (!errors)
		*cfg = *c;
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
