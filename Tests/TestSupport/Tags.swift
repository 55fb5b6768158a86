import Foundation
import Testing

/// What a suite needs beyond the library itself. `scripts/test --fast` skips every suite with
/// one of these tags, so an untagged suite must need none of them: it is what a developer runs
/// while working, in seconds.
extension Tag {
    /// Decodes, transforms or encodes images with libvips.
    @Tag public static var pixels: Self
    /// Talks to a server on 127.0.0.1 (the loopback origin, serve), or goes through libcurl.
    @Tag public static var network: Self
    /// Starts a redis-server.
    @Tag public static var redis: Self
    /// Runs another process: the pipelinehost executable, curl, vips.
    @Tag public static var process: Self
}

extension Trait where Self == ConditionTrait {
    /// Off in `scripts/test --fast` (PIPELINEHOST_FAST_TESTS=1), for a suite whose tags say it
    /// needs libvips, the network, redis-server or another process. (This toolchain's
    /// `swift test --skip` takes test names, not tags, so the condition does the skipping.)
    public static var notInFastRun: Self {
        .disabled(
            if: ProcessInfo.processInfo.environment["PIPELINEHOST_FAST_TESTS"] == "1",
            "scripts/test --fast runs only what needs no libvips, network, redis-server or subprocess")
    }
}
