/* The C API (stacksampler.h): each call loads the Swift part on first use and forwards to it. */
#include "stacksampler.h"
#include "preload_internal.h"

#include <stddef.h>

/* The Swift part, or NULL with `status` set to the code to return. */
static const ss_swift_part *available(int *status) {
    if (ss_refuse_secure_execution()) {
        *status = STACKSAMPLER_ERROR_SECURE_EXECUTION;
        return NULL;
    }
    const ss_swift_part *part = ss_swift_part_load();
    *status = part ? STACKSAMPLER_OK : STACKSAMPLER_ERROR_UNAVAILABLE;
    return part;
}

int stacksampler_start(uint64_t period_ns, int mode) {
    int status;
    const ss_swift_part *part = available(&status);
    return part ? part->start(period_ns, mode) : status;
}

int stacksampler_stop(void) {
    int status;
    const ss_swift_part *part = available(&status);
    return part ? part->stop() : status;
}

int stacksampler_write(const char *path, const char *format) {
    int status;
    const ss_swift_part *part = available(&status);
    return part ? part->write(path, format) : status;
}
