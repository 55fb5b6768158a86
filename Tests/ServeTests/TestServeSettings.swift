import PipelineHost
import TestSupport

@testable import PipelineHostServe

extension ServeSettings {
    /// Settings for a serve a test starts in-process on a port of its own: serve's defaults, with
    /// the normal cache, except every time limit a busy machine can outlast: a request, a head,
    /// an idle connection and a send each get `ServeTestTimeouts`' seconds. With serve's 10 s head
    /// timeout, four router tests failed at once with "I/O on closed channel" in a busy
    /// `scripts/test` (2026-12-01), where the tests' tasks waited longer than that to send their
    /// heads. A test of one of these limits sets its own afterwards.
    static func forTest(signer: URLSigner, allowUnsigned: Bool = false) -> ServeSettings {
        ServeSettings(
            port: 0, signer: signer, allowUnsigned: allowUnsigned,
            requestTimeout: .seconds(ServeTestTimeouts.requestSeconds),
            headTimeout: .seconds(ServeTestTimeouts.connectionSeconds),
            idleTimeout: .seconds(ServeTestTimeouts.connectionSeconds),
            sendTimeout: .seconds(ServeTestTimeouts.connectionSeconds),
            pipeline: PipelineConfiguration(cache: CacheSettings(mode: .normal)))
    }
}
