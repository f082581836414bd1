// SPDX-License-Identifier: GPL-2.0-or-later
/* cJSON helpers shared by the records and the --json outputs. */
#include <inttypes.h>
#include <stdio.h>

#include <errno.h>
#include <stdlib.h>

#include "json.h"
#include "log.h"
#include "policy.h"

cJSON *json_add_u64(cJSON *obj, const char *key, __u64 v)
{
	char buf[24]; /* 20 digits for 2^64 - 1 */

	snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)v);
	return cJSON_AddStringToObject(obj, key, buf);
}

cJSON *json_add_string_or_null(cJSON *obj, const char *key, const char *v)
{
	return v ? cJSON_AddStringToObject(obj, key, v) : cJSON_AddNullToObject(obj, key);
}

bool json_add_policy(cJSON *obj, const struct nsguard_policy *pol)
{
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];
		__u32 v = policy_field_get(pol, f);
		const char *name = f->show ? f->show(v) : NULL;

		if (!(name ? cJSON_AddStringToObject(obj, f->json, name)
			   : cJSON_AddNumberToObject(obj, f->json, v)))
			return false;
	}
	return true;
}

int json_print(const cJSON *doc)
{
	char *text = cJSON_PrintUnformatted(doc);

	if (!text)
		return nsg_fail(ENOMEM, "out of memory");
	printf("%s\n", text);
	free(text);
	return 0;
}
