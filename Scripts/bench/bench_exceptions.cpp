// bench_exceptions: C++ exceptions thrown through frames and caught, fixed work, for what the
// profiler's signals cost the unwinder the C++ runtime runs (it takes the loader's lock to find
// each frame's tables, the lock a signal handler must never wait for).
//
// argv[1] throws, each through argv[2] frames. Prints `caught N`.
//
// Build: g++ -O2 -o bench_exceptions bench_exceptions.cpp
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__attribute__((noinline)) static long thrower(int depth, long value) {
    if (depth == 0) throw std::runtime_error("deep");
    const long below = thrower(depth - 1, value * 3 + 1);
    return below ^ value;  // work after the call: no tail call
}

int main(int argc, char **argv) {
    const long throws = argc > 1 ? std::atol(argv[1]) : 100000;
    const int depth = argc > 2 ? std::atoi(argv[2]) : 10;
    long caught = 0;
    for (long i = 0; i < throws; i++) {
        try {
            thrower(depth, i);
        } catch (const std::runtime_error &) {
            caught++;
        }
    }
    std::printf("caught %ld\n", caught);
    return caught == throws ? 0 : 1;
}
