// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard hook STAGE: the OCI runtime hook (state JSON on stdin). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "cmd.h"
#include "config.h"
#include "container.h"
#include "log.h"
#include "oci.h"
#include "outcomes.h"
#include "policy.h"
#include "record.h"
#include "scope.h"
#include "userns.h"
#include "util.h"

/*
 * pidfd: the init's, from the hook that asked the agent (-1: open it here).
 * It must name the state's pid in this pid namespace.
 */
static int init_pidfd(const struct oci_state *st, int pidfd, int *out)
{
	pid_t pid = 0;
	int err;

	*out = -1;
	if (pidfd < 0) {
		pidfd = pidfd_open_pid(st->pid);
		if (pidfd < 0)
			return pidfd == -ESRCH ?
				       nsg_fail(ESRCH, "pid %d does not exist or has exited",
						(int)st->pid) :
				       nsg_fail(-pidfd, "pidfd_open %d: %s", (int)st->pid,
						strerror(-pidfd));
		*out = pidfd;
		return 0;
	}
	err = pidfd_pid(pidfd, &pid);
	if (err == 0 && pid != st->pid)
		err = -EXDEV;
	if (err)
		return nsg_fail(err == -ESRCH ? ESRCH : EINVAL,
				"the pidfd sent for container %s does not name its pid %d%s", st->id,
				(int)st->pid, err == -ESRCH ? " (it has exited)" : "");
	*out = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
	return *out < 0 ? nsg_fail(errno, "dup: %s", strerror(errno)) : 0;
}

/*
 * Every read of /proc/PID so far named the init while its pidfd still
 * names a live process (a pid is not reused before its process is reaped).
 * An init that exits meanwhile is the container's doing: never opened.
 */
static int init_alive(const struct oci_state *st, int pidfd, bool *never_open)
{
	int err = pidfd_alive(pidfd);

	*never_open = *never_open || err == -ESRCH;
	if (err == -ESRCH)
		return nsg_fail(ESRCH, "the init of container %s (pid %d) exited during the hook",
				st->id, (int)st->pid);
	if (err)
		return nsg_fail(-err, "cannot tell whether the init of container %s (pid %d) still "
				      "runs: %s",
				st->id, (int)st->pid, strerror(-err));
	return 0;
}

/*
 * Everything after policy resolution: failures here obey fail-mode, except
 * those the container's creator caused (*never_open): its cgroup layout (the
 * root cgroup, one its processes could leave, a shared one), what its mounts
 * expose, host capabilities, its id (one still guarding another live
 * cgroup), a subtree too large to walk and a lock held too long (another
 * container may be the cause).
 */
static int hook_guard(struct oci_state *st, int sent_pidfd, const char *config_path,
		      const struct nsguard_config *cfg, const char *section,
		      struct nsguard_policy *pol, bool *never_open, enum hook_reason *why)
{
	cleanup_free char *init_path = NULL, *path = NULL;
	cleanup_close int pidfd = -1, cgfd = -1;
	const struct pod_identity *picked;
	struct pod_identity labels = { 0 };
	struct container_spec spec;
	__u64 cgid = 0;
	const char *how = "";
	char desc[256];
	__u32 level = 0;
	int err = 0;

	*why = HOOK_REASON_PRIVILEGES;
	err = cmd_require_privileges();
	if (err)
		return err;
	*why = HOOK_REASON_STATE;
	if (st->pid <= 0)
		return nsg_fail(EINVAL, "the state of container %s has no pid", st->id);
	*why = HOOK_REASON_SCOPE;
	err = init_pidfd(st, sent_pidfd, &pidfd);
	if (err)
		return err;
	/*
	 * A guard it could detach is no guard: refused, never opened.  First:
	 * with those capabilities no view of the mounts below would matter.
	 */
	*why = HOOK_REASON_HOST_CAPS;
	if (!cfg->host_caps) {
		err = scope_host_caps("/proc", st);
		if (err) {
			*never_open = err == -EPERM;
			return err;
		}
	}
	*why = HOOK_REASON_SCOPE;
	err = cgroup_path_of_pid("/proc", st->pid, &init_path);
	/* The root cgroup or a path with "..": where the bundle put it. */
	if (err == -EPERM || err == -EINVAL)
		*never_open = true;
	if (err)
		return err;
	/* The whole subtree the container can reach, or a refusal. */
	err = scope_resolve("/proc", CGROUP_ROOT, st, init_path,
			    config_path ? config_path : NSGUARD_DEFAULT_CONFIG, &path, &how);
	if (err == -EPERM || err == -EINVAL)
		*never_open = true;
	if (err)
		return err;
	*why = HOOK_REASON_SHARED_CGROUP;
	if (!cfg->shared_cgroups) {
		/* A shared cgroup, or one the check cannot read: never opened either. */
		err = cgroup_check_sole(CGROUP_ROOT, path, init_path, st->pid, "/proc", &cgfd,
					&cgid);
		if (err) {
			*never_open = true;
			return err;
		}
	}
	*why = HOOK_REASON_ATTACH;
	err = userns_level_of_pid("/proc", st->pid, &level);
	if (err)
		return err;
	pol->base_level = level;
	err = init_alive(st, pidfd, never_open);
	if (err)
		return err;
	/* The pod's labels (borrowed) and the section its policy came from. */
	picked = identity_pick(st->identity, cfg->identity_source);
	if (picked)
		labels = *picked;
	labels.v[IDENT_SECTION] = (char *)section;
	spec = (struct container_spec){ .id = st->id, .pid = st->pid, .cgroup_path = path,
					.shared = cfg->shared_cgroups, .learn_dir = cfg->learn_dir,
					.identity = &labels, .have_cgroup_fd = cgfd >= 0,
					.cgroup_fd = cgfd, .cgroup_id = cgid };
	err = container_guard(&container_env_hook, &spec, pol, never_open);
	if (err)
		return err;
	/* The start time on record was the init's too. */
	err = init_alive(st, pidfd, never_open);
	if (err)
		return err;
	policy_describe(pol, desc, sizeof(desc));
	nsg_info("guarded container %s: cgroup %s (%s), section %s, %s", st->id, path, how,
		 section, desc);
	return 0;
}

