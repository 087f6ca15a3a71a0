/* crash: what the profiler must leave alone in a C program. argv[1]:
 *   maps  prints `module NAME` for every shared object mapped into the process, exits 0;
 *   environment  prints `environment NAME=VALUE` for each variable, in order, exits 0;
 *   null  prints `caught MASK` (the SigCgt mask of /proc/self/status, hex) and
 *         `disposition SIGNAL default|ignored|handler` for each crash signal as sigaction
 *         reports it, then writes through a null pointer: dies of SIGSEGV.
 * Build: gcc -O2 -o crash crash.c */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int print_modules(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return 2;
    char line[4096];
    while (fgets(line, sizeof line, maps)) {
        char *name = strrchr(line, '/');
        if (name && strstr(name, ".so")) printf("module %s", name + 1);
    }
    fclose(maps);
    return 0;
}

static int print_environment(void) {
    extern char **environ;
    for (char **variable = environ; variable && *variable; variable++) printf("environment %s\n", *variable);
    return 0;
}

static void print_caught_mask(void) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "SigCgt:", 7) == 0) printf("caught %s", line + 8);
    if (status) fclose(status);
}

static int crash(void) {
    static const struct { int signo; const char *name; } crash_signals[] = {
        {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"}, {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
        {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"}, {SIGSEGV, "SIGSEGV"},
    };
    print_caught_mask();
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
        struct sigaction action;
        sigaction(crash_signals[i].signo, NULL, &action);
        const char *kind = action.sa_handler == SIG_DFL ? "default" : action.sa_handler == SIG_IGN ? "ignored" : "handler";
        printf("disposition %s %s\n", crash_signals[i].name, kind);
    }
    fflush(stdout);
    volatile uintptr_t nowhere = 0;
    *(volatile int *)nowhere = 1;
    return 3;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "maps") == 0) return print_modules();
    if (argc > 1 && strcmp(argv[1], "environment") == 0) return print_environment();
    if (argc > 1 && strcmp(argv[1], "null") == 0) return crash();
    fprintf(stderr, "usage: crash maps|environment|null\n");
    return 2;
}
