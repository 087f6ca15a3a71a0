/* Threads that exist before sampling starts: creates 3 workers, sleeps 100 ms,
 * then profiles itself through the C API (linked against the preload library) for about
 * 1.5 s of its own CPU while the workers spin, stops and writes the folded profile to
 * argv[1]. Built with and without frame pointers: the walk must not depend on them. */
#include "workload.h"
#include <pthread.h>
#include <stacksampler.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int stopping;
static volatile uint64_t sink;

SAMPLED_FUNCTION static void spin_leaf(uint64_t salt) { sink += burn_cpu(0.01, salt); }

SAMPLED_FUNCTION static void *worker_main(void *argument) {
    while (!atomic_load(&stopping)) spin_leaf((uint64_t)(uintptr_t)argument);
    return NULL;
}

SAMPLED_FUNCTION static void main_spin(void) { sink += burn_cpu(0.5, 7); }

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: threads_before_start PROFILE\n");
        return 2;
    }
    pthread_t workers[3];
    for (int i = 0; i < 3; i++) pthread_create(&workers[i], NULL, worker_main, (void *)(uintptr_t)(i + 1));
    usleep(100000);
    printf("start %d\n", stacksampler_start(10000000, STACKSAMPLER_MODE_CPU));
    main_spin();
    printf("stop %d\n", stacksampler_stop());
    atomic_store(&stopping, 1);
    for (int i = 0; i < 3; i++) pthread_join(workers[i], NULL);
    printf("write %d\n", stacksampler_write(argv[1], NULL));
    return 0;
}
