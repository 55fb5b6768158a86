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
