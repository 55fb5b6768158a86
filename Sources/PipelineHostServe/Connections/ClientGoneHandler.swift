import NIOCore

/// Closes a connection as soon as its client has closed its side. Hummingbird allows half-closed
/// connections, so a client that gives up (a timeout, a closed tab) leaves the channel open and
/// its request running; closing it fires the channel's closeFuture, which cancels the request
/// (`ImageRoute`). The price: a client that half-closes on purpose gets no answer, which no
/// HTTP/1.1 client we know of does.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
