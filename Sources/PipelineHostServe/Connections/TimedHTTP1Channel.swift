import CoreMetrics
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 child channel with the limits a client must keep: `RequestHeadTimeout`
/// and `SlowReaderGuard` next to the socket (ahead of the HTTP decoder, which only sees whole
/// heads), `ConnectionPersistence` after the decoder, and a `ConnectionWatch` of its own.
struct TimedHTTP1Channel: ServerChildChannel {
    let inner: HTTP1Channel
    let headTimeout: TimeAmount
    let sendTimeout: TimeAmount
    let sendTimeouts: Counter?
    let minimumSendRate: Int
    let slowSends: Counter?
    let slots: ConnectionSlots?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(RequestHeadTimeout(timeout: headTimeout), position: .first)
            try channel.pipeline.syncOperations.addHandler(
                SlowReaderGuard(
                    timeout: sendTimeout, closedCounter: sendTimeouts, minimumRate: minimumSendRate,
                    slowCounter: slowSends),
                position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(ConnectionPersistence(), position: .after(decoder))
            return value
        }
    }

    /// Serves the connection's requests with its own `ConnectionWatch`, which cancels what is
    /// still running when the connection closes.
    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        let watch = ConnectionWatch(closingWith: value.channel, isSpare: slots?.isOverLimit ?? false)
        await ConnectionWatch.$current.withValue(watch) {
            await inner.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with a time limit for each request head, an idle timeout between requests, a send
    /// timeout while an answer is unsent (`sendTimeouts` counts the connections it closed), a
    /// minimum send rate (`slowSends` counts those it reset), and
    /// `handlers` after the decoder.
    static func http1(
        headTimeout: TimeAmount, idleTimeout: TimeAmount, sendTimeout: TimeAmount, sendTimeouts: Counter? = nil,
        minimumSendRate: Int = 0, slowSends: Counter? = nil, slots: ConnectionSlots? = nil,
        handlers: @escaping @autoclosure @Sendable () -> [any RemovableChannelHandler]
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            TimedHTTP1Channel(
                inner: HTTP1Channel(
                    responder: responder,
                    configuration: .init(additionalChannelHandlers: handlers(), idleTimeout: idleTimeout)),
                headTimeout: headTimeout, sendTimeout: sendTimeout, sendTimeouts: sendTimeouts,
                minimumSendRate: minimumSendRate, slowSends: slowSends, slots: slots)
        }
    }
}
