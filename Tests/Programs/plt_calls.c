/* Calls strtol, a shared library's function, through the program's procedure linkage table 60
 * million times from `parse_numbers` (about a second): some samples land in the PLT entry
 * itself, which the profile names `strtol@plt`. Prints the sum. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long parse_numbers(void) {
    long sum = 0;
    for (long i = 0; i < 60000000; i++) sum += strtol("7", NULL, 10);
    return sum;
}

int main(void) {
    printf("%ld\n", parse_numbers());
    return 0;
}
