#include <gelf.h>
#include <libelf.h>
