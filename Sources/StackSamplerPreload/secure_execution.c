/* Secure-execution mode (ss_secure_execution): nothing is done, and that is said once. */
#define _GNU_SOURCE
#include "preload_internal.h"
#include "stacksampler_engine.h"

#include <stdatomic.h>

int ss_refuse_secure_execution(void) {
    static atomic_flag said;
    if (!ss_secure_execution()) return 0;
    if (!atomic_flag_test_and_set(&said))
        ss_report("secure-execution mode (setuid, setgid or file capabilities): not profiling this process", NULL, NULL);
    return 1;
}
