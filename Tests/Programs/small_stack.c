/* small_stack: a thread that works with a few KiB of its stack left.
 *
 * A thread made with a 256 KiB stack of the program's own (mmap'd, with an inaccessible guard
 * page below it, as glibc makes them) recurses until argv[2] bytes (default 5120) are left
 * below its frame, then computes there for argv[1] seconds of CPU (default 1) while its own
 * SIGALRM handler runs at 1 kHz (ITIMER_REAL; main blocks SIGALRM, so the thread takes them
 * all), unless argv[3] is "quiet". The handler blocks every other signal while it runs
 * (sa_mask full), as it must with this little stack: a second signal's frame on top of its
 * own would not fit (with argv[3] "nesting" it does not, to show that). With argv[3] "main"
 * the main thread does the same at the end of its own stack, which ends RLIMIT_STACK below
 * the top of its mapping (run it with a small limit: prlimit --stack=524288); below_leaf is
 * not measured then. The stack is poisoned before the thread starts; once it
 * has ended, the deepest byte written tells how far below the deepest frame signal handlers
 * (the kernel's frame and whatever handler ran) went. Prints
 *   left N          bytes of stack below the working frame
 *   alarms N        the program's handler calls
 *   below_leaf N    deepest stack use below the working frame, in bytes
 *   kernel_frame N  the kernel's signal frame, as the program's handler finds it
 * then `done`. Exit status 0; a stack overflow dies of SIGSEGV.
 *
 * Build: gcc -O2 -pthread -o small_stack small_stack.c */
#include "workload.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

enum { STACK_BYTES = 256 * 1024, GUARD_BYTES = 4096, POISON = 0xa5, FRAME_PAD = 480 };

static unsigned char *stack_low;
static size_t leave = 5120;
static double seconds = 1;
static int with_alarms = 1, nesting = 0, on_main = 0;
static volatile uint64_t sink;
static volatile int alarms;
static volatile uintptr_t leaf_sp, kernel_frame;

/* The program's own handler: counts, and notes how much the kernel's frame took. */
static void on_alarm(int signo, siginfo_t *info, void *context) {
    (void)signo;
    (void)info;
    alarms++;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (leaf_sp > here && leaf_sp - here > kernel_frame) kernel_frame = leaf_sp - here;
    (void)context;
}

/* The work at the bottom of the stack. */
SAMPLED_FUNCTION static void work_at_bottom(void) {
    leaf_sp = (uintptr_t)__builtin_frame_address(0);
    sink += burn_cpu(seconds, 7);
}

/* Recurses, FRAME_PAD bytes and more a frame, until `leave` bytes are left below. */
SAMPLED_FUNCTION static void descend(int depth) {
    volatile unsigned char pad[FRAME_PAD];
    pad[0] = (unsigned char)depth;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (here - (uintptr_t)stack_low > leave + 2 * FRAME_PAD)
        descend(depth + 1);
    else
        work_at_bottom();
    sink += pad[0];
}

static void *thread_main(void *unused) {
    (void)unused;
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &alarm_only, NULL);
    descend(0);
    pthread_sigmask(SIG_BLOCK, &alarm_only, NULL);
    return NULL;
}

/* The main thread's stack ends RLIMIT_STACK below the top of its [stack] mapping. */
static int main_thread_at_its_end(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long start, end, top = 0;
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &start, &end) == 2) top = end;
    if (maps) fclose(maps);
    struct rlimit limit;
    if (!top || getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur > 64 * 1024 * 1024) {
        fprintf(stderr, "small_stack main: run with a small RLIMIT_STACK\n");
        return 1;
    }
    stack_low = (unsigned char *)(top - limit.rlim_cur);
    thread_main(NULL);
    printf("left %lu\nalarms %d\ndone\n", (unsigned long)(leaf_sp - (uintptr_t)stack_low), alarms);
    return 0;
}

int main(int argc, char **argv) {
    seconds = seconds_argument(argc, argv, 1.0);
    if (argc > 2) leave = (size_t)strtoul(argv[2], NULL, 10);
    if (argc > 3 && strcmp(argv[3], "quiet") == 0) with_alarms = 0;
    if (argc > 3 && strcmp(argv[3], "nesting") == 0) nesting = 1;
    if (argc > 3 && strcmp(argv[3], "main") == 0) on_main = 1;
    unsigned char *mapping = mmap(NULL, STACK_BYTES + GUARD_BYTES, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mapping == MAP_FAILED || mprotect(mapping, GUARD_BYTES, PROT_NONE) != 0) { perror("mmap"); return 1; }
    stack_low = mapping + GUARD_BYTES;
    memset(stack_low, POISON, STACK_BYTES);

    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alarm_only, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_alarm;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    if (!nesting) sigfillset(&action.sa_mask);
    sigaction(SIGALRM, &action, NULL);
    const struct itimerval every_ms = {{0, 1000}, {0, 1000}};
    if (with_alarms && setitimer(ITIMER_REAL, &every_ms, NULL) != 0) { perror("setitimer"); return 1; }

    if (on_main) return main_thread_at_its_end();

    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstack(&attributes, stack_low, STACK_BYTES);
    pthread_t thread;
    if (pthread_create(&thread, &attributes, thread_main, NULL) != 0) return 1;
    pthread_join(thread, NULL);
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    size_t untouched = 0;
    while (untouched < STACK_BYTES && stack_low[untouched] == POISON) untouched++;
    printf("left %lu\nalarms %d\nbelow_leaf %lu\nkernel_frame %lu\ndone\n",
           (unsigned long)(leaf_sp - (uintptr_t)stack_low), alarms,
           (unsigned long)(leaf_sp - (uintptr_t)(stack_low + untouched)), (unsigned long)kernel_frame);
    return 0;
}
