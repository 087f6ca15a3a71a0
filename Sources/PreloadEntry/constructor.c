/* Runs before main in every process the library is preloaded into, so that
 * start-up is profiled too. All policy is in stacksampler_preload_main(). */
#include "preload_entry.h"

__attribute__((constructor)) static void stacksampler_preload_constructor(void) {
    stacksampler_preload_main();
}
