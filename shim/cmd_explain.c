// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard explain [--annotation K=V]... [--bundle DIR] [--json]: the policy
 * a container with these annotations would get under the admin config, and
 * why, field by field.  The same path as the hook (the bundle's config.json
 * merged under the state's annotations, policy_resolve), without bpf() or
 * privileges.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "util.h"

struct explain_args {
	struct oci_state st; /* the annotations given, and the bundle */
	bool json;
};

static int explain_opt(int opt, const char *arg, void *data)
{
	struct explain_args *a = data;
	struct oci_annotation *ann;
	const char *eq;

	if (opt == 'j') {
		a->json = true;
		return 0;
	}
	if (opt == 'b') {
		a->st.bundle = strdup(arg);
		return a->st.bundle ? 0 : nsg_fail(ENOMEM, "out of memory");
	}
	eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return cmd_usage("explain: --annotation wants KEY=VALUE, got '%s'", arg);
	/* Only nsguard.io/ keys, as the state parser keeps them, and as many;
	 * the identity keys as it collects them (the namespace picks a section). */
	if (!oci_annotation_is_ours(arg)) {
		cleanup_free char *key = strndup(arg, (size_t)(eq - arg));

		return key ? identity_collect(a->st.identity, key, eq + 1)
			   : nsg_fail(ENOMEM, "out of memory");
	}
	if (a->st.n_annotations == OCI_ANNOTATIONS_MAX)
		/* The hook refuses such a state (exit 1), so explain does too. */
		return nsg_fail(EINVAL, "explain: more than %d nsguard.io/ annotations",
				OCI_ANNOTATIONS_MAX);
	ann = realloc(a->st.annotations, (a->st.n_annotations + 1) * sizeof(*ann));
	if (!ann)
		return nsg_fail(ENOMEM, "out of memory");
	a->st.annotations = ann;
	ann += a->st.n_annotations;
	ann->key = strndup(arg, (size_t)(eq - arg));
	ann->value = strdup(eq + 1);
	if (!ann->key || !ann->value) {
		free(ann->key);
		free(ann->value);
		return nsg_fail(ENOMEM, "out of memory");
	}
	a->st.n_annotations++;
	return 0;
}

/* "FILE:LINE" where the config set key, or "built-in". */
static const char *where(const struct nsguard_config *cfg, const char *key, char *buf, size_t len)
{
	unsigned line = key ? config_key_line(cfg, key) : 0;

	if (!line)
		return "built-in";
	snprintf(buf, len, "%s:%u", cfg->origin, line);
	return buf;
}

/* Why field i has its value, in words. */
static void because(const struct nsguard_config *cfg, const struct policy_why *why, size_t i,
		    char *buf, size_t len)
{
	const struct policy_field *f = &policy_fields[i];
	char at[4200], lim[64], num[16];

	switch (why->source[i]) {
	case POLICY_FROM_CALLER:
		snprintf(buf, len, "measured by the hook: the user-namespace level of the init");
		return;
	case POLICY_FROM_DENY:
		snprintf(buf, len, "mode deny allows no nesting");
		return;
	case POLICY_FROM_DEFAULT:
		snprintf(buf, len, "no annotation: %s (%s)", f->default_key,
			 where(cfg, f->default_key, at, sizeof(at)));
		return;
	case POLICY_FROM_ANNOTATION:
		if (!f->limit_key) {
			snprintf(buf, len, "annotation %s=%s", f->annotation, why->value[i]);
			return;
		}
		/* The admin's limit it was checked against: allowed-modes or a ceiling. */
		if (i == POLICY_MODE)
			policy_modes_list(cfg->allowed_modes, lim, sizeof(lim));
		else
			snprintf(lim, sizeof(lim), "%s",
				 policy_field_show(f, f->fallback(cfg), num, sizeof(num)));
		snprintf(buf, len, "annotation %s=%s, within %s %s (%s)", f->annotation,
			 why->value[i], f->limit_key, lim, where(cfg, f->limit_key, at, sizeof(at)));
		return;
	}
}

static int print_text(const struct nsguard_config *cfg, const struct nsguard_policy *pol,
		      const struct policy_why *why)
{
	char num[16], text[8400];

	printf("config: %s\n", cfg->origin);
	policy_section_explain(cfg, &why->section, text, sizeof(text));
	printf("section: %s\n", text);
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];

		because(cfg, why, i, text, sizeof(text));
		printf("%-11s %-10s %s\n", f->name,
		       why->source[i] == POLICY_FROM_CALLER
			       ? "-"
			       : policy_field_show(f, policy_field_get(pol, f), num, sizeof(num)),
		       text);
	}
	return 0;
}

