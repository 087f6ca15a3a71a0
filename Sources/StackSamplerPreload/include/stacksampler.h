/*
 * StackSampler C API: profile a region of a C or C++ program.
 *
 *   #include <stacksampler.h>
 *   stacksampler_start(10000000, STACKSAMPLER_MODE_CPU);   // every 10 ms of CPU time, all threads
 *   work();
 *   stacksampler_stop();
 *   stacksampler_write("work.svg", NULL);                  // format from the extension
 *
 * Build against the library built by `swift build -c release` (.build/release; the first call
 * loads libStackSamplerPreloadSwift.so from beside libStackSamplerPreload.so):
 *   cc app.c -I<package>/Sources/StackSamplerPreload/include \
 *      -L<package>/.build/release -lStackSamplerPreload -Wl,-rpath,<package>/.build/release
 *
 * Every function returns STACKSAMPLER_OK (0) or a negative STACKSAMPLER_ERROR_* code;
 * stacksampler_error_message() describes a code. The functions may be called from any thread;
 * one session runs at a time per process. Do not combine with STACKSAMPLER_OUTPUT, which
 * already runs a session from start to exit.
 */
#ifndef STACKSAMPLER_H
#define STACKSAMPLER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sampling modes. */
#define STACKSAMPLER_MODE_CPU 0  /* on-CPU time: each thread every period of its CPU time (SIGPROF) */
#define STACKSAMPLER_MODE_WALL 1 /* wall-clock time: every thread every period, running or not */

/* Results. */
#define STACKSAMPLER_OK 0
#define STACKSAMPLER_ERROR_ALREADY_RUNNING (-1) /* start: a session is running */
#define STACKSAMPLER_ERROR_NOT_RUNNING (-2)     /* stop: no session is running */
#define STACKSAMPLER_ERROR_INVALID_ARGUMENT (-3) /* period not from 50us to 60s, unknown mode or format, NULL path */
#define STACKSAMPLER_ERROR_UNAVAILABLE (-4)     /* start: libStackSamplerPreloadSwift.so missing, or no free signal */
#define STACKSAMPLER_ERROR_NO_PROFILE (-5)      /* write: no session has been stopped yet */
#define STACKSAMPLER_ERROR_WRITE_FAILED (-6)    /* write: the file could not be written */
#define STACKSAMPLER_ERROR_SECURE_EXECUTION (-7) /* any call: the process runs setuid, setgid or with file
                                                    capabilities, where the profiler does nothing (said once on stderr) */

/* Starts sampling every thread of the process every period_ns nanoseconds in `mode`. */
int stacksampler_start(uint64_t period_ns, int mode);

/* Stops sampling and keeps the profile for stacksampler_write. */
int stacksampler_stop(void);

/* Writes the last stopped session's profile to `path`. `format` is "folded", "svg", "pprof" or
 * "speedscope"; NULL picks it from the extension (.folded/.collapsed, .svg, .pb.gz/.pprof,
 * .speedscope.json; others: folded). May be called several times, for several formats. */
int stacksampler_write(const char *path, const char *format);

/* A static English description of a result code. */
const char *stacksampler_error_message(int status);

#ifdef __cplusplus
}
#endif

#endif
