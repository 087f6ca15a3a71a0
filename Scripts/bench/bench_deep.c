/* bench_deep: fixed CPU work done at the bottom of deep call stacks.
 *
 * argv[1] = number of leaf visits; argv[2], argv[3] = least and greatest depth (default 100
 * and 200). Each visit recurses to a pseudo-random depth in that range, in frames of
 * `descend` (not tail calls: each frame does work after its callee returns), and burns one
 * block of arithmetic in `leaf_work` there, so nearly every sample has a stack that deep
 * (plus _start, __libc_start_main, main) to unwind. Prints a checksum.
 *
 * Build: gcc -O2 -o bench_deep bench_deep.c   (no frame pointers) */
#include "bench_work.h"
#include <stdio.h>

SAMPLED_FUNCTION uint64_t leaf_work(uint64_t seed) { return burn_blocks(1, seed | 1); }

SAMPLED_FUNCTION uint64_t descend(int depth, uint64_t seed) {
    if (depth == 0) return leaf_work(seed);
    const uint64_t below = descend(depth - 1, seed * 0x9E3779B97F4A7C15ULL + (uint64_t)depth);
    /* Work after the call keeps this frame on the stack (no tail call, no loop). */
    return (below >> 7) ^ (below * (uint64_t)(depth | 1));
}

int main(int argc, char **argv) {
    const long visits = count_argument(argc, argv, 1, 50000);
    const long least = count_argument(argc, argv, 2, 100), most = count_argument(argc, argv, 3, 200);
    if (least < 0 || most < least) {
        fprintf(stderr, "bench_deep: depths must satisfy 0 <= least <= greatest\n");
        return 2;
    }
    uint64_t state = 0x853C49E6748FEA9BULL, checksum = 0;
    for (long v = 0; v < visits; v++) {
        const int depth = (int)least + (int)(next_random(&state) % (uint64_t)(most - least + 1));
        checksum ^= descend(depth, state);
    }
    printf("checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
