// Linked into every executable of a sanitized build (CMakeLists.txt), ahead of libasan.
//
// SystemC 2.3.4 tells ASan when it switches to a thread's stack, but passes no stack for the main
// coroutine and says nothing when it leaves a thread that has ended (sc_cor_pkg_qt::abort). ASan's
// idea of the current stack then goes wrong: the leak check at exit read an unmapped thread stack
// ("Tracer caught signal 11"), and an exception thrown after threads had run left stack poison
// behind (a false "stack-buffer-overflow" in ASan's own sigaltstack call). These two definitions
// win over libasan's, so SystemC's calls do nothing and ASan keeps to the main stack: right for
// everything on it, the clocked models, elaboration and the tests; an exception thrown inside an
// SC_THREAD then gets one warning and its stack is left as it is.
#include <sanitizer/common_interface_defs.h>

extern "C" {
void __sanitizer_start_switch_fiber(void**, const void*, size_t) {}
void __sanitizer_finish_switch_fiber(void*, const void**, size_t*) {}
}
