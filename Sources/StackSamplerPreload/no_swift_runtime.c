/*
 * Keeps the Swift runtime out of this C-only library. SwiftPM links every product with the
 * Swift driver, which adds swiftrt.o (a constructor that registers the image's Swift metadata
 * through swift_addNewDSOImage) and -lswiftCore, so every process the library is preloaded
 * into would load libswiftCore.so and libstdc++ (about 2 ms). This library has no Swift code
 * and no metadata to register:
 * - these hidden definitions satisfy swiftrt.o inside this library only (not exported, so a
 *   Swift program's own registrations still reach its runtime);
 * - an entry in the section the driver reads link options from (.swift1_autolink_entries,
 *   gathered by swift-autolink-extract ahead of -lswiftCore on the link line; "e" keeps the
 *   section out of the output) asks the linker to record only the libraries used, so
 *   libswiftCore.so is dropped.
 */
#include <stdbool.h>

__asm__(".section .swift1_autolink_entries,\"e\"\n"
        ".asciz \"-Wl,--as-needed\"\n"
        ".previous\n");

__attribute__((visibility("hidden"))) void swift_addNewDSOImage(const void *image) { (void)image; }

__attribute__((visibility("hidden"))) bool _swift_backtrace_isThunkFunction(const char *name) {
    (void)name;
    return false;
}
