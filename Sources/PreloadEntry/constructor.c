/*
 * Runs before main in every process the library is preloaded into. Without STACKSAMPLER_OUTPUT
 * or STACKSAMPLER_LISTEN it does nothing more, so an idle process carries only this small C library: no Swift runtime,
 * no symbol libraries. With it, it loads the Swift part, which starts sampling at once (start-up
 * is profiled too) and writes the profile at exit.
 */
#define _GNU_SOURCE
#include "preload_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char output_variable[] = "STACKSAMPLER_OUTPUT";
static const char owner_variable[] = "STACKSAMPLER_OWNER_PID";
static const char listen_variable[] = "STACKSAMPLER_LISTEN";

/* Whether this process writes the outputs. A program started by the profiled one inherits the
 * environment; without %p in the paths it would overwrite the parent's profile, so it stays idle
 * and says so. The owner marks itself in the environment its descendants inherit. */
static int owns_output(const char *output) {
    if (strstr(output, "%p")) return 1;
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    const char *owner = getenv(owner_variable);
    if (owner && strcmp(owner, pid) != 0) {
        char message[160];
        snprintf(message, sizeof message, "process %s is a descendant of profiled process %s and %s", pid, owner, output_variable);
        ss_report(message, " has no %p; not profiling it", " (put %p in the path to profile every process)");
        return 0;
    }
    setenv(owner_variable, pid, 1);
    return 1;
}

__attribute__((constructor)) static void stacksampler_preload_constructor(void) {
    const char *output = getenv(output_variable);
    const char *listen = getenv(listen_variable);
    int writes = output && *output, listens = listen && *listen;
    // A listener (STACKSAMPLER_LISTEN: the HTTP endpoints) needs the Swift part too.
    if ((!writes && !listens) || ss_secure_execution() || (writes && !owns_output(output))) return;
    const ss_swift_part *part = ss_swift_part_load();
    if (part) part->preload_main();
}
