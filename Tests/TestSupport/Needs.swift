// The soak's release executable links TestSupport where no Testing module is (the static Swift
// runtime, scripts/build-release): Swift Testing's traits are for test targets only.
#if canImport(Testing)
    import Foundation
    import Testing

    /// What a suite needs beyond the library itself. `scripts/test --fast` skips every suite that
    /// needs any of these, so a suite without `.needs(...)` must need none of them: it is what a
    /// developer runs while working, in seconds.
    public enum Need: String, Sendable, CaseIterable {
        /// Decodes, transforms or encodes images with libvips.
        case pixels
        /// Talks to a server on 127.0.0.1 (the loopback origin, serve), or goes through libcurl.
        case network
        /// Starts a redis-server.
        case redis
        /// Runs another process: the pipelinehost executable, curl, vips.
        case process
    }

    /// A suite's needs and its place in `scripts/test --fast` (PIPELINEHOST_FAST_TESTS=1), in one
    /// trait, so the two cannot disagree: in a fast run each of the suite's tests is cancelled
    /// before it starts (reported as skipped, with what it needs). This toolchain's `swift test
    /// --skip` takes test names, not tags, so the trait does the skipping.
    public struct Needs: SuiteTrait, TestTrait, TestScoping {
        /// What the suite needs.
        public let needs: Set<Need>

        public var isRecursive: Bool { true }

        public var comments: [Comment] {
            ["needs \(needs.map(\.rawValue).sorted().joined(separator: ", "))"]
        }

        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            if Self.isFastRun {
                try Test.cancel("scripts/test --fast: \(comments[0])")
            }
            try await function()
        }

        static let isFastRun = ProcessInfo.processInfo.environment["PIPELINEHOST_FAST_TESTS"] == "1"
    }

    extension Trait where Self == Needs {
        /// The suite needs libvips, the network, a redis-server or another process; it is skipped in
        /// `scripts/test --fast`.
        public static func needs(_ needs: Need...) -> Self { Needs(needs: Set(needs)) }
    }
#endif
