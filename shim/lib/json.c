// SPDX-License-Identifier: GPL-2.0-or-later
/* JSON helpers shared by the records and the --json outputs. */
#include <inttypes.h>
#include <stdio.h>

#include <errno.h>
#include <stdlib.h>

#include "json.h"
#include "log.h"
#include "policy.h"

struct jv *json_add_u64(struct jv *obj, const char *key, __u64 v)
{
	char buf[24]; /* 20 digits for 2^64 - 1 */

	snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)v);
	return jv_add_string(obj, key, buf);
}

struct jv *json_add_string_or_null(struct jv *obj, const char *key, const char *v)
{
	return v ? jv_add_string(obj, key, v) : jv_add_null(obj, key);
}

bool json_add_policy(struct jv *obj, const struct nsguard_policy *pol)
{
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];
		__u32 v = policy_field_get(pol, f);
		const char *name = f->show ? f->show(v) : NULL;

		if (!(name ? jv_add_string(obj, f->json, name)
			   : jv_add_number(obj, f->json, v)))
			return false;
	}
	return true;
}

int json_print(const struct jv *doc)
{
	char *text = jv_format(doc);

	if (!text)
		return nsg_fail(ENOMEM, "out of memory");
	printf("%s\n", text);
	free(text);
	return 0;
}