static const char *const source_names[] = {
	[POLICY_FROM_CALLER] = "hook",
	[POLICY_FROM_DEFAULT] = "default",
	[POLICY_FROM_ANNOTATION] = "annotation",
	[POLICY_FROM_DENY] = "deny",
};

static int print_json(const struct nsguard_config *cfg, const struct nsguard_policy *pol,
		      const struct policy_why *why, const char *refusal)
{
	cleanup_jv struct jv *doc = jv_new_object();
	struct jv *p, *w, *o;
	char text[8400];

	char name[80];

	policy_section_explain(cfg, &why->section, text, sizeof(text));
	o = doc ? jv_add_object(doc, "section") : NULL;
	if (!doc || !jv_add_string(doc, "config", cfg->origin) ||
	    !jv_add_bool(doc, "refused", refusal != NULL) || !o ||
	    !jv_add_string(o, "name", config_section_name(cfg, cfg->section, name, sizeof(name))) ||
	    !(cfg->section >= 0 ? jv_add_number(o, "line", cfg->sections[cfg->section].line)
				: jv_add_null(o, "line")) ||
	    !json_add_string_or_null(o, "key", why->section.key) ||
	    !json_add_string_or_null(o, "namespace", why->section.value) ||
	    !jv_add_string(o, "text", text))
		return nsg_fail(ENOMEM, "out of memory");
	if (refusal)
		return jv_add_string(doc, "error", refusal) ? json_print(doc)
								       : nsg_fail(ENOMEM, "out of memory");
	p = jv_add_object(doc, "policy");
	w = jv_add_object(doc, "why");
	if (!p || !w || !json_add_policy(p, pol))
		return nsg_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];
		const char *key = why->source[i] == POLICY_FROM_ANNOTATION ? f->limit_key
				  : why->source[i] == POLICY_FROM_DEFAULT  ? f->default_key
									   : NULL;
		unsigned line = key ? config_key_line(cfg, key) : 0;

		because(cfg, why, i, text, sizeof(text));
		o = jv_add_object(w, f->json);
		if (!o || !jv_add_string(o, "from", source_names[why->source[i]]) ||
		    !json_add_string_or_null(o, "annotation",
					     why->value[i] ? f->annotation : NULL) ||
		    !json_add_string_or_null(o, "value", why->value[i]) ||
		    !json_add_string_or_null(o, "config_key", key) ||
		    !(line ? jv_add_number(o, "config_line", line)
			   : jv_add_null(o, "config_line")) ||
		    !jv_add_string(o, "text", text))
			return nsg_fail(ENOMEM, "out of memory");
	}
	/* The hook measures it; explain cannot know it. */
	jv_remove(p, "base_level");
	return json_print(doc);
}

int cmd_explain(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "annotation", .arg = "KEY=VALUE", .val = 'a', .repeat = true,
		  .help = "an annotation of the container" },
		{ .name = "bundle", .arg = "DIR", .val = 'b',
		  .help = "also the annotations of DIR/config.json, as the hook reads them" },
		{ .name = "json", .val = 'j', .help = "one JSON object" },
		{},
	};
	struct explain_args a = { 0 };
	struct nsguard_policy pol = { 0 };
	struct policy_why why;
	struct nsguard_config cfg;
	cleanup_free struct nsguard_config *eff = malloc(sizeof(*eff));
	int err;

	err = cmd_options("explain", argc, argv, opts, explain_opt, &a) ?:
	      cmd_load_config(ctx, &cfg);
	if (!err && a.st.bundle) {
		/* The hook takes a missing config.json for none; here it was asked for. */
		cleanup_free char *path = NULL;

		if (asprintf(&path, "%s/config.json", a.st.bundle) < 0)
			path = NULL;
		if (!path)
			err = nsg_fail(ENOMEM, "out of memory");
		else if (access(path, F_OK) < 0)
			err = nsg_fail(errno, "explain: %s: %s", path, strerror(errno));
		else
			err = oci_state_merge_bundle_annotations(&a.st);
	}
	if (err)
		goto out;
	if (!eff) {
		err = nsg_fail(ENOMEM, "out of memory");
		goto out;
	}
	err = policy_resolve_pod(&cfg, a.st.identity, a.st.annotations, a.st.n_annotations, &pol,
				 &why);
	/* The section's config: its limits and the lines that set them. */
	config_section_apply(&cfg, why.section.section, eff);
	if (err) {
		/* The hook's own refusal, as it would print it. */
		err = nsg_fail_context(err, "a container with these annotations is refused");
		if (a.json)
			err = print_json(eff, &pol, &why, nsg_last_error()) ?: 1;
		goto out;
	}
	err = a.json ? print_json(eff, &pol, &why, NULL) : print_text(eff, &pol, &why);
out:
	oci_state_free(&a.st);
	return err;
}
