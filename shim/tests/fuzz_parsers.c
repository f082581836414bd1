/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for every parser that sees untrusted bytes:
 * oci_state_parse, oci_state_merge_config, config_parse and policy_resolve on
 * the annotations that survive, and spec_edit_apply (nsguard runtime's edit
 * of a config.json).  An input is tried whole as each format; if
 * it contains "\n--\n" the part before is also used as the admin config and
 * the part after as the state, so the fuzzer can combine the two.  Besides
 * the sanitizers, the invariants of a resolved policy are checked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int err)
{
	/* Failures are negative and always explained. */
	if (err >= 0 || !nsg_last_error()[0])
		abort();
}

static void resolve(const struct nsguard_config *cfg, const struct oci_state *st)
{
	struct nsguard_policy pol = { 0 };
	int err;

	nsg_clear_error();
	err = policy_resolve(cfg, st->annotations, st->n_annotations, &pol);
	if (err < 0) {
		check_failure(err);
		return;
	}
	if (pol.mode < NSGUARD_MODE_DENY || pol.mode >= NSGUARD_MODE_COUNT)
		abort();
	if (pol.max_depth > cfg->max_depth || pol.max_depth > NSGUARD_MAX_DEPTH)
		abort();
	if (pol.mode == NSGUARD_MODE_DENY && pol.max_depth != 0)
		abort();
	if (!policy_errno_name(pol.err) || pol.err == 0)
		abort();
	/* A mode other than the default must have been allowed. */
	if (pol.mode != cfg->default_mode && !(cfg->allowed_modes & (1u << pol.mode)))
		abort();
}

static void restrictive(struct nsguard_config *cfg)
{
	config_defaults(cfg);
	cfg->allowed_modes = 1u << NSGUARD_MODE_DENY | 1u << NSGUARD_MODE_AUDIT;
	cfg->max_depth = 2;
	cfg->default_err = 28;
}

static void state_part(const struct nsguard_config *cfg, const char *buf, size_t len)
{
	struct nsguard_config def, strict;
	struct oci_state st;
	int err;

	nsg_clear_error();
	err = oci_state_parse(buf, len, &st);
	if (err < 0) {
		check_failure(err);
		if (st.id || st.annotations)
			abort();
		return;
	}
	if (!oci_id_valid(st.id) || !st.oci_version || st.pid < 0)
		abort();
	config_defaults(&def);
	restrictive(&strict);
	resolve(&def, &st);
	resolve(&strict, &st);
	if (cfg)
		resolve(cfg, &st);

	/* The same bytes as config.json: merging never drops state keys. */
	nsg_clear_error();
	err = oci_state_merge_config(&st, buf, len);
	if (err < 0)
		check_failure(err);
	resolve(&def, &st);
	if (cfg)
		resolve(cfg, &st);
	oci_state_free(&st);
}

static bool fuzz_is_self(const char *path, void *data)
{
	return strcmp(path, "/usr/bin/nsguard") == 0;
}

/*
 * A tenant's config.json through nsguard runtime's edit: refused with a
 * message, or edited into a document that parses (spec_edit_apply checks)
 * and that a second edit finds guarded (no hook added twice).
 */
static void spec_part(const char *buf, size_t len)
{
	static const char *const keys[] = { "nsguard.io/userns" }, *const values[] = { "audit" };
	const struct spec_edit e = { .hook_path = "/usr/bin/nsguard",
				     .is_self = fuzz_is_self,
				     .keys = keys,
				     .values = values,
				     .n = 1 };
	char *out = NULL, *again = NULL;
	unsigned what;
	int err;

	nsg_clear_error();
	err = spec_edit_apply(buf, len, &e, &out, &what);
	if (err < 0) {
		check_failure(err);
		if (out)
			abort();
		return;
	}
	if (!out)
		abort(); /* the annotation is always written */
	err = spec_edit_apply(out, strlen(out), &e, &again, &what);
	if (err < 0 || (what & (SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP)))
		abort();
	free(again);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct nsguard_config cfg;
	const char *sep;
	int err;

	nsg_clear_error();
	err = config_parse(buf, size, "fuzz.conf", &cfg);
	if (err < 0) {
		check_failure(err);
	} else if (!(cfg.allowed_modes & (1u << cfg.default_mode)) ||
		   cfg.max_depth > NSGUARD_MAX_DEPTH || !policy_errno_name(cfg.default_err)) {
		abort();
	}
	state_part(NULL, buf, size);
	spec_part(buf, size);

	sep = memmem(buf, size, "\n--\n", 4);
	if (sep) {
		size_t clen = sep - buf;

		nsg_clear_error();
		if (config_parse(buf, clen, "fuzz.conf", &cfg) == 0)
			state_part(&cfg, sep + 4, size - clen - 4);
	}
	return 0;
}
