/* Calls strtol, a shared library's function, through the program's procedure linkage table from
 * `parse_numbers`, in rounds of a million calls, until argv[1] seconds of its CPU time have
 * passed (default 1): some samples land in the PLT entry itself, which the profile names
 * `strtol@plt`. Prints the sum.
 *
 * Build: gcc -O2 -o plt_calls plt_calls.c */
#include "workload.h"
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long parse_numbers(double seconds) {
    long sum = 0;
    const double end = thread_cpu_seconds() + seconds;
    while (thread_cpu_seconds() < end)
        for (long i = 0; i < 1000000; i++) sum += strtol("7", NULL, 10);
    return sum;
}

int main(int argc, char **argv) {
    printf("%ld\n", parse_numbers(seconds_argument(argc, argv, 1.0)));
    return 0;
}
