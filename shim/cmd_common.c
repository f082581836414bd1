// SPDX-License-Identifier: GPL-2.0-or-later
/* Helpers shared by the commands: usage errors, privileges, config, numbers. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "cmd.h"
#include "config.h"
#include "log.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int cmd_usage(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cmd_usage_error = true;
	return nsg_fail(EINVAL, "%s (see nsguard --help)", buf);
}

int cmd_options(const char *cmd, int argc, char **argv, const struct option *opts,
		int (*fn)(int opt, const char *arg, void *data), void *data)
{
	static const struct option none[] = { {} };
	int opt, err = 0;

	while ((opt = getopt_long(argc, argv, "+:", opts ?: none, NULL)) != -1) {
		if (opt == ':')
			return cmd_usage("%s: option '%s' needs an argument", cmd, argv[optind - 1]);
		if (opt == '?')
			return cmd_usage("%s: unknown option '%s'", cmd, argv[optind - 1]);
		err = fn(opt, optarg, data);
		if (err)
			return err;
	}
	if (optind < argc)
		return cmd_usage("%s: unexpected argument '%s'", cmd, argv[optind]);
	return 0;
}

int cmd_set_flag(int opt, const char *arg, void *data)
{
	*(bool *)data = true;
	return 0;
}

static bool cap_effective(cap_t caps, cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;

	return cap_get_flag(caps, cap, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET;
}

int cmd_require_privileges(void)
{
	cap_t caps = cap_get_proc();
	bool admin, bpf, kernel_has_bpf;

	if (!caps)
		return nsg_fail(errno, "cannot read the process capabilities: %s", strerror(errno));
	admin = cap_effective(caps, CAP_SYS_ADMIN);
	/* cap_max_bits() is what the running kernel supports. */
	kernel_has_bpf = cap_max_bits() > CAP_BPF;
	bpf = !kernel_has_bpf || cap_effective(caps, CAP_BPF);
	cap_free(caps);
	if (admin && bpf)
		return 0;
	return nsg_fail(EPERM, "permission denied: nsguard needs CAP_SYS_ADMIN%s (missing: %s%s%s); "
			       "run it as root",
			kernel_has_bpf ? " and CAP_BPF" : "", admin ? "" : "CAP_SYS_ADMIN",
			!admin && !bpf ? ", " : "", bpf ? "" : "CAP_BPF");
}

int cmd_load_config(struct cmd_ctx *ctx, struct nsguard_config *cfg)
{
	config_defaults(cfg);
	if (ctx->config_path)
		return config_load(ctx->config_path, true, cfg);
	return config_load(NSGUARD_DEFAULT_CONFIG, false, cfg);
}

int parse_u64(const char *s, unsigned long long *out)
{
	char *end = NULL;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long long v = 0;

	if (parse_u64(s, &v) < 0 || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}
