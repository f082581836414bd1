/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "policy.h"
#include "test.h"
#include "util.h"

#define M(x) (1u << NSGUARD_MODE_##x)
#define ALL (M(DENY) | M(AUDIT) | M(ALLOW))

static void t_defaults(void)
{
	struct nsguard_config c;

	config_defaults(&c);
	ASSERT_EQ(NSGUARD_MODE_DENY, c.default_mode);
	ASSERT_EQ(ALL, c.allowed_modes);
	ASSERT_EQ(NSGUARD_MAX_DEPTH, c.max_depth);
	ASSERT_EQ(EPERM, c.default_err);
	ASSERT_TRUE(!c.fail_open);
	ASSERT_TRUE(!c.shared_cgroups);
	ASSERT_EQ(IDENT_SRC_CONTAINERD, c.identity_source);
	ASSERT_STREQ("built-in defaults", c.origin);
}

static void t_shared_cgroups(void)
{
	static const char allow[] = "shared-cgroups = allow", refuse[] = "shared-cgroups = refuse";
	struct nsguard_config c;

	ASSERT_OK(config_parse(allow, strlen(allow), "test.conf", &c));
	ASSERT_TRUE(c.shared_cgroups);
	ASSERT_OK(config_parse(refuse, strlen(refuse), "test.conf", &c));
	ASSERT_TRUE(!c.shared_cgroups);
}

static void t_host_caps(void)
{
	static const char allow[] = "host-capabilities = allow",
			  refuse[] = "host-capabilities = refuse", bad[] = "host-capabilities = yes";
	struct nsguard_config c;

	config_defaults(&c);
	ASSERT_TRUE(!c.host_caps);
	ASSERT_OK(config_parse(allow, strlen(allow), "test.conf", &c));
	ASSERT_TRUE(c.host_caps);
	ASSERT_OK(config_parse(refuse, strlen(refuse), "test.conf", &c));
	ASSERT_TRUE(!c.host_caps);
	ASSERT_ERR(-EINVAL, config_parse(bad, strlen(bad), "test.conf", &c));
	ASSERT_MSG("test.conf:1: host-capabilities \"yes\" is not refuse or allow");
}

static void t_identity_source(void)
{
	static const char *const text[] = { "identity-source = cri-o", "identity-source = none",
					    "identity-source = containerd" };
	static const enum identity_source want[] = { IDENT_SRC_CRIO, IDENT_SRC_NONE,
						     IDENT_SRC_CONTAINERD };
	struct nsguard_config c;

	for (size_t i = 0; i < ARRAY_SIZE(text); i++) {
		ASSERT_OK(config_parse(text[i], strlen(text[i]), "test.conf", &c));
		ASSERT_EQ(want[i], c.identity_source);
		ASSERT_EQ(1, config_key_line(&c, "identity-source"));
	}
}

struct good_row {
	const char *name, *text;
	__u32 mode, allowed, depth, err;
	bool fail_open;
};

