/* short_naps: a thread whose sleeps end before a busy machine lets the sampler walk most of them.
 * For argv[1] seconds (default 2) the main thread alternates about 300 us of spinning in
 * `spin_between_naps` with a 200 us nanosleep in `short_nap`, timing each by the wall clock
 * (what it took, waits for a core included: woken from a nap, the thread waits for a core at
 * the end of the system call, still in `short_nap`). Prints `spin_ms`, `nap_ms`, `naps` and
 * `eintr` (naps cut short by a signal; nothing in the program sends one).
 * Build: gcc -O2 -o short_naps short_naps.c */
#include "workload.h"

static volatile uint64_t sink;

SAMPLED_FUNCTION static void spin_between_naps(double milliseconds) {
    const double end = now_ms() + milliseconds;
    uint64_t x = sink | 1;
    while (now_ms() < end) {
        for (int i = 0; i < 256; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    sink ^= x;
}

/* Returns whether the nap was cut short (EINTR). */
SAMPLED_FUNCTION static int short_nap(void) {
    const struct timespec nap = {0, 200000};
    return nanosleep(&nap, NULL) != 0 && errno == EINTR;
}

int main(int argc, char **argv) {
    const double seconds = seconds_argument(argc, argv, 2.0);
    double spin = 0, nap = 0;
    long naps = 0, eintr = 0;
    const double end = now_ms() + seconds * 1e3;
    for (double start = now_ms(); start < end; naps++) {
        spin_between_naps(0.3);
        const double middle = now_ms();
        eintr += short_nap();
        const double after = now_ms();
        spin += middle - start;
        nap += after - middle;
        start = after;
    }
    printf("spin_ms %.1f\nnap_ms %.1f\nnaps %ld\neintr %ld\n", spin, nap, naps, eintr);
    return 0;
}
