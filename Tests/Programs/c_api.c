/* Profiles one region of itself through the C API (stacksampler.h), linked against
 * libStackSamplerPreload.so rather than preloaded. Burns CPU before, inside and after the
 * region; writes the region's profile to argv[1] (format from the extension) and argv[2]
 * (pprof). Prints each API result as `NAME CODE`, `error_message ok` if descriptions exist, and the
 * description of STACKSAMPLER_ERROR_INVALID_ARGUMENT. */
#include "workload.h"
#include <stacksampler.h>
#include <stdio.h>
#include <string.h>

static volatile uint64_t sink;

SAMPLED_FUNCTION static void before_region(void) { sink += burn_cpu(0.2, 1); }
SAMPLED_FUNCTION static void inside_region(void) { sink += burn_cpu(0.5, 2); }
SAMPLED_FUNCTION static void after_region(void) { sink += burn_cpu(0.2, 3); }

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: c_api PROFILE PPROF_PROFILE\n");
        return 2;
    }
    printf("stop_before_start %d\n", stacksampler_stop());
    printf("write_before_stop %d\n", stacksampler_write(argv[1], NULL));
    printf("bad_mode %d\n", stacksampler_start(10000000, 7));
    printf("bad_period %d\n", stacksampler_start(1, STACKSAMPLER_MODE_CPU));
    before_region();
    printf("start %d\n", stacksampler_start(5000000, STACKSAMPLER_MODE_CPU));
    printf("start_again %d\n", stacksampler_start(5000000, STACKSAMPLER_MODE_CPU));
    inside_region();
    printf("stop %d\n", stacksampler_stop());
    after_region();
    printf("bad_format %d\n", stacksampler_write(argv[1], "jpeg"));
    printf("null_path %d\n", stacksampler_write(NULL, NULL));
    printf("unwritable %d\n", stacksampler_write("/nonexistent-directory/profile.folded", NULL));
    printf("write %d\n", stacksampler_write(argv[1], NULL));
    printf("write_pprof %d\n", stacksampler_write(argv[2], "pprof"));
    int described = strcmp(stacksampler_error_message(STACKSAMPLER_ERROR_NOT_RUNNING), stacksampler_error_message(42)) != 0;
    printf("error_message %s\n", described ? "ok" : "missing");
    printf("invalid_argument_message %s\n", stacksampler_error_message(STACKSAMPLER_ERROR_INVALID_ARGUMENT));
    return 0;
}
