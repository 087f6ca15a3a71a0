/*
 * Touches argv[1] fresh pages (default 100,000) in `touch_pages`, one write each, and prints
 * the minor page faults its thread took meanwhile (getrusage RUSAGE_THREAD): "faults N", and "pages N".
 */
#include "workload.h"
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

SAMPLED_FUNCTION long touch_pages(volatile char *memory, long pages, long page) {
    long sum = 0;
    for (long i = 0; i < pages; i++) {
        memory[i * page] = (char)i;
        sum += memory[i * page];
    }
    return sum;
}

int main(int argc, char **argv) {
    long pages = argc > 1 ? atol(argv[1]) : 100000, page = sysconf(_SC_PAGESIZE);
    char *memory = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) return 2;
    madvise(memory, (size_t)(pages * page), MADV_NOHUGEPAGE);
    struct rusage before, after;
    getrusage(RUSAGE_THREAD, &before);
    long sum = touch_pages(memory, pages, page);
    getrusage(RUSAGE_THREAD, &after);
    printf("faults %ld\n", after.ru_minflt - before.ru_minflt);
    printf("pages %ld\n", pages);
    printf("sum %ld\n", sum);
    return 0;
}
