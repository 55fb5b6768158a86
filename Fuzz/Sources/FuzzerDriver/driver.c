// Intentionally empty: LLVMFuzzerRunDriver comes from libFuzzer (-sanitize=fuzzer).
#include "fuzzer_driver.h"
