// The soak's release executable links TestSupport where no Testing module is (see Needs.swift).
#if canImport(Testing)
    import Testing

    extension Trait where Self == TimeLimitTrait {
        /// The time limit that turns a hang into a failure: 15 minutes, whatever the suite takes
        /// alone. Every suite runs at once, 640 tests on as many cooperative threads as cores, so a
        /// test takes as long as the whole run takes to get to each of its steps: on a busy two-core
        /// machine (2026-11-30) tests that take milliseconds alone ran past limits of 2 minutes.
        /// The longest tests phase seen, busy, took about 9 minutes.
        public static var hangLimit: Self { .timeLimit(.minutes(15)) }
    }
#endif