static const struct good_row good[] = {
	{ "empty", "", NSGUARD_MODE_DENY, ALL, 32, EPERM, false },
	{ "comments-and-blanks", "# a comment\n\n   \t\n  # indented\n", NSGUARD_MODE_DENY, ALL, 32,
	  EPERM, false },
	{ "design-example",
	  "# comments\n"
	  "default-mode = deny            # deny | audit | allow\n"
	  "allowed-modes = deny, audit, allow\n"
	  "max-depth = 32                 # 0..32\n"
	  "errno = EPERM                  # EPERM | ENOSPC | EACCES\n"
	  "fail-mode = closed             # closed | open\n",
	  NSGUARD_MODE_DENY, ALL, 32, EPERM, false },
	{ "crlf",
	  "default-mode = audit\r\nallowed-modes = audit,allow\r\nmax-depth = 3\r\nerrno = ENOSPC\r\n"
	  "fail-mode = open\r\n",
	  NSGUARD_MODE_AUDIT, M(AUDIT) | M(ALLOW), 3, ENOSPC, true },
	{ "no-final-newline", "errno=EACCES", NSGUARD_MODE_DENY, ALL, 32, EACCES, false },
	{ "no-spaces", "default-mode=allow\nmax-depth=0", NSGUARD_MODE_ALLOW, ALL, 0, EPERM, false },
	{ "tabs", "\tdefault-mode\t=\tallow\t\n", NSGUARD_MODE_ALLOW, ALL, 32, EPERM, false },
	{ "allowed-deny-only", "allowed-modes = deny", NSGUARD_MODE_DENY, M(DENY), 32, EPERM, false },
	{ "allowed-space-list", "allowed-modes = deny audit", NSGUARD_MODE_DENY, M(DENY) | M(AUDIT), 32,
	  EPERM, false },
	{ "allowed-mixed-separators", "allowed-modes = allow ,deny,, audit", NSGUARD_MODE_DENY, ALL,
	  32, EPERM, false },
	{ "allowed-repeated", "allowed-modes = deny, deny", NSGUARD_MODE_DENY, M(DENY), 32, EPERM,
	  false },
	{ "default-audit", "default-mode = audit", NSGUARD_MODE_AUDIT, ALL, 32, EPERM, false },
	{ "max-depth-0", "max-depth = 0", NSGUARD_MODE_DENY, ALL, 0, EPERM, false },
	{ "max-depth-32", "max-depth = 32", NSGUARD_MODE_DENY, ALL, 32, EPERM, false },
	{ "errno-eperm", "errno = EPERM", NSGUARD_MODE_DENY, ALL, 32, EPERM, false },
	{ "errno-enospc", "errno = ENOSPC", NSGUARD_MODE_DENY, ALL, 32, ENOSPC, false },
	{ "errno-eacces", "errno = EACCES", NSGUARD_MODE_DENY, ALL, 32, EACCES, false },
	{ "fail-mode-closed", "fail-mode = closed", NSGUARD_MODE_DENY, ALL, 32, EPERM, false },
	{ "fail-mode-open", "fail-mode = open", NSGUARD_MODE_DENY, ALL, 32, EPERM, true },
	{ "default-mode-after-allowed", "allowed-modes = allow\ndefault-mode = allow",
	  NSGUARD_MODE_ALLOW, M(ALLOW), 32, EPERM, false },
};

/* Count limit and learn mode: off unless the admin turns them on. */
static void t_count_and_learn(void)
{
	static const char on[] = "max-count = 6\nallowed-modes = deny, learn\n"
				 "learn-dir = /srv/nsguard/learned\n";
	static const char unlimited[] = "max-count = unlimited";
	struct nsguard_config c;

	config_defaults(&c);
	ASSERT_EQ(NSGUARD_COUNT_UNLIMITED, c.max_count);
	ASSERT_TRUE(!(c.allowed_modes & M(LEARN)));
	ASSERT_STREQ(NSGUARD_LEARN_DIR, c.learn_dir);
	ASSERT_OK(config_parse(on, strlen(on), "test.conf", &c));
	ASSERT_EQ(6, c.max_count);
	ASSERT_EQ(M(DENY) | M(LEARN), c.allowed_modes);
	ASSERT_STREQ("/srv/nsguard/learned", c.learn_dir);
	ASSERT_OK(config_parse(unlimited, strlen(unlimited), "test.conf", &c));
	ASSERT_EQ(NSGUARD_COUNT_UNLIMITED, c.max_count);
	/* nsguard runtime's real runtime: none by default (runc from PATH). */
	ASSERT_STREQ("", c.runtime);
	ASSERT_OK(config_parse("runtime = /usr/bin/crun", 23, "test.conf", &c));
	ASSERT_STREQ("/usr/bin/crun", c.runtime);
}

static void check_good(const struct good_row *r)
{
	struct nsguard_config c;

	ASSERT_OK(config_parse(r->text, strlen(r->text), "test.conf", &c));
	ASSERT_EQ(r->mode, c.default_mode);
	ASSERT_EQ(r->allowed, c.allowed_modes);
	ASSERT_EQ(r->depth, c.max_depth);
	ASSERT_EQ(r->err, c.default_err);
	ASSERT_EQ(r->fail_open, c.fail_open);
	ASSERT_STREQ("test.conf", c.origin);
}

