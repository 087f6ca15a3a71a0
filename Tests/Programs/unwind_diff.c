/* unwind_diff: a preload library that proves the engine's stack walk against libunwind's, frame by
 * frame, at sampled moments of any program.
 *
 *   LD_PRELOAD="BUILD/libStackSamplerPreload.so unwind_diff.so" UNWIND_DIFF_OUTPUT=FILE PROGRAM …
 *
 * It arms ITIMER_PROF (UNWIND_DIFF_PERIOD_US, default 1000) and, in its own SIGPROF handler, walks
 * the interrupted context twice, into preallocated records: with the engine's tables
 * (ss_unwind_context from the ucontext's rip, rsp, rbp and rbx, as the profiler's handler walks;
 * memory read through process_vm_readv) and with libunwind (unw_init_local2 with UNW_INIT_SIGNAL_FRAME on the ucontext). libunwind is loaded
 * privately (RTLD_LOCAL) so that the program's C++ exceptions keep libgcc's unwinder. A thread of
 * its own refreshes the engine's tables every 2 ms, as the profiler's sampler thread does, after
 * one refresh in the constructor (so the modules a program starts with have tables before main).
 * At most UNWIND_DIFF_CONTEXTS contexts (default 4000) are recorded.
 *
 * Both lists start at the interrupted pc, then give each caller's return address. At exit the
 * pairs are compared step by step (frame i to frame i + 1) until the first difference, where
 * both reach a thread's first frame, or where either reached its depth limit. A step agrees when
 * both give the same caller, or both end there the same way. A pair that differs (the first 64)
 * has its registers and 64 KiB of its stack copied in the handler; at exit the engine walks that copy
 * again with every table compiled, and if it then gives libunwind's frames the pair met a module
 * loaded since the last refresh (late_tables, not compared). A pair where the engine stopped at
 * a frame of a module that has no FDE there (libgcc's _Unwind_Find_FDE) is not compared either:
 * the engine ends a stack there by design, and libunwind guesses on (no_unwind_info). FILE gets:
 *   contexts N / dropped N / late_tables N / no_unwind_info N / steps N / agreeing N / whole N
 *   (both reached the root alike) / signal_frames N (agreeing steps through a signal frame of
 *   the program's own handler)
 *   module NAME steps N agreeing N                            per module of the unwound frame
 *   disagreement KIND MODULE+0xOFFSET SYMBOL count N ends OURS/THEIRS ours … libunwind …
 *   ended no-unwind-info MODULE+0xOFFSET SYMBOL count N …     where the engine stopped so
 * grouped by kind and frame. KIND: differs (another caller), ours-ended (the engine stopped,
 * libunwind went on), libunwind-ended (the reverse), root-differs (both stopped there, one
 * calling it the root, the other a failure), start-differs (not the same interrupted pc). */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* The engine's walk, exported by libStackSamplerPreload.so. */
#include "stacksampler_engine_c.h"

enum { MAX_FRAMES = 128, MAX_MODULES = 256, MAX_GROUPS = 512, REFRESH_NS = 2000000 };
enum { COPY_SLOTS = 64, COPY_PAGES = 16, PAGE = 4096 };

/* How a walk ended, for either side. */
typedef enum { END_ROOT, END_FAILED, END_TRUNCATED } walk_end;

typedef struct {
    uintptr_t ours[MAX_FRAMES], theirs[MAX_FRAMES];
    uint16_t ours_count, theirs_count;
    uint8_t ours_end, theirs_end;
    int16_t copy; /* the stack_copy slot of a pair that differed, or -1 */
} context_record;

/* The interrupted registers and stack of a pair that differed, to walk again at exit with every
 * table compiled: a module loaded since the last refresh is not a disagreement. */
typedef struct {
    ucontext_t interrupted;
    uintptr_t low;
    size_t length;
    unsigned char bytes[COPY_PAGES * PAGE];
} stack_copy;

static __typeof__(unw_init_local2) *init_local2;
static __typeof__(unw_step) *step;
static __typeof__(unw_get_reg) *get_reg;

static context_record *records;
static unsigned capacity = 4000;
static _Atomic unsigned claimed, copies_claimed;
static stack_copy *copies;
static _Atomic int stopping, in_handler, started;
static __thread __attribute__((tls_model("initial-exec"))) ss_page_cache page;

