/*
 * Runs before main in every process the library is preloaded into. Without STACKSAMPLER_OUTPUT
 * or a daemon setting it does nothing more, so an idle process carries only this small C library: no Swift runtime,
 * no symbol libraries. With it, it loads the Swift part, which starts sampling at once (start-up
 * is profiled too) and writes the profile at exit.
 */
#define _GNU_SOURCE
#include "preload_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char output_variable[] = "STACKSAMPLER_OUTPUT";
static const char owner_variable[] = "STACKSAMPLER_OWNER_PID";

/* The daemon's settings: any of them makes the process run the daemon (continuous windows,
 * the HTTP endpoints, pushes), with or without STACKSAMPLER_OUTPUT. */
static const char *const daemon_variables[] = {"STACKSAMPLER_CONTINUOUS", "STACKSAMPLER_LISTEN", "STACKSAMPLER_PUSH"};

/* The C library's own setenv, not the program's. A program may define its own: bash's, called
 * before its main, starts bash's table of shell variables, and from then on bash's getenv reads
 * that table instead of the environment, so the Swift part found no STACKSAMPLER_OUTPUT and bash
 * was never profiled. (getenv before main, even bash's, reads the environment.) */
static int libc_setenv(const char *name, const char *value) {
    int (*function)(const char *, const char *, int) = (int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "setenv");
    return function ? function(name, value, 1) : -1;
}

static const char *first_daemon_variable(void) {
    for (size_t i = 0; i < sizeof daemon_variables / sizeof *daemon_variables; i++) {
        const char *value = getenv(daemon_variables[i]);
        if (value && *value) return daemon_variables[i];
    }
    return NULL;
}

/* Whether this process profiles. A program started by the profiled one inherits the
 * environment; without %p in the output paths it would overwrite the parent's profile (or run a
 * second daemon on the parent's address and back end), so it stays idle and says so, unless the
 * owner only started it (a wrapper, with the daemon settings alone: owner_handover.c) and hands
 * the profiling over. The owner marks itself in the environment its descendants inherit. */
static int owns_output(const char *output) {
    if (strstr(output, "%p")) return 1;
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    const char *owner = getenv(owner_variable);
    if (owner && strcmp(owner, pid) != 0 && !(!*output && ss_take_over_from_owner(strtol(owner, NULL, 10)))) {
        char message[160];
        if (*output) {
            snprintf(message, sizeof message, "process %s is a descendant of profiled process %s and %s", pid, owner, output_variable);
            ss_report(message, " has no %p; not profiling it", " (put %p in the path to profile every process)");
        } else {
            snprintf(message, sizeof message, "process %s is a descendant of profiled process %s, which runs the daemon (%s)", pid, owner,
                     first_daemon_variable());
            ss_report(message, "; not profiling it", " (with %p in STACKSAMPLER_OUTPUT every process runs its own)");
        }
        return 0;
    }
    libc_setenv(owner_variable, pid);
    return 1;
}

__attribute__((constructor)) static void stacksampler_preload_constructor(void) {
    const char *output = getenv(output_variable);
    if (!output) output = "";
    if ((!*output && !first_daemon_variable()) || ss_refuse_secure_execution() || !owns_output(output)) return;
    const ss_swift_part *part = ss_swift_part_load();
    if (part) part->preload_main();
}
