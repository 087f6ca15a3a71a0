/* stacksampler_error_message() of the C API (stacksampler.h): static strings, so in C. */
#include "stacksampler.h"

const char *stacksampler_error_message(int status) {
    switch (status) {
    case STACKSAMPLER_OK: return "success";
    case STACKSAMPLER_ERROR_ALREADY_RUNNING: return "the profiler is already running; call stacksampler_stop() first";
    case STACKSAMPLER_ERROR_NOT_RUNNING: return "the profiler is not running; call stacksampler_start() first";
    case STACKSAMPLER_ERROR_INVALID_ARGUMENT:
        return "invalid argument: the period must be from 50us to 60s, the mode STACKSAMPLER_MODE_CPU or "
               "STACKSAMPLER_MODE_WALL, the format folded, svg, pprof, speedscope or NULL, the path not NULL";
    case STACKSAMPLER_ERROR_UNAVAILABLE:
        return "sampling is unavailable: libStackSamplerPreloadSwift.so is missing, or every "
               "candidate signal is taken";
    case STACKSAMPLER_ERROR_NO_PROFILE: return "no profile yet: call stacksampler_stop() before stacksampler_write()";
    case STACKSAMPLER_ERROR_WRITE_FAILED: return "the profile could not be written (see errno)";
    case STACKSAMPLER_ERROR_SECURE_EXECUTION:
        return "the process runs in secure-execution mode (setuid, setgid or file capabilities); StackSampler does "
               "nothing there";
    default: return "unknown StackSampler status";
    }
}