/* libunwind's walk of `uc`, the interrupted context, into `frames`. */
static int walk_theirs(ucontext_t *uc, uintptr_t *frames, uint8_t *end) {
    unw_cursor_t cursor;
    int count = 0;
    *end = END_FAILED;
    if (init_local2(&cursor, uc, UNW_INIT_SIGNAL_FRAME) < 0) return 0;
    for (;;) {
        if (count == MAX_FRAMES) { *end = END_TRUNCATED; return count; }
        unw_word_t ip = 0;
        if (get_reg(&cursor, UNW_REG_IP, &ip) < 0) return count;
        if (ip == 0) { *end = END_ROOT; return count; }
        frames[count++] = ip;
        int status = step(&cursor);
        if (status == 0) { *end = END_ROOT; return count; }
        if (status < 0) return count;
    }
}

static void record(context_record *r, ucontext_t *uc) {
    const greg_t *gregs = uc->uc_mcontext.gregs;
    int outcome = SS_WALK_ENDED_EARLY;
    page.valid = 0;
    r->ours_count = (uint16_t)ss_unwind_context(uc, ss_read_memory_paged, &page, r->ours, MAX_FRAMES, &outcome);
    r->ours_end = outcome == SS_WALK_COMPLETE ? END_ROOT : outcome == SS_WALK_TRUNCATED ? END_TRUNCATED : END_FAILED;
    r->theirs_count = (uint16_t)walk_theirs(uc, r->theirs, &r->theirs_end);
    r->copy = -1;
    if (r->ours_count == r->theirs_count && r->ours_end == r->theirs_end &&
        memcmp(r->ours, r->theirs, r->ours_count * sizeof r->ours[0]) == 0)
        return;
    unsigned slot = atomic_fetch_add(&copies_claimed, 1);
    if (slot >= COPY_SLOTS) return;
    stack_copy *copy = &copies[slot];
    copy->interrupted = *uc;
    copy->low = (uintptr_t)gregs[REG_RSP] & ~(uintptr_t)(PAGE - 1);
    struct iovec local[COPY_PAGES], remote[COPY_PAGES];
    for (int i = 0; i < COPY_PAGES; i++) {
        local[i] = (struct iovec){copy->bytes + i * PAGE, PAGE};
        remote[i] = (struct iovec){(void *)(copy->low + i * PAGE), PAGE};
    }
    ssize_t read = process_vm_readv(getpid(), local, COPY_PAGES, remote, COPY_PAGES, 0);
    copy->length = read > 0 ? (size_t)read : 0;
    r->copy = (int16_t)slot;
}

static int read_copy(uintptr_t address, uintptr_t *value, void *context) {
    const stack_copy *copy = context;
    if (address < copy->low || address + sizeof *value > copy->low + copy->length) return -1;
    memcpy(value, copy->bytes + (address - copy->low), sizeof *value);
    return 0;
}

/* Whether the engine's walk of a copied pair, with the tables of every module loaded by now,
 * gives libunwind's frames. */
static int replay_agrees(const context_record *r) {
    if (r->copy < 0) return 0;
    stack_copy *copy = &copies[r->copy];
    uintptr_t frames[MAX_FRAMES];
    int outcome = SS_WALK_ENDED_EARLY;
    int count = ss_unwind_context(&copy->interrupted, read_copy, copy, frames, MAX_FRAMES, &outcome);
    uint8_t end = outcome == SS_WALK_COMPLETE ? END_ROOT : outcome == SS_WALK_TRUNCATED ? END_TRUNCATED : END_FAILED;
    return count == r->theirs_count && end == r->theirs_end && memcmp(frames, r->theirs, count * sizeof frames[0]) == 0;
}

static void on_sigprof(int signo, siginfo_t *info, void *uc) {
    (void)signo;
    (void)info;
    int saved_errno = errno;
    atomic_fetch_add(&in_handler, 1);
    if (!atomic_load(&stopping)) {
        unsigned slot = atomic_fetch_add(&claimed, 1);
        if (slot < capacity) record(&records[slot], uc);
    }
    atomic_fetch_sub(&in_handler, 1);
    errno = saved_errno;
}

