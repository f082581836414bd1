// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The Prometheus text exposition format (metrics.h).  Metric names start
 * with nsguard_, counters end in _total; labels of a container: id, pod,
 * namespace, container (empty when unknown), then mode and action.
 */
#include <errno.h>
#include <stdio.h>

#include "metrics.h"

void metrics_label_value(FILE *out, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\')
			fputs("\\\\", out);
		else if (*v == '"')
			fputs("\\\"", out);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{id="..",pod="..",namespace="..",container="..",image=".." (no closing brace) */
static void container_labels(FILE *out, const char *name, const struct metrics_container *c)
{
	fprintf(out, "%s{id=\"", name);
	metrics_label_value(out, c->id);
	for (int f = 0; f < IDENT_COUNT; f++) {
		fprintf(out, "\",%s=\"", identity_name(f));
		metrics_label_value(out, c->identity ? c->identity->v[f] : NULL);
	}
	fputc('"', out);
}

int metrics_write(FILE *out, const struct metrics *m)
{
	size_t guarded = 0, detached = 0, i;

	for (i = 0; i < m->n; i++) {
		guarded += m->c[i].attached;
		detached += m->c[i].detached;
	}
	family(out, "nsguard_build_info", "gauge",
	       "The nsguard build this scrape comes from: version, commit, pin ABI.");
	fprintf(out, "nsguard_build_info{version=\"");
	metrics_label_value(out, m->version);
	fprintf(out, "\",commit=\"");
	metrics_label_value(out, m->commit);
	fprintf(out, "\",abi=\"");
	metrics_label_value(out, m->abi);
	fprintf(out, "\"} 1\n");
	family(out, "nsguard_pins_other_build", "gauge",
	       "Whether the pinned program is another nsguard build's (the next container "
	       "start, or nsguard upgrade, moves it to this build's).");
	fprintf(out, "nsguard_pins_other_build %d\n", m->other_build ? 1 : 0);
	family(out, "nsguard_hook_outcomes_total", "counter",
	       "createRuntime hooks by result (guarded, refused, opened by fail-mode open) and "
	       "the step that refused or failed, since boot.");
	for (int r = 0; r < HOOK_RESULT_COUNT; r++)
		for (int w = 0; w < HOOK_REASON_COUNT; w++) {
			/* guarded has no reason; refused and opened always one. */
			if ((r == HOOK_GUARDED) != (w == HOOK_REASON_NONE))
				continue;
			fprintf(out, "nsguard_hook_outcomes_total{result=\"%s\",reason=\"%s\"} %llu\n",
				hook_result_name(r), hook_reason_name(w),
				m->outcomes ? m->outcomes[r][w] : 0ULL);
		}
	family(out, "nsguard_program_loaded", "gauge",
	       "Whether the nsguard BPF program is loaded (pinned).");
	fprintf(out, "nsguard_program_loaded %d\n", m->loaded ? 1 : 0);
	family(out, "nsguard_guarded_containers", "gauge",
	       "Containers with a record whose links are attached to their cgroup.");
	fprintf(out, "nsguard_guarded_containers %zu\n", guarded);
	family(out, "nsguard_detached_containers", "gauge",
	       "Containers with a record whose pinned link was detached (not by nsguard): not "
	       "guarded until the next hook, nsguard attach or gc attaches it anew.");
	fprintf(out, "nsguard_detached_containers %zu\n", detached);
	family(out, "nsguard_decisions_total", "counter",
	       "User namespace creations the program decided on, all guarded cgroups.");
	fprintf(out, "nsguard_decisions_total %llu\n", (unsigned long long)m->stats.decisions);
	family(out, "nsguard_events_dropped_total", "counter",
	       "Events lost to the per-container bound or a full ring buffer, all containers.");
	fprintf(out, "nsguard_events_dropped_total %llu\n",
		(unsigned long long)m->stats.events_dropped);
	family(out, "nsguard_userns_decisions_total", "counter",
	       "User namespace creations per container, by the policy mode and the action taken.");
	for (i = 0; i < m->n; i++) {
		const struct metrics_container *c = &m->c[i];
		static const char *const actions[] = { "allowed", "denied", "audited" };
		const unsigned long long v[] = { c->cnt.allowed, c->cnt.denied, c->cnt.audited };

		for (size_t a = 0; a < 3; a++) {
			container_labels(out, "nsguard_userns_decisions_total", c);
			fprintf(out, ",mode=\"");
			metrics_label_value(out, c->mode);
			fprintf(out, "\",action=\"%s\"} %llu\n", actions[a], v[a]);
		}
	}
	family(out, "nsguard_container_events_dropped_total", "counter",
	       "Events of one container lost to its bound or a full ring buffer.");
	for (i = 0; i < m->n; i++) {
		container_labels(out, "nsguard_container_events_dropped_total", &m->c[i]);
		fprintf(out, "} %llu\n", (unsigned long long)m->c[i].cnt.events_dropped);
	}
	fflush(out);
	return ferror(out) ? -EIO : 0;
}
