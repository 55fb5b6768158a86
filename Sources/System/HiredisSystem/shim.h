// Headers of the system library, found through pkg-config.
#include <hiredis/hiredis.h>
