/*
 * A library loaded privately the first time it is needed: dlopen with RTLD_NOW | RTLD_LOCAL, so
 * that neither it nor what it brings in joins the program's global scope (where its symbols could
 * take the place of the program's own), then its functions looked up into a table of function
 * pointers. The outcome, the table or why there is none, is kept: later calls give the same answer.
 *
 * A table is a struct with one member per function, each with the function's own name and type,
 * generated with its list of names from one X-macro list:
 *
 *     #define SS_LIBFOO_FUNCTIONS(F) F(foo_open) F(foo_close)
 *     typedef struct { SS_LIBFOO_FUNCTIONS(SS_PRIVATE_LIBRARY_MEMBER) } ss_libfoo;
 *
 *     static ss_libfoo libfoo_table;
 *     static ss_private_library libfoo = SS_PRIVATE_LIBRARY("libfoo.so.1", "libfoo1", SS_LIBFOO_FUNCTIONS,
 *                                                           libfoo_table, NULL);
 *     const ss_libfoo *ss_libfoo_load(void) { return ss_private_library_load(&libfoo); }
 *
 * Not exported: each image that links a loader keeps its own.
 */
#ifndef STACKSAMPLER_PRIVATE_LIBRARY_H
#define STACKSAMPLER_PRIVATE_LIBRARY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/** One member of a table: a pointer with the name and type of the library's function `name`. */
#define SS_PRIVATE_LIBRARY_MEMBER(name) __typeof__(name) *_Nonnull name;
/** One entry of a table's list of names. */
#define SS_PRIVATE_LIBRARY_NAME(name) #name,

/** A library, its table and the outcome of loading it; made with SS_PRIVATE_LIBRARY. */
typedef struct {
    /** The file dlopen is given ("libcurl.so.4"). */
    const char *_Nonnull file;
    /** The Debian package that installs it, named when it cannot be loaded. */
    const char *_Nonnull package;
    /** The functions' names, in the table's order; `count` of them. */
    const char *_Nonnull const *_Nonnull names;
    size_t count;
    /** The table: `count` function pointers. */
    void *_Nonnull table;
    /** Run once the table is filled (NULL: nothing to run); returns NULL, or why the library
     *  cannot serve. */
    const char *_Nullable (*_Nullable initialize)(const void *_Nonnull table);
    pthread_mutex_t lock;
    /** Set (release) once `loaded` and `error` say the outcome. */
    atomic_int settled;
    int loaded;
    char error[512];
} ss_private_library;

/** A library `file` (from Debian's `package`) whose functions, FUNCTIONS(SS_PRIVATE_LIBRARY_NAME),
 *  go into `table` (a struct of SS_PRIVATE_LIBRARY_MEMBER from the same list); `initialize` as in
 *  ss_private_library. A static initializer. */
#define SS_PRIVATE_LIBRARY(file_, package_, FUNCTIONS, table_, initialize_)                               \
    {                                                                                                   \
        .file = (file_), .package = (package_), .names = (const char *const[]){FUNCTIONS(SS_PRIVATE_LIBRARY_NAME)}, \
        .count = sizeof(table_) / sizeof(void *), .table = &(table_), .initialize = (initialize_),       \
        .lock = PTHREAD_MUTEX_INITIALIZER                                                               \
    }

#define SS_PRIVATE_LIBRARY_HIDDEN __attribute__((visibility("hidden")))

/** The library's table, loaded on the first call; NULL if the library, one of its functions or its
 *  initialization is missing (ss_private_library_error says which). Safe from any thread. */
SS_PRIVATE_LIBRARY_HIDDEN const void *_Nullable ss_private_library_load(ss_private_library *_Nonnull library);

/** Why ss_private_library_load() returned NULL, naming the library and what to do, or "" when it
 *  did not. Loads the library if no call did yet. */
SS_PRIVATE_LIBRARY_HIDDEN const char *_Nonnull ss_private_library_error(ss_private_library *_Nonnull library);

#endif