struct bad_row {
	const char *name, *text, *msg;
};

static const struct bad_row bad[] = {
	{ "unknown-key", "# x\ndefault_mode = deny\n", "test.conf:2: unknown key \"default_mode\"" },
	{ "no-equals", "default-mode deny", "test.conf:1: expected \"key = value\"" },
	{ "empty-key", "= deny", "test.conf:1: unknown key \"\"" },
	{ "empty-value", "errno =", "test.conf:1: errno has no value" },
	{ "empty-value-comment", "errno = # EPERM", "test.conf:1: errno has no value" },
	{ "duplicate", "errno = EPERM\n\nerrno = EPERM", "test.conf:3: errno is already set on line 1" },
	{ "mode-none", "default-mode = none", "test.conf:1: default-mode \"none\"" },
	{ "mode-case", "default-mode = Deny", "default-mode \"Deny\" is not" },
	{ "mode-two-words", "default-mode = deny audit", "default-mode \"deny audit\"" },
	{ "allowed-empty-list", "allowed-modes = ,", "test.conf:1: allowed-modes must list" },
	{ "allowed-none", "allowed-modes = none", "allowed-modes must list" },
	{ "allowed-bogus", "allowed-modes = deny, bogus", "allowed-modes must list" },
	{ "depth-33", "max-depth = 33", "test.conf:1: max-depth \"33\" is not a number in 0..32" },
	{ "depth-negative", "max-depth = -1", "max-depth \"-1\"" },
	{ "depth-plus", "max-depth = +1", "max-depth \"+1\"" },
	{ "depth-hex", "max-depth = 0x1", "max-depth \"0x1\"" },
	{ "depth-junk", "max-depth = 1x", "max-depth \"1x\"" },
	{ "depth-huge", "max-depth = 99999999999999999999", "max-depth" },
	{ "depth-inner-space", "max-depth = 1 2", "max-depth \"1 2\"" },
	{ "errno-lower", "errno = eperm", "test.conf:1: errno \"eperm\" is not EPERM, ENOSPC or EACCES" },
	{ "errno-other", "errno = EINTR", "errno \"EINTR\"" },
	{ "errno-number", "errno = 1", "errno \"1\"" },
	{ "fail-mode-bogus", "fail-mode = maybe", "test.conf:1: fail-mode \"maybe\" is not closed or open" },
	{ "shared-cgroups-bogus", "shared-cgroups = yes",
	  "test.conf:1: shared-cgroups \"yes\" is not refuse or allow" },
	{ "unknown-key-lists-known", "sharedcgroups = allow", "(known: default-mode, allowed-modes, "
	  "max-depth, errno, fail-mode, shared-cgroups, max-count, learn-dir, runtime, "
	  "host-capabilities, identity-source)" },
	{ "identity-source-bogus", "identity-source = auto",
	  "test.conf:1: identity-source \"auto\" is not containerd, cri-o or none" },
	{ "identity-source-case", "identity-source = CRI-O", "identity-source \"CRI-O\"" },
	{ "identity-source-crio", "identity-source = crio", "identity-source \"crio\"" },
	{ "identity-source-twice", "identity-source = cri-o\nidentity-source = containerd",
	  "test.conf:2: identity-source is already set on line 1" },
	{ "max-count-over", "max-count = 1000001",
	  "test.conf:1: max-count \"1000001\" is not a number in 0..1000000 or unlimited" },
	{ "max-count-negative", "max-count = -1", "max-count \"-1\"" },
	{ "max-count-word", "max-count = many", "max-count \"many\"" },
	{ "learn-dir-relative", "learn-dir = learn", "test.conf:1: learn-dir \"learn\" is not an absolute path" },
	{ "runtime-relative", "runtime = crun", "test.conf:1: runtime \"crun\" is not an absolute path" },
	{ "default-learn-not-allowed", "default-mode = learn",
	  "test.conf:1: default-mode learn is not in allowed-modes" },
	{ "default-not-allowed", "default-mode = allow\nallowed-modes = deny, audit",
	  "test.conf:1: default-mode allow is not in allowed-modes" },
	{ "builtin-default-not-allowed", "\nallowed-modes = audit",
	  "test.conf:2: default-mode deny is not in allowed-modes" },
	{ "error-after-crlf", "errno = EPERM\r\nbogus = 1\r\n", "test.conf:2: unknown key" },
	/* [namespace] sections (#42) */
	{ "section-header", "[ci-builders]", "test.conf:1: expected \"[namespace NAME]\"" },
	{ "section-header-unclosed", "[namespace ci", "test.conf:1: expected \"[namespace NAME]\"" },
	{ "section-empty-name", "[namespace ]", "test.conf:1: [namespace ]: not a Kubernetes namespace" },
	{ "section-upper", "[namespace CI]", "test.conf:1: [namespace CI]: not a Kubernetes namespace" },
	{ "section-dot", "[namespace a.b]", "test.conf:1: [namespace a.b]: not a Kubernetes" },
	{ "section-leading-dash", "[namespace -a]", "test.conf:1: [namespace -a]: not" },
	{ "section-question", "[namespace team-?]", "test.conf:1: [namespace team-?]: not" },
	{ "section-double-star", "[namespace team-**]", "test.conf:1: [namespace team-**]: not" },
	{ "section-64", "[namespace aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]",
	  "test.conf:1: [namespace aaaa" },
	{ "section-twice", "[namespace a]\n[namespace b]\n[namespace a]",
	  "test.conf:3: [namespace a] is already on line 1" },
	{ "section-node-key", "[namespace a]\nfail-mode = closed",
	  "test.conf:2: fail-mode is node-wide, not a [namespace] key" },
	{ "section-identity-source", "[namespace a]\nidentity-source = cri-o",
	  "test.conf:2: identity-source is node-wide" },
	{ "section-key-twice", "[namespace a]\nmax-depth = 1\nmax-depth = 2",
	  "test.conf:3: max-depth is already set on line 2" },
	{ "section-modes-above-node", "allowed-modes = deny, audit\n[namespace a]\nallowed-modes = allow",
	  "test.conf:3: [namespace a] allowed-modes allow exceeds the node's allowed-modes deny, audit (line 1)" },
	{ "section-learn-above-builtin", "[namespace a]\nallowed-modes = deny, learn",
	  "test.conf:2: [namespace a] allowed-modes deny, learn exceeds the node's allowed-modes deny, audit, allow (built-in default)" },
	{ "section-depth-above-node", "max-depth = 2\n[namespace a]\nmax-depth = 3",
	  "test.conf:3: [namespace a] max-depth 3 exceeds the node's max-depth 2 (line 1)" },
	{ "section-count-above-node", "max-count = 5\n[namespace a]\nmax-count = unlimited",
	  "test.conf:3: [namespace a] max-count unlimited exceeds the node's max-count 5 (line 1)" },
	{ "section-default-outside", "[namespace a]\nallowed-modes = audit",
	  "test.conf:2: [namespace a] default-mode deny (the node's) is not in its allowed-modes" },
	{ "section-default-own-outside", "[namespace a]\nallowed-modes = deny\ndefault-mode = allow",
	  "test.conf:3: [namespace a] default-mode allow is not in its allowed-modes" },
	{ "section-bad-value", "[namespace a]\nmax-depth = 99", "test.conf:2: max-depth \"99\"" },
	{ "node-default-before-section", "default-mode = allow\nallowed-modes = deny\n[namespace a]",
	  "test.conf:1: default-mode allow is not in allowed-modes" },
};

