#include <dwarf.h>
#include <elfutils/libdw.h>
