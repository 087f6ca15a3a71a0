/* victim: a program that dies before its exit handlers run. Spends 1 s of CPU in
 * `victim_work`, writes its pid to argv[2] (if given), then per argv[1]:
 *   exit   _exit(5)      abort   abort()      segv   writes through a null pointer
 *   spin   keeps working in `victim_work` (up to 60 s) until someone kills it.
 * Build: gcc -O2 -o victim victim.c */
#include "workload.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t sink;

SAMPLED_FUNCTION void victim_work(double seconds) { sink += burn_cpu(seconds, 0xDEAD); }

int main(int argc, char **argv) {
    const char *ending = argc > 1 ? argv[1] : "spin";
    if (argc > 2) {
        FILE *file = fopen(argv[2], "w");
        if (file) { fprintf(file, "%d\n", (int)getpid()); fclose(file); }
    }
    victim_work(strcmp(ending, "spin") == 0 ? 0.1 : 1.0);
    if (strcmp(ending, "exit") == 0) _exit(5);
    if (strcmp(ending, "abort") == 0) abort();
    if (strcmp(ending, "segv") == 0) *(volatile int *)(uintptr_t)8 = 1;
    victim_work(60);
    return 0;
}
