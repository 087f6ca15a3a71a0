/* Secure-execution mode (AT_SECURE: setuid, setgid or file capabilities). The environment then
 * belongs to a less privileged user: output paths, debug roots and settings from it must not be
 * used with the program's privileges. So nothing is done, and that is said once. */
#define _GNU_SOURCE
#include "preload_internal.h"

#include <stdatomic.h>
#include <sys/auxv.h>

int ss_secure_execution(void) {
    static atomic_flag said;
    if (getauxval(AT_SECURE) == 0) return 0;
    if (!atomic_flag_test_and_set(&said))
        ss_report("secure-execution mode (setuid, setgid or file capabilities): not profiling this process", NULL, NULL);
    return 1;
}
