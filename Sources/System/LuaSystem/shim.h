// Headers of the system library, found through pkg-config.
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
