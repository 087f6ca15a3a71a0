/* One-line messages on stderr, written without stdio (the program may be using it). */
#include "preload_internal.h"

#include <string.h>
#include <unistd.h>

static void write_all(const char *text) {
    size_t left = text ? strlen(text) : 0;
    while (left > 0) {
        ssize_t written = write(STDERR_FILENO, text, left);
        if (written <= 0) return;
        text += written;
        left -= (size_t)written;
    }
}

void ss_report(const char *first, const char *second, const char *third) {
    write_all("stacksampler: ");
    write_all(first);
    write_all(second);
    write_all(third);
    write_all("\n");
}