static void *refresher(void *argument) {
    (void)argument;
    const struct timespec pause = {0, REFRESH_NS};
    while (!atomic_load(&stopping)) {
        ss_module_cache_refresh();
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static unsigned environment_number(const char *name, unsigned fallback) {
    const char *value = getenv(name);
    return value && *value ? (unsigned)strtoul(value, NULL, 10) : fallback;
}

__attribute__((constructor)) static void start(void) {
    if (!getenv("UNWIND_DIFF_OUTPUT")) return;
    void *libunwind = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!libunwind) { fprintf(stderr, "unwind_diff: %s\n", dlerror()); return; }
    init_local2 = (__typeof__(init_local2))dlsym(libunwind, "_ULx86_64_init_local2");
    step = (__typeof__(step))dlsym(libunwind, "_ULx86_64_step");
    get_reg = (__typeof__(get_reg))dlsym(libunwind, "_ULx86_64_get_reg");
    if (!init_local2 || !step || !get_reg) { fprintf(stderr, "unwind_diff: libunwind lacks unw_init_local2\n"); return; }
    capacity = environment_number("UNWIND_DIFF_CONTEXTS", capacity);
    records = mmap(NULL, capacity * sizeof *records, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    copies = mmap(NULL, COPY_SLOTS * sizeof *copies, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (records == MAP_FAILED || copies == MAP_FAILED) { perror("unwind_diff: mmap"); return; }
    ss_module_cache_refresh();
    /* libunwind's first walk initializes it: outside the handler. */
    ucontext_t here;
    getcontext(&here);
    uint8_t end;
    walk_theirs(&here, records[0].theirs, &end);

    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous); /* the refresher takes no signal */
    pthread_t thread;
    int created = pthread_create(&thread, NULL, refresher, NULL);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (created != 0) { fprintf(stderr, "unwind_diff: pthread_create failed\n"); return; }
    pthread_detach(thread);

    struct sigaction action = {.sa_sigaction = on_sigprof, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&action.sa_mask);
    sigaction(SIGPROF, &action, NULL);
    long period = (long)environment_number("UNWIND_DIFF_PERIOD_US", 1000);
    struct itimerval timer = {{period / 1000000, period % 1000000}, {period / 1000000, period % 1000000}};
    setitimer(ITIMER_PROF, &timer, NULL);
    atomic_store(&started, 1);
}

/* ---- The comparison, at exit (outside signal context) ---- */

typedef struct {
    uintptr_t base;
    char name[64];
    unsigned long steps, agreeing;
} module_tally;

typedef struct {
    const char *kind;
    uintptr_t pc; /* the frame whose step differs */
    unsigned long count;
    unsigned example;
} disagreement_group;

static module_tally modules[MAX_MODULES];
static int module_count;
static disagreement_group groups[MAX_GROUPS];
static int group_count;

/* The module holding `pc` (a return address's call when `caller`), and its load base. */
static module_tally *module_of(uintptr_t pc, int caller) {
    Dl_info info;
    if (!dladdr((void *)(pc - (caller ? 1 : 0)), &info) || !info.dli_fbase) return NULL;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    for (int i = 0; i < module_count; i++)
        if (modules[i].base == base) return &modules[i];
    if (module_count == MAX_MODULES) return NULL;
    module_tally *module = &modules[module_count++];
    const char *slash = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
    const char *name = slash ? slash + 1 : info.dli_fname && *info.dli_fname ? info.dli_fname : "main";
    *module = (module_tally){.base = base};
    snprintf(module->name, sizeof module->name, "%s", name);
    return module;
}

static void print_frame(FILE *out, uintptr_t pc, int caller) {
    module_tally *module = module_of(pc, caller);
    if (module) fprintf(out, " %s+0x%lx", module->name, (unsigned long)(pc - module->base));
    else fprintf(out, " 0x%lx", (unsigned long)pc);
}

static void note_disagreement(const char *kind, uintptr_t pc, unsigned example) {
    for (int i = 0; i < group_count; i++)
        if (groups[i].kind == kind && groups[i].pc == pc) { groups[i].count++; return; }
    if (group_count < MAX_GROUPS) groups[group_count++] = (disagreement_group){kind, pc, 1, example};
}

static unsigned long late_tables, through_signal_frames, without_unwind_info;

/* libgcc's lookup of the FDE that covers a pc (the program's .eh_frame), to tell a frame without
 * unwind info, where the engine ends a stack by design, from a wrong walk. */
typedef struct {
    void *tbase, *dbase, *func;
} fde_bases;
static const void *(*find_fde)(void *pc, fde_bases *bases);

static int has_fde(uintptr_t pc) {
    fde_bases bases;
    return !find_fde || find_fde((void *)pc, &bases) != NULL;
}
static uintptr_t signal_trampoline; /* the C library's sa_restorer: a return into it is a signal frame */

/* Compares one record; returns whether both walks reached the root alike. */
static int compare(const context_record *r, unsigned index, unsigned long *steps, unsigned long *agreeing) {
    if (replay_agrees(r)) {
        late_tables++;
        return 0;
    }
    if (r->ours_count == 0 || r->theirs_count == 0 || r->ours[0] != r->theirs[0]) {
        note_disagreement("start-differs", r->ours_count ? r->ours[0] : 0, index);
        return 0;
    }
    for (int i = 0;; i++) {
        int ours_next = i + 1 < r->ours_count, theirs_next = i + 1 < r->theirs_count;
        if ((!ours_next && r->ours_end == END_TRUNCATED) || (!theirs_next && r->theirs_end == END_TRUNCATED)) return 0;
        const char *kind = NULL;
        if (ours_next && theirs_next) kind = r->ours[i + 1] == r->theirs[i + 1] ? NULL : "differs";
        else if (ours_next) kind = "libunwind-ended";
        else if (theirs_next) kind = "ours-ended";
        else if (r->ours_end != r->theirs_end) kind = "root-differs";
        module_tally *module = module_of(r->ours[i], i > 0);
        if (kind && !ours_next && r->ours_end == END_FAILED && module && !has_fde(r->ours[i] - (i > 0))) {
            without_unwind_info++; /* a frame of a module outside its FDEs: not a walk to compare */
            note_disagreement("no-unwind-info", r->ours[i], index);
            return 0;
        }
        (*steps)++;
        if (module) module->steps++;
        if (kind) {
            note_disagreement(kind, r->ours[i], index);
            return 0;
        }
        (*agreeing)++;
        if (module) module->agreeing++;
        if (i > 0 && r->ours[i] == signal_trampoline && r->ours_end != END_TRUNCATED) through_signal_frames++;
        if (!ours_next) return r->ours_end == END_ROOT;
    }
}

static void print_walk(FILE *out, const char *label, const uintptr_t *frames, int count) {
    fprintf(out, " %s", label);
    for (int i = 0; i < count; i++) print_frame(out, frames[i], i > 0);
}

__attribute__((destructor)) static void finish(void) {
    if (!atomic_load(&started)) return;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    atomic_store(&stopping, 1);
    for (int i = 0; i < 100000 && atomic_load(&in_handler) > 0; i++) sched_yield();
    unsigned count = atomic_load(&claimed);
    unsigned recorded = count < capacity ? count : capacity;
    unsigned long steps = 0, agreeing = 0, whole = 0;
    ss_module_cache_refresh();
    void *libgcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    if (libgcc) find_fde = (__typeof__(find_fde))dlsym(libgcc, "_Unwind_Find_FDE");
    struct sigaction installed;
    if (sigaction(SIGPROF, NULL, &installed) == 0) signal_trampoline = (uintptr_t)installed.sa_restorer;
    for (unsigned i = 0; i < recorded; i++) whole += compare(&records[i], i, &steps, &agreeing);
    FILE *out = fopen(getenv("UNWIND_DIFF_OUTPUT"), "w");
    if (!out) { perror("unwind_diff: output"); return; }
    fprintf(out, "contexts %u\ndropped %u\nlate_tables %lu\nno_unwind_info %lu\nsteps %lu\nagreeing %lu\nwhole %lu\n"
                 "signal_frames %lu\n", recorded, count - recorded, late_tables, without_unwind_info, steps, agreeing, whole,
            through_signal_frames);
    for (int i = 0; i < module_count; i++)
        if (modules[i].steps)
            fprintf(out, "module %s steps %lu agreeing %lu\n", modules[i].name, modules[i].steps, modules[i].agreeing);
    for (int i = 0; i < group_count; i++) {
        const disagreement_group *group = &groups[i];
        const context_record *r = &records[group->example];
        Dl_info info;
        int found = group->pc && dladdr((void *)(group->pc - (group->pc == r->ours[0] ? 0 : 1)), &info) && info.dli_sname;
        fprintf(out, "%s %s", strcmp(group->kind, "no-unwind-info") == 0 ? "ended" : "disagreement", group->kind);
        print_frame(out, group->pc, group->pc != r->ours[0]);
        static const char *const ends[] = {"root", "failed", "truncated"};
        fprintf(out, " %s count %lu ends %s/%s", found ? info.dli_sname : "?", group->count, ends[r->ours_end], ends[r->theirs_end]);
        print_walk(out, "ours", r->ours, r->ours_count);
        print_walk(out, "libunwind", r->theirs, r->theirs_count);
        fprintf(out, "\n");
    }
    fclose(out);
}
