/*
 * pfrec/pmu.h - event specifications as perf users type them, resolved into
 * perf_event_attr against the PMUs the kernel describes in sysfs
 * (pfrec-private: only pfrec calls perf_event_open).
 *
 * Sources: the kernel's sysfs ABI (Documentation/ABI/testing/
 * sysfs-bus-event_source-devices-{format,events}, ...-caps), the uapi
 * header include/uapi/linux/perf_event.h, and perf's event syntax
 * (perf-list(1), perf-record(1)).
 *
 * How to use
 *   struct pmu_model *m;
 *   pmu_model_open(&m, NULL, err, sizeof(err));       // sysfs and tracefs roots
 *   struct pmu_events evs = {0};
 *   pmu_parse(m, "{cycles,instructions}:S", &evs, err, sizeof(err)); // each -e
 *   pmu_parse(m, "sched:sched_switch", &evs, err, sizeof(err));
 *   for (int i = 0; i < evs.n; i++)   // leaders before their members
 *           open evs.ev[i].pa.attr with group_fd = fd of evs.ev[evs.ev[i].leader]
 *   pmu_events_free(&evs);
 *   pmu_model_close(m);
 *
 * Syntax of one -e argument: events separated by commas outside `/.../` and
 * `{...}`. An event is one of
 *   NAME[:MODS]               a generic name (cycles, cpu-clock, ...), a raw
 *                             code rHEX (config for the CPU PMU), or a sysfs
 *                             event name that one PMU (or one family: the
 *                             hybrid CPU PMUs, PMU_0 PMU_1 ...) has
 *   PMU/TERMS/[MODS]          TERMS: TERM[,TERM...], TERM = FIELD=VALUE,
 *   PMU/TERMS/:MODS           FIELD (= 1), an event of the PMU's events/, a
 *                             generic hardware name (on a CPU PMU),
 *                             config|config1|config2|config3=VALUE (the whole
 *                             word), period=N, freq=HZ, name=TEXT; VALUE is
 *                             decimal or 0x-hex; PMU may omit a numeric
 *                             suffix (armv8_pmuv3 for armv8_pmuv3_0)
 *   NAME/TERMS/[MODS]         generic name, raw code or tracepoint with
 *                             period=, freq=, name= only
 *   SUBSYS:NAME[:MODS]        a tracepoint of tracefs events/SUBSYS/NAME
 *   {EVENT,EVENT,...}[:MODS]  a group; the first event leads it
 * MODS: u k h (count user, kernel, hypervisor: the others are excluded),
 * G H (count guest, host), p pp ppp (precise_ip 1-3), S (sample-read: a
 * group samples its leader and reads all counters; PERF_SAMPLE_READ,
 * PERF_FORMAT_GROUP), D (pinned).
 */
#ifndef PFREC_PMU_H
#define PFREC_PMU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>

/* ---- the attr -------------------------------------------------------------- */

/* perf_event_attr up to config3 (PERF_ATTR_SIZE_VER8, 136 bytes, Linux 6.3).
 * Headers before Linux 6.3 (Debian 12 has 6.1) end the struct at sig_data
 * (128 bytes): config3 then lies right behind it, where the kernel reads it.
 * Pass &pa.attr to perf_event_open(2); attr.size covers config3 (a kernel
 * before 6.3 accepts the larger size while config3 is 0, else E2BIG). */
struct pmu_attr {
	struct perf_event_attr attr;
#ifndef PERF_ATTR_SIZE_VER8
	uint64_t config3;
#endif
};
#ifdef PERF_ATTR_SIZE_VER8
#define PMU_CONFIG3(pa) ((pa)->attr.config3)
#else
#define PMU_CONFIG3(pa) ((pa)->config3)
#endif

/* ---- where the kernel describes the PMUs ------------------------------------ */

/* Roots to read instead of the system's. NULL fields (or a NULL env): the
 * environment variables PFREC_SYSFS_ROOT (replaces
 * /sys/bus/event_source/devices) and PFREC_TRACEFS_ROOT (replaces the
 * tracefs mount), then /sys/bus/event_source/devices and the first of
 * /sys/kernel/tracing, /sys/kernel/debug/tracing with an events/ folder. */
struct pmu_env {
	const char *sysfs_root;
	const char *tracefs_root;
};

struct pmu_model;

/* Lists the PMUs of the sysfs root (name, type, whether a CPU PMU); their
 * formats, events and caps are read when first needed. A missing system
 * sysfs root is not an error (no PMU events then); a root given by env or
 * PFREC_SYSFS_ROOT that is not a folder is.
 * @return 0, or -errno with a one-line message in err (errlen bytes, may be
 * NULL). *out is owned by the caller: pmu_model_close(). */
int pmu_model_open(struct pmu_model **out, const struct pmu_env *env, char *err, size_t errlen);
void pmu_model_close(struct pmu_model *m);
/* The roots in use (the tracefs one is NULL when none was found). */
const char *pmu_model_sysfs_root(const struct pmu_model *m);
const char *pmu_model_tracefs_root(const struct pmu_model *m);

/* ---- parsed events ------------------------------------------------------------ */

