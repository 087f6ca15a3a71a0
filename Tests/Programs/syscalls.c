/* syscalls: ground truth for kernel time in cpu mode.
 *
 * Spends argv[1] seconds (default 4) of its own CPU time, half in `read_zero` (read(2) of
 * /dev/zero, 64 KiB at a time: nearly all of it in the kernel) and half in `spin_user` (a loop
 * in user space), interleaved in short rounds of pseudo-random length (0.4-1.6 ms) and order,
 * so that no sampling period aliases with them and samples a few ms apart are nearly
 * independent. Measures the thread CPU time spent inside each (clock_gettime), and the
 * kernel's part of the whole (getrusage RUSAGE_THREAD). Prints `measured read_zero SHARE`,
 * `measured spin_user SHARE` (shares of the time in the two, summing to 1) and
 * `kernel_share SHARE`.
 *
 * Build: gcc -O2 -o syscalls syscalls.c */
#include "workload.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>

static char buffer[65536];

/* Reads /dev/zero until the calling thread has used `seconds` more CPU time. */
SAMPLED_FUNCTION static uint64_t read_zero(int fd, double seconds) {
    const double end = thread_cpu_seconds() + seconds;
    uint64_t bytes = 0;
    do {
        ssize_t got = read(fd, buffer, sizeof buffer);
        if (got > 0) bytes += (uint64_t)got;
    } while (thread_cpu_seconds() < end);
    return bytes;
}

SAMPLED_FUNCTION static uint64_t spin_user(double seconds) { return burn_cpu(seconds, 0x9E3779B97F4A7C15ULL); }

static double seconds_of(struct timeval value) { return (double)value.tv_sec + (double)value.tv_usec * 1e-6; }

int main(int argc, char **argv) {
    const double duration = seconds_argument(argc, argv, 4.0);
    int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 2;
    uint64_t state = 0x853C49E6748FEA9BULL, checksum = 0;
    double in_read = 0, in_spin = 0;
    while (in_read + in_spin < duration) {
        const double half = 0.5 * (0.0004 + 0.0012 * (double)(next_random(&state) >> 11) / 9007199254740992.0);
        for (int turn = 0, first = (int)(next_random(&state) & 1); turn < 2; turn++) {
            const double start = thread_cpu_seconds();
            if ((turn ^ first) == 0) {
                checksum += read_zero(fd, half);
                in_read += thread_cpu_seconds() - start;
            } else {
                checksum ^= spin_user(half);
                in_spin += thread_cpu_seconds() - start;
            }
        }
    }
    struct rusage usage;
    getrusage(RUSAGE_THREAD, &usage);
    const double user = seconds_of(usage.ru_utime), kernel = seconds_of(usage.ru_stime);
    printf("measured read_zero %.4f\nmeasured spin_user %.4f\n", in_read / (in_read + in_spin), in_spin / (in_read + in_spin));
    printf("kernel_share %.4f\nchecksum %016llx\n", user + kernel > 0 ? kernel / (user + kernel) : 0, (unsigned long long)checksum);
    return 0;
}
