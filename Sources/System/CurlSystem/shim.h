// Headers of the system library, found through pkg-config.
#include <curl/curl.h>
