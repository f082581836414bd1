// SPDX-License-Identifier: GPL-2.0-or-later
/* cJSON helpers shared by the records and the --json outputs. */
#include <inttypes.h>
#include <stdio.h>

#include "json.h"

cJSON *json_add_u64(cJSON *obj, const char *key, __u64 v)
{
	char buf[24]; /* 20 digits for 2^64 - 1 */

	snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)v);
	return cJSON_AddStringToObject(obj, key, buf);
}
