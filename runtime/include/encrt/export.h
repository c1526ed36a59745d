/* encrt's exported symbols. The library is built with hidden visibility: only declarations
 * marked ENCRT_API (the C API's encrt_* functions and the C++ API's encrt:: classes) are part of
 * libencrt.so's interface; everything else stays inside the library. */
#ifndef ENCRT_EXPORT_H_
#define ENCRT_EXPORT_H_

#if defined(_WIN32)
#define ENCRT_API
#else
#define ENCRT_API __attribute__((visibility("default")))
#endif

#endif /* ENCRT_EXPORT_H_ */