/*
 * Counted whatever happens, once nsguard has set /run/nsguard up (not by a
 * hook without the privileges to write it); a failure to count only warns.
 */
static void count_outcome(enum hook_result result, enum hook_reason why)
{
	char refusal[NSG_MSG_MAX];
	int err;

	/* The hook's own message, if it failed, is still the one to print. */
	snprintf(refusal, sizeof(refusal), "%s", nsg_last_error());
	err = outcomes_add(NSGUARD_OUTCOMES_FILE, result, why);
	if (err < 0 && err != -ENOENT && err != -EACCES) {
		nsg_warn("warning: counting the hook's outcome: %s", nsg_last_error());
		nsg_clear_error();
		if (refusal[0])
			nsg_fail(EIO, "%s", refusal);
	}
}

static int hook_attach(struct cmd_ctx *ctx, struct oci_state *st, int sent_pidfd,
		       enum hook_reason *why)
{
	struct nsguard_config cfg;
	struct nsguard_policy pol = { 0 };
	struct policy_why pwhy;
	char section[CONFIG_NAMESPACE_MAX + 16];
	bool never_open = false;
	int err = 0;

	*why = HOOK_REASON_CONFIG;
	/* Runtimes run hooks in the bundle, which the container's creator writes. */
	if (ctx->config_path && ctx->config_path[0] != '/')
		return nsg_fail(EINVAL,
				"--config %s is relative: a hook runs in the container's bundle; "
				"give the config's absolute path",
				ctx->config_path);
	err = cmd_load_config(ctx, &cfg);
	if (err)
		return err;
	/*
	 * Annotation errors are never opened: otherwise a container could opt
	 * out of guarding by writing a bad annotation.
	 */
	*why = HOOK_REASON_STATE;
	err = oci_state_merge_bundle_annotations(st);
	if (err)
		return nsg_fail_context(err, "container %s", st->id);
	*why = HOOK_REASON_ANNOTATION;
	/* The pod's namespace (identity-source's key only) picks the section. */
	err = policy_resolve_pod(&cfg, st->identity, st->annotations, st->n_annotations, &pol,
				 &pwhy);
	if (err)
		return nsg_fail_context(err, "container %s", st->id);

	config_section_name(&cfg, pwhy.section.section, section, sizeof(section));
	err = hook_guard(st, sent_pidfd, ctx->config_path, &cfg, section, &pol, &never_open, why);
	if (err && cfg.fail_open && !never_open) {
		nsg_warn("warning: fail-mode open, container %s runs unguarded: %s", st->id,
			 nsg_last_error());
		count_outcome(HOOK_OPENED, *why);
		return 0;
	}
	if (err)
		return nsg_fail_context(err, "container %s", st->id);
	*why = HOOK_REASON_NONE;
	return 0;
}

static int hook_poststop(struct oci_state *st)
{
	int err = container_unguard(&container_env_live, st->id, false);

	/*
	 * Unknown id, gone cgroup, missing pin: nothing left to undo.  Another
	 * instance's guard (a re-used id) is left, with a warning.
	 */
	if (err && err != -ENOENT)
		nsg_warn("warning: poststop of container %s: %s", st->id, nsg_last_error());
	return 0;
}

/* A state that cannot be read: poststop only warns, an attach is refused. */
static int state_unread(int err, const char *stage)
{
	err = nsg_fail_context(err, "hook %s: reading the OCI state on stdin", stage);
	if (strcmp(stage, "poststop") == 0) {
		nsg_warn("warning: %s", nsg_last_error());
		return 0;
	}
	count_outcome(HOOK_REFUSED, HOOK_REASON_STATE);
	return err;
}

