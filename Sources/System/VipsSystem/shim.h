// Headers of the system library, found through pkg-config.
#include <vips/vips.h>
