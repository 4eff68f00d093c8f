// Compiled at configure time (StrideSDKFingerprint.cmake) with the flags a plugin gets: the
// build fingerprint the host compares at load, as a string in the object file.
#include <stride/abi.hpp>

extern const char stride_fingerprint_probe[];
const char stride_fingerprint_probe[] = "STRIDE_FINGERPRINT_PROBE=" STRIDE_FINGERPRINT;