static void check_bad(const struct bad_row *r)
{
	struct nsguard_config c;

	config_defaults(&c);
	c.max_depth = 7; /* must stay untouched on error */
	ASSERT_ERR(-EINVAL, config_parse(r->text, strlen(r->text), "test.conf", &c));
	ASSERT_MSG(r->msg);
	ASSERT_EQ(7, c.max_depth);
}

static void t_nul_byte(void)
{
	static const char text[] = "errno = EPERM\0\nmax-depth = 1";
	struct nsguard_config c;

	ASSERT_ERR(-EINVAL, config_parse(text, sizeof(text) - 1, "test.conf", &c));
	ASSERT_MSG("NUL");
}

static void t_length_bounds(void)
{
	/* Only len bytes are read: the rest of the buffer is not consulted. */
	static const char text[] = "max-depth = 3garbage";
	struct nsguard_config c;

	ASSERT_OK(config_parse(text, 13, "test.conf", &c));
	ASSERT_EQ(3, c.max_depth);
}

static void t_load(void)
{
	char dir[] = "/tmp/nsguard-test-conf.XXXXXX", path[128], missing[128];
	struct nsguard_config c;
	FILE *f;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/nsguard.conf", dir);
	snprintf(missing, sizeof(missing), "%s/missing.conf", dir);

	ASSERT_OK(config_load(missing, false, &c));
	ASSERT_EQ(NSGUARD_MODE_DENY, c.default_mode);
	ASSERT_ERR(-ENOENT, config_load(missing, true, &c));
	ASSERT_MSG(missing);

	f = fopen(path, "we");
	ASSERT_TRUE(f != NULL);
	fputs("default-mode = audit\nmax-depth = 2\n", f);
	fclose(f);
	ASSERT_OK(config_load(path, true, &c));
	ASSERT_EQ(NSGUARD_MODE_AUDIT, c.default_mode);
	ASSERT_EQ(2, c.max_depth);
	ASSERT_STREQ(path, c.origin);

	f = fopen(path, "we");
	ASSERT_TRUE(f != NULL);
	fputs("max-depth = 2\nmax-depth = 3\n", f);
	fclose(f);
	ASSERT_ERR(-EINVAL, config_load(path, false, &c));
	ASSERT_MSG(":2: max-depth is already set");
	ASSERT_MSG(path);
	unlink(path);

	/* A directory is not a config file, explicit or not. */
	ASSERT_TRUE(mkdir(path, 0700) == 0);
	ASSERT_TRUE(config_load(path, false, &c) < 0);
	ASSERT_MSG(path);
	rmdir(path);
	rmdir(dir);
}