int hook_serve(struct cmd_ctx *ctx, const char *stage, const char *state, size_t len, int pidfd)
{
	bool attach = strcmp(stage, "poststop") != 0;
	struct oci_state st = { 0 };
	int err = 0;

	err = oci_state_parse(state, len, &st);
	if (err)
		return state_unread(err, stage);
	if (attach) {
		enum hook_reason why = HOOK_REASON_NONE;
		bool opened;

		err = hook_attach(ctx, &st, pidfd, &why);
		opened = !err && why != HOOK_REASON_NONE;
		if (!opened)
			count_outcome(err ? HOOK_REFUSED : HOOK_GUARDED, why);
	} else {
		err = hook_poststop(&st);
	}
	oci_state_free(&st);
	return err;
}

/*
 * Does the bundle path name the same directory in the agent as here?  Only
 * when it is its own real path: a relative one, /proc/self/cwd or
 * /dev/fd/N name this process's directory, and the agent's is /.  (A
 * bundle behind a symbolic link is done here too.)
 */
static bool same_bundle(const char *bundle)
{
	cleanup_free char *real = NULL;

	if (!bundle || bundle[0] != '/')
		return false;
	real = realpath(bundle, NULL);
	return real && strcmp(real, bundle) == 0;
}

/*
 * Ask the agent, when one listens: 0 and *status when it answered (its
 * lines printed), else -errno and the hook does the work itself.
 */
static int hook_ask_agent(struct cmd_ctx *ctx, const char *stage, const char *state, size_t len,
			  int *status)
{
	bool attach = strcmp(stage, "poststop") != 0;
	struct agent_request req = { .stage = agent_stage_of(stage),
				     .verbose = nsg_verbose(), .config = ctx->config_path,
				     .state = state, .state_len = len, .pidfd = -1 };
	cleanup_close int pidfd = -1, self_pidfd = -1;
	cleanup_free char *text = NULL;
	struct oci_state st = { 0 };
	size_t text_len = 0;
	int err;

	/* Refused here as it is ("" is relative); the wire has no empty path. */
	if (ctx->config_path && !ctx->config_path[0])
		return -EINVAL;
	/*
	 * No agent (most nodes): one call, before the state is parsed, its
	 * bundle resolved and a pidfd opened for nothing.  A stale socket is
	 * agent_ask's ECONNREFUSED.
	 */
	if (access(NSGUARD_AGENT_SOCKET, F_OK) < 0) {
		err = -errno;
		if (err != -ENOENT)
			nsg_info("the agent's socket: %s; doing the work here", strerror(-err));
		return err;
	}
	if (attach) {
		/* The pidfd is opened here, where the runtime's pid means the init. */
		err = oci_state_parse(state, len, &st);
		if (!err && st.pid > 0 && same_bundle(st.bundle))
			pidfd = pidfd_open_pid(st.pid);
		oci_state_free(&st);
		nsg_clear_error();
		/* What the agent could not check either: the hook says why itself. */
		if (pidfd < 0)
			return -ESRCH;
		req.pidfd = pidfd;
	}
	/* Who asks: the agent checks this names the pid that connected, around its reads of /proc. */
	self_pidfd = pidfd_open_pid(getpid());
	if (self_pidfd < 0)
		return self_pidfd;
	req.self_pidfd = self_pidfd;
	err = agent_ask(NSGUARD_AGENT_SOCKET, &req, status, &text, &text_len);
	/* Someone else's listener at the agent's path: the admin should hear of it. */
	if (err == -EPERM)
		nsg_warn("%s; doing the work here", nsg_last_error());
	else if (err == -ESTALE)
		nsg_info("%s; doing the work here", nsg_last_error());
	else if (err < 0 && err != -ENOENT && err != -ECONNREFUSED)
		nsg_info("the agent did not answer (%s); doing the work here", strerror(-err));
	if (err < 0 || *status == AGENT_NOT_SERVED)
		return err < 0 ? err : -EAGAIN;
	agent_relay(text, text_len);
	return 0;
}

int cmd_hook(struct cmd_ctx *ctx, int argc, char **argv)
{
	cleanup_free char *buf = NULL;
	const char *stage = NULL;
	size_t len = 0;
	int err = 0, status = 0;

	nsg_log_kmsg_fallback("/dev/kmsg");
	/* Refusals and warnings are on record whatever the runtime does with stderr. */
	nsg_log_syslog("/dev/log");
	/* --config PATH is the global option, after the command as before it. */
	err = cmd_options_args("hook", argc, argv, NULL, NULL, NULL, &stage, 1);
	if (err)
		return err;
	if (!stage)
		return cmd_usage("hook: STAGE missing (prestart, createRuntime or poststop)");
	if (!agent_stage_of(stage))
		return cmd_usage("hook: unknown stage '%s' (prestart, createRuntime or poststop)",
				 stage);

	err = oci_state_read_raw(0, &buf, &len);
	if (err)
		return state_unread(err, stage);
	/* The agent is an accelerator: whatever it does not answer, the hook does. */
	if (hook_ask_agent(ctx, stage, buf, len, &status) == 0)
		return status;
	return hook_serve(ctx, stage, buf, len, -1);
}
