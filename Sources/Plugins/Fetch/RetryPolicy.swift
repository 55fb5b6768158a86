import CCurl
import Glibc
import PipelineHost
import PipelineHostTransfer

/// When and how long to wait before fetching again. Failures that may pass (a refused or dropped
/// connection, 5xx, 429) are retried with exponential backoff and jitter; everything else, 4xx
/// above all, fails at once. Timeouts are not retried: each attempt would wait the whole timeout
/// again. Nothing is remembered between requests, so a URL that failed is asked again next time.
struct RetryPolicy: Sendable {
    let retries: Int
    let delay: Double
    let maxDelay: Double

    /// curl codes for connections that could not be made or broke off.
    static let retryableTransport: Set<Int> = [
        CURLE_COULDNT_CONNECT, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR,
    ].reduce(into: []) { $0.insert(Int($1.rawValue)) }

    func run<T: Sendable>(context: StageContext, _ attempt: () async throws -> T) async throws -> T {
        var failures = 0
        while true {
            do {
                return try await attempt()
            } catch var error as PipelineError {
                guard Self.isRetryable(error) else { throw error }
                failures += 1
                guard failures <= retries else {
                    if failures > 1 { error.reason += " (after \(failures) attempts)" }
                    throw error
                }
                if let after = error.retryAfter, after > maxDelay {
                    error.reason += " (Retry-After \(Int(after)) s is longer than retry_max_delay \(Int(maxDelay)) s)"
                    throw error
                }
                let wait = self.wait(before: failures, retryAfter: error.retryAfter)
                context.logger.debug(
                    "retrying",
                    metadata: [
                        "source": "\(context.source)", "cause": "\(error.reason)", "wait_s": "\(wait)",
                    ])
                do {
                    try await Task.sleep(for: .seconds(wait))
                } catch {
                    throw PipelineError.cancelled()
                }
            }
        }
    }

    /// Full-range jitter over the upper half: `delay * 2^(n-1)`, capped, times 0.5...1, so
    /// clients that failed together do not come back together. A Retry-After is a minimum.
    func wait(before retry: Int, retryAfter: Double?) -> Double {
        let backoff = min(maxDelay, delay * pow(2, Double(retry - 1))) * Double.random(in: 0.5...1)
        return max(backoff, retryAfter ?? 0)
    }

    static func isRetryable(_ error: PipelineError) -> Bool {
        switch error.kind {
        case .httpStatus:
            guard let status = error.httpStatus else { return false }
            return status == 429 || (500...599).contains(status)
        case .transport:
            return error.transportCode.map(retryableTransport.contains) ?? false
        default:
            return false
        }
    }
}
