import PipelineHost
import Tracing

/// A lease's trace: the leader writes its work span's `traceparent` into the lease's value
/// after its token ("token traceparent"); a node that waits reads it once and links its
/// `lease wait` span to it, so a trace shows whose work, on which node, a request waited for.
/// Untraced, the value is the token alone and no read is made.
enum LeaseTrace {
    /// " " and the active span's traceparent, or "" when untraced.
    static func suffix() -> String {
        guard let parent = PipelineTracing.propagationHeaders().first(where: { $0.name == "traceparent" }) else {
            return ""
        }
        return " " + parent.value
    }

    /// The leader's trace context in a lease's value, if it wrote one.
    static func leaderContext(inLeaseValue value: String) -> ServiceContext? {
        guard let space = value.firstIndex(of: " ") else { return nil }
        let parent = String(value[value.index(after: space)...])
        return PipelineTracing.context(fromPropagationHeaders: ["traceparent": parent])
    }

    /// A `lease wait` span, linked to the leader's span when its lease names one; nil untraced.
    static func waitSpan(linkedToLeaderOf keys: LeaseKeys, client: RedisClient) async -> (any Span)? {
        guard let tracer = PipelineTracing.tracer else { return nil }
        let span = tracer.startSpan(SpanNames.leaseWait, context: ServiceContext.current ?? .topLevel)
        if case .string(let bytes) = try? await client.command("GET", keys.lock),
            let leader = leaderContext(inLeaseValue: String(decoding: bytes, as: UTF8.self))
        {
            span.addLink(SpanLink(context: leader, attributes: [:]))
        }
        return span
    }

    /// The outcome as the span's `pipelinehost.lease.outcome` names it.
    static func name(of outcome: LeaseMachine.Outcome) -> String {
        switch outcome {
        case .lead: "lead"
        case .lookAgain: "entry"
        case .failed: "failed"
        case .alone: "alone"
        }
    }
}
