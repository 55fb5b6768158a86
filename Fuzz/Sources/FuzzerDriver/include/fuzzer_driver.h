// libFuzzer's entry point for programs that bring their own main(): SwiftPM links an executable
// target's main under another name (<Target>_main), so the fuzz targets define that and hand
// over to libFuzzer here.
#ifndef FUZZER_DRIVER_H
#define FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