/* nsguard check --config: every error, each with its line, in order. */
struct errs {
	unsigned line[8];
	char msg[8][256];
	int n;
};

static void collect(unsigned line, const char *msg, void *data)
{
	struct errs *e = data;

	if (e->n < 8) {
		e->line[e->n] = line;
		snprintf(e->msg[e->n], sizeof(e->msg[0]), "%s", msg);
	}
	e->n++;
}

static void t_all_errors(void)
{
	static const char text[] = "# three bad lines and a conflict\n"
				   "default-mode = allow\n"
				   "allowed-modes = deny audit\n"
				   "max-depth = 40\n"
				   "bogus = 1\n"
				   "errno = EPERM\n"
				   "errno = ENOSPC\n";
	struct nsguard_config c, before;
	struct errs e = { 0 };

	config_defaults(&c);
	c.max_depth = 7;
	before = c;
	ASSERT_EQ(4, config_parse_all(text, strlen(text), "t.conf", collect, &e, &c));
	ASSERT_EQ(4, e.n);
	ASSERT_EQ(4, e.line[0]);
	ASSERT_SUBSTR("t.conf:4: max-depth \"40\"", e.msg[0]);
	ASSERT_EQ(5, e.line[1]);
	ASSERT_SUBSTR("t.conf:5: unknown key \"bogus\"", e.msg[1]);
	ASSERT_EQ(7, e.line[2]);
	ASSERT_SUBSTR("t.conf:7: errno is already set on line 6", e.msg[2]);
	ASSERT_EQ(2, e.line[3]);
	ASSERT_SUBSTR("t.conf:2: default-mode allow is not in allowed-modes", e.msg[3]);
	/* A config with errors is never handed out. */
	ASSERT_EQ(before.max_depth, c.max_depth);

	/* Without the report, the first error ends it, as the hook needs. */
	ASSERT_ERR(-EINVAL, config_parse(text, strlen(text), "t.conf", &c));
	ASSERT_MSG("t.conf:4: max-depth");

	/* A good file: no error, the values and the line of each key. */
	e.n = 0;
	ASSERT_EQ(0, config_parse_all("\nmax-depth = 3\n", 15, "g.conf", collect, &e, &c));
	ASSERT_EQ(0, e.n);
	ASSERT_EQ(3, c.max_depth);
	ASSERT_EQ(2, config_key_line(&c, "max-depth"));
	ASSERT_EQ(0, config_key_line(&c, "errno"));
}

