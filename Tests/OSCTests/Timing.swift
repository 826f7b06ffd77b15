import Glibc

/// How much slower this build runs than a plain one: ThreadSanitizer (scripts/sanitize) slows
/// every memory access about tenfold, so time budgets in tests stretch by this factor.
let sanitizerSlowdown: Int = dlsym(nil, "__tsan_init") != nil ? 10 : 1