/* Modifiers as typed (an event's own and its group's together). */
#define PMU_MOD_USER     0x01u /* u */
#define PMU_MOD_KERNEL   0x02u /* k */
#define PMU_MOD_HV       0x04u /* h */
#define PMU_MOD_GUEST    0x08u /* G */
#define PMU_MOD_HOST     0x10u /* H */
#define PMU_MOD_SAMPLE_READ 0x20u /* S */
#define PMU_MOD_PINNED   0x40u /* D */

/* pmu_event.flags */
#define PMU_EV_GENERIC   0x01u /* a generic name (pfrec's cycles fallback applies) */
#define PMU_EV_EXPANDED  0x02u /* one of the attrs of an event opened on several
				  PMUs (hybrid CPU PMUs, PMU_0, PMU_1, ...) */
#define PMU_EV_PERIOD    0x04u /* period= given: attr.sample_period is the user's */
#define PMU_EV_FREQ      0x08u /* freq= given: attr.freq, attr.sample_freq are */
#define PMU_EV_NO_SAMPLE 0x10u /* a member of a sample-read group: it counts and
				  never samples (sample_period stays 0) */
#define PMU_EV_RAW       0x20u /* rHEX */
#define PMU_EV_TRACEPOINT 0x40u
#define PMU_EV_PRECISE_UNCHECKED 0x80u /* :p, :pp or :ppp on a PMU without
			      caps/max_precise: the level is left to the kernel,
			      as perf does (software PMUs accept and ignore it) */

/* One event to open. attr holds what the spec decides: size, type,
 * config..config3, exclude_user/kernel/hv/host/guest, precise_ip, pinned,
 * sample_period or freq+sample_freq when period=/freq= were given (else 0),
 * and the sample_type and read_format bits the spec needs
 * (PERF_SAMPLE_RAW for tracepoints; PERF_SAMPLE_READ, PERF_FORMAT_GROUP |
 * PERF_FORMAT_ID for sample-read): the recorder ORs in its own bits. */
struct pmu_event {
	struct pmu_attr pa;
	char *spec;        /* the whole comma-separated item it came from, as
			      typed: "{cycles,instructions}:S" */
	char *text;        /* this event's own text in it: "instructions" */
	char *name;        /* name= if given, else text */
	char *pmu;         /* PMU name: a sysfs one ("cpu", "cpu_core",
			      "armv8_pmuv3_0", "msr"), or "hardware" (generic
			      hardware event, no CPU PMU in sysfs), "software",
			      "tracepoint", "raw" (rHEX, no CPU PMU in sysfs) */
	int leader;        /* index in pmu_events.ev of its group leader; its
			      own index when it leads or stands alone */
	int nr_members;    /* on a leader: events in its group, itself included
			      (1 alone); 0 on a member. Members follow their
			      leader in ev[]. */
	unsigned mods;     /* PMU_MOD_* */
	unsigned flags;    /* PMU_EV_* */
	double scale;      /* events/NAME.scale, else 1 */
	char unit[32];     /* events/NAME.unit, else "" */
	char *tp_format;   /* tracepoint: path of its format file, else NULL */
	const char *filter; /* pfrec --filter after its -e: the tracepoint
			       filter (PERF_EVENT_IOC_SET_FILTER), not owned; NULL */
};

struct pmu_events {
	struct pmu_event *ev;
	int n, cap;
};

/* Upper limits: one spec's length in bytes, events in one pmu_events. */
#define PMU_SPEC_MAX   4096
#define PMU_EVENTS_MAX 1024

/* Parses one -e argument and appends its events to out (zeroed before the
 * first call); group leaders index into out as a whole, so several -e
 * arguments accumulate. Generic hardware names, raw codes and sysfs events
 * named without their PMU open on every CPU PMU of a hybrid machine
 * (PMU_EV_EXPANDED; hardware events carry the PMU's type in config bits
 * 32-63, PERF_PMU_TYPE_SHIFT), and a group holding such an event becomes
 * one group per CPU PMU.
 * @return 0; or -errno with out unchanged and one line in err that starts
 * with the offending event's text: -EINVAL (syntax, bad modifier or term
 * value), -ENOENT (unknown PMU, field, event or tracepoint), -ERANGE (a
 * value wider than its field, a period or frequency out of range),
 * -EOPNOTSUPP (precise level above the PMU's caps/max_precise),
 * -E2BIG (over PMU_SPEC_MAX or PMU_EVENTS_MAX), -ENOMEM, or a read error
 * of a sysfs or tracefs file. */
int pmu_parse(struct pmu_model *m, const char *spec, struct pmu_events *out, char *err, size_t errlen);
void pmu_events_free(struct pmu_events *evs);

/* The exclude_* bits of attr as perf's modifier letters, in the order
 * u k h G H (exclude_user, _kernel, _hv, _guest, _host; a letter names what
 * is left out), NUL-terminated in out (at most 5 letters); "" when nothing
 * is excluded. @return out. */
char *pmu_attr_excl_letters(const struct perf_event_attr *a, char out[static 6]);

/* ---- pfrec --list ------------------------------------------------------------ */

/* Writes the generic events, every PMU's sysfs events with their encoding
 * (the events/ text and the config words it gives, scale and unit) and
 * formats, and the tracepoint subsystems to f, sorted. A pattern (NULL: all)
 * keeps the entries it matches, case-insensitively: a glob when it has * ?
 * or [, else a substring; with a pattern, single tracepoints are listed.
 * @return the number of entries written, or -errno. */
int pmu_list(struct pmu_model *m, const char *pattern, FILE *f);

#endif