static void t_check_file(void)
{
	struct nsguard_config c;
	struct errs e = { 0 };

	ASSERT_TRUE(config_check("/nonexistent/nsguard.conf", collect, &e, &c) < 0);
	ASSERT_EQ(1, e.n);
	ASSERT_EQ(0, e.line[0]);
	ASSERT_SUBSTR("/nonexistent/nsguard.conf", e.msg[0]);
}

static void t_sections(void)
{
	static const char text[] = "max-depth = 4\n"
				   "allowed-modes = deny, audit, allow\n"
				   "[namespace ci-builders]   # exact\n"
				   "default-mode = allow\n"
				   "max-depth = 2\n"
				   "\n"
				   "[namespace ci-*]\n"
				   "default-mode = audit\n"
				   "errno = ENOSPC\n"
				   "[namespace *-builders]\n"
				   "allowed-modes = deny\n"
				   "[namespace staging]\n";
	struct nsguard_config c, eff;
	bool glob = true;
	char name[80];

	ASSERT_OK(config_parse(text, strlen(text), "t.conf", &c));
	ASSERT_EQ(4, c.n_sections);
	ASSERT_STREQ("ci-builders", c.sections[0].pattern);
	ASSERT_TRUE(!c.sections[0].glob);
	ASSERT_EQ(3, c.sections[0].line);
	ASSERT_TRUE(c.sections[1].glob);
	/* The node keeps its own values. */
	ASSERT_EQ(NSGUARD_MODE_DENY, c.default_mode);
	ASSERT_EQ(4, c.max_depth);
	ASSERT_EQ(-1, c.section);

	/* Exact beats glob, wherever it stands in the file. */
	ASSERT_EQ(0, config_section_match(&c, "ci-builders", &glob));
	ASSERT_TRUE(!glob);
	/* Among globs, the first in the file: ci-* before *-builders. */
	ASSERT_EQ(1, config_section_match(&c, "ci-x-builders", &glob));
	ASSERT_TRUE(glob);
	ASSERT_EQ(2, config_section_match(&c, "web-builders", &glob));
	ASSERT_EQ(1, config_section_match(&c, "ci-", NULL) < 0 ? 1 : 0); /* not a DNS label */
	ASSERT_EQ(1, config_section_match(&c, "ci-1", NULL));
	ASSERT_EQ(3, config_section_match(&c, "staging", NULL));
	ASSERT_EQ(-1, config_section_match(&c, "stagin", NULL));
	ASSERT_EQ(-1, config_section_match(&c, "default", &glob));
	ASSERT_TRUE(!glob);
	/* Names nsguard does not trust name no section, not even a glob's. */
	ASSERT_EQ(-1, config_section_match(&c, "ci-*", NULL));
	ASSERT_EQ(-1, config_section_match(&c, "ci-?", NULL));
	ASSERT_EQ(-1, config_section_match(&c, "CI-builders", NULL));
	ASSERT_EQ(-1, config_section_match(&c, "", NULL));
	/* 63 bytes match ci-*; 64 bytes are no Kubernetes namespace. */
	memset(name, 'a', 64);
	memcpy(name, "ci-", 3);
	name[64] = '\0';
	ASSERT_EQ(-1, config_section_match(&c, name, NULL));
	name[63] = '\0';
	ASSERT_EQ(1, config_section_match(&c, name, NULL));

	/* A section: its keys over the node's, their lines for explain. */
	config_section_apply(&c, 0, &eff);
	ASSERT_EQ(0, eff.section);
	ASSERT_EQ(NSGUARD_MODE_ALLOW, eff.default_mode);
	ASSERT_EQ(2, eff.max_depth);
	ASSERT_EQ(5, config_key_line(&eff, "max-depth"));
	ASSERT_EQ(2, config_key_line(&eff, "allowed-modes"));
	config_section_apply(&c, 1, &eff);
	ASSERT_EQ(NSGUARD_MODE_AUDIT, eff.default_mode);
	ASSERT_EQ(ENOSPC, eff.default_err);
	ASSERT_EQ(4, eff.max_depth);
	ASSERT_EQ(1, config_key_line(&eff, "max-depth"));
	config_section_apply(&c, 2, &eff);
	ASSERT_EQ(M(DENY), eff.allowed_modes);
	config_section_apply(&c, -1, &eff);
	ASSERT_EQ(NSGUARD_MODE_DENY, eff.default_mode);
	ASSERT_STREQ("node", config_section_name(&c, -1, name, sizeof(name)));
	ASSERT_STREQ("namespace:ci-*", config_section_name(&c, 1, name, sizeof(name)));

	/* A section under a tighter node may equal it. */
	{
		static const char t2[] = "max-count = 3\n[namespace a]\nmax-count = 3\n";

		ASSERT_OK(config_parse(t2, strlen(t2), "t.conf", &c));
	}
	ASSERT_EQ(3, c.sections[0].max_count);
}

