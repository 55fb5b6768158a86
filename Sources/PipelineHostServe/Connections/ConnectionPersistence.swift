import NIOCore
import NIOHTTP1

/// Closes a connection after an answer that ends it: the request was not keep-alive (HTTP/1.0
/// without `Connection: keep-alive`, or `Connection: close`), or the answer says
/// `Connection: close`. It sits between NIO's HTTP/1 decoder and Hummingbird's conversion to
/// HTTP types, where the request's version is still known, and judges keep-alive with NIO's own
/// `isKeepAlive`, the rule its encoder follows too. Hummingbird keeps a connection open until
/// the client closes it; an HTTP/1.0 client that waits for the close to end the body would hold
/// it for the idle timeout.
///
/// Pipelined requests are decoded before the first is answered, so each request's keep-alive is
/// kept in order and each answer takes its own: every request up to and including the one that
/// says `Connection: close` is answered, and the connection closes after that one's answer.
final class ConnectionPersistence: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Whether each request read and not yet answered lets the connection stay open, oldest first.
    private var requests = CircularBuffer<Bool>()
    /// Whether the request being answered lets the connection stay open.
    private var keepAlive = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) { requests.append(head.isKeepAlive) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            // The oldest request unanswered is the one this answers (an answer with no request,
            // such as a decoder's 400, keeps the connection unless it says close).
            keepAlive = requests.popFirst() ?? true
            if head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" }) {
                keepAlive = false
            }
            // The answer says what happens next; an HTTP/1.0 client reads to the close.
            if !keepAlive, !head.headers.contains(name: "connection") {
                head.headers.add(name: "Connection", value: "close")
                context.write(wrapOutboundOut(.head(head)), promise: promise)
            } else {
                context.write(data, promise: promise)
            }
        case .end where !keepAlive:
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
            context.writeAndFlush(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }
}
