/*
 * The preload library's Swift part (libStackSamplerPreloadSwift.so), loaded beside the
 * preload library only when profiling is asked for. These are the entry points the preload
 * library looks up in it by name; their status codes are those of stacksampler.h.
 */
#ifndef STACKSAMPLER_PRELOAD_SWIFT_PART_H
#define STACKSAMPLER_PRELOAD_SWIFT_PART_H

#include <stdint.h>

/* File name of the Swift part, in the preload library's directory. */
#define STACKSAMPLER_SWIFT_PART_FILE "libStackSamplerPreloadSwift.so"

/* Runs the session STACKSAMPLER_OUTPUT asks for, from now to exit (profile written at exit). */
void stacksampler_preload_main(void);
/* stacksampler_start, _stop and _write of stacksampler.h, once the Swift part is loaded. */
int stacksampler_swift_start(uint64_t period_ns, int mode);
int stacksampler_swift_stop(void);
int stacksampler_swift_write(const char *path, const char *format);

#endif
