// The soak's release executable links TestSupport where no Testing module is (the static Swift
// runtime, scripts/build-release): Swift Testing's traits are for test targets only.
#if canImport(Testing)
    import Testing

    /// The loopback origin as a fixture: `@Suite(.loopbackOrigin)` starts a `LoopbackServer` for
    /// each test case, before the suite's `init` runs, hands it over as `LoopbackServer.fixture`,
    /// and stops it when the test case ends. A suite keeps only what differs: its routes.
    public struct LoopbackOriginTrait: SuiteTrait, TestTrait, TestScoping {
        public var isRecursive: Bool { true }

        public func provideScope(
            for test: Test, testCase: Test.Case?,
            performing function: @Sendable () async throws -> Void
        ) async throws {
            // The suite as a whole, or a function's set of cases: each case gets its own server.
            guard testCase != nil else { return try await function() }
            let server = try LoopbackServer()
            defer { server.stop() }
            try await LoopbackServer.$current.withValue(server) { try await function() }
        }
    }

    extension Trait where Self == LoopbackOriginTrait {
        /// A fresh loopback origin for every test case (`LoopbackServer.fixture`).
        public static var loopbackOrigin: Self { LoopbackOriginTrait() }
    }

    extension LoopbackServer {
        @TaskLocal static var current: LoopbackServer?

        /// The origin `.loopbackOrigin` started for the running test case.
        public static var fixture: LoopbackServer {
            guard let current else {
                preconditionFailure("LoopbackServer.fixture outside a suite or test with .loopbackOrigin")
            }
            return current
        }
    }
#endif
