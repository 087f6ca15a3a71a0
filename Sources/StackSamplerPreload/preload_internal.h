/* Shared between the preload library's own files (not the engine's); not installed. */
#ifndef STACKSAMPLER_PRELOAD_INTERNAL_H
#define STACKSAMPLER_PRELOAD_INTERNAL_H

#include <stdint.h>

/* None of this is exported: the library's interface is the C API and the engine. */
#pragma GCC visibility push(hidden)

/* The Swift part's entry points (preload_swift_part.h), resolved after loading it. */
typedef struct {
    void (*preload_main)(void);
    int (*start)(uint64_t period_ns, int mode);
    int (*stop)(void);
    int (*write)(const char *path, const char *format);
} ss_swift_part;

/* swift_part.c: loads the Swift part once (later calls return the same answer); NULL, after
 * saying why on stderr, if it cannot be loaded. */
const ss_swift_part *ss_swift_part_load(void);

/* How the Swift part is opened: privately, and with its functions bound on first call (about
 * 0.4 ms less start-up than RTLD_NOW; none of it runs in a signal handler). */
#define SS_SWIFT_PART_DLOPEN_MODE (RTLD_LAZY | RTLD_LOCAL)

/* swift_backtracer.c: dlopen(path, SS_SWIFT_PART_DLOPEN_MODE), with the Swift runtime's crash
 * backtracer off for that load when the process has no Swift runtime of its own yet. */
void *ss_dlopen_without_swift_backtracer(const char *path);

/* secure_execution.c: nonzero in secure-execution mode (ss_secure_execution), where the library
 * does nothing; says so on stderr the first time. */
int ss_refuse_secure_execution(void);

/* diagnostics.c: writes "stacksampler: " + the parts + "\n" on stderr with write(2). */
void ss_report(const char *first, const char *second, const char *third);

/* owner_handover.c: whether `owner`, the profiled ancestor of this process whose daemon settings
 * it inherited, gave its listen addresses up to it (it only started this program: a wrapper). */
int ss_take_over_from_owner(long owner);

#pragma GCC visibility pop

#endif
