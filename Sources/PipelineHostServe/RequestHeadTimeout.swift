import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Closes a connection whose request head does not arrive in time: counted from the moment the
/// connection opens, or from the first byte of a later request, to the blank line that ends the
/// head. A client that sends nothing, or trickles a head byte by byte, holds a connection (and
/// a file descriptor) for at most this long. Idle time between requests is Hummingbird's idle
/// timeout. It sits before the HTTP decoder and reads bytes only to find the head's end.
final class RequestHeadTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// The head's last bytes so far, to find "\r\n\r\n" across reads.
    private var tail: UInt32 = 0
    private var inHead = true

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        for byte in buffer.readableBytesView {
            if !inHead {
                // The first byte after a head (a body, or the next request's head) starts a
                // new head watch; GET and HEAD have no body, and a POST body ends in time
                // through the same budget.
                inHead = true
                tail = 0
                arm(context)
            }
            tail = tail << 8 | UInt32(byte)
            if tail == 0x0D0A_0D0A {
                inHead = false
                timer?.cancel()
                timer = nil
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
    }
}

/// Hummingbird's HTTP/1 child channel with `RequestHeadTimeout` first in the pipeline, ahead of
/// the HTTP decoder, which only sees whole heads, and a `ConnectionWatch` of its own.
struct TimedHTTP1Channel: ServerChildChannel {
    let inner: HTTP1Channel
    let headTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(RequestHeadTimeout(timeout: headTimeout), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    /// Serves the connection's requests with its own `ConnectionWatch`, which cancels what is
    /// still running when the connection closes.
    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        let watch = ConnectionWatch(closingWith: value.channel)
        await ConnectionWatch.$current.withValue(watch) {
            await inner.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with a time limit for each request head, an idle timeout between requests, and
    /// `handlers` after the decoder.
    static func http1(headTimeout: TimeAmount, idleTimeout: TimeAmount,
                      handlers: @escaping @autoclosure @Sendable () -> [any RemovableChannelHandler]) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            TimedHTTP1Channel(inner: HTTP1Channel(responder: responder,
                                                  configuration: .init(additionalChannelHandlers: handlers(), idleTimeout: idleTimeout)),
                              headTimeout: headTimeout)
        }
    }
}