static void t_section_errors(void)
{
	static const char text[] = "max-depth = 2\n"
				   "[namespace a]\n"
				   "max-depth = 3\n"
				   "runtime = /bin/true\n"
				   "[namespace A]\n"
				   "max-depth = 9\n";
	struct nsguard_config c;
	struct errs e = { 0 };

	ASSERT_EQ(4, config_parse_all(text, strlen(text), "t.conf", collect, &e, &c));
	ASSERT_EQ(4, e.line[0]);
	ASSERT_SUBSTR("runtime is node-wide", e.msg[0]);
	ASSERT_EQ(3, e.line[1]);
	ASSERT_SUBSTR("t.conf:3: [namespace a] max-depth 3 exceeds", e.msg[1]);
	ASSERT_EQ(5, e.line[2]);
	ASSERT_SUBSTR("[namespace A]: not a Kubernetes namespace", e.msg[2]);
	ASSERT_EQ(6, e.line[3]);
	ASSERT_SUBSTR("max-depth 9 exceeds", e.msg[3]);
}

void suite_config(void)
{
	char name[128];
	size_t i;

	TEST_CASE("config", "defaults", t_defaults);
	TEST_CASE("config", "shared-cgroups", t_shared_cgroups);
	TEST_CASE("config", "host-capabilities", t_host_caps);
	TEST_CASE("config", "identity-source", t_identity_source);
	TEST_CASE("config", "count-and-learn", t_count_and_learn);
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		snprintf(name, sizeof(name), "parse-valid-%s", good[i].name);
		TEST_CASE("config", name, check_good, &good[i]);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(name, sizeof(name), "parse-reject-%s", bad[i].name);
		TEST_CASE("config", name, check_bad, &bad[i]);
	}
	TEST_CASE("config", "parse-reject-nul-byte", t_nul_byte);
	TEST_CASE("config", "parse-respects-length", t_length_bounds);
	TEST_CASE("config", "load", t_load);
	TEST_CASE("config", "check-every-error", t_all_errors);
	TEST_CASE("config", "check-missing-file", t_check_file);
	TEST_CASE("config", "sections", t_sections);
	TEST_CASE("config", "section-errors", t_section_errors);
}
