import CoreMetrics
import NIOCore

/// Bounds what a client that does not read its answers can hold. It sits next to the socket and
/// watches the bytes written to it:
///
/// - **Send timeout.** While any write is unfinished (the kernel's send buffer is full because
///   the client reads nothing), the connection is reset once no write has finished for
///   `timeout`: nginx's `send_timeout`, the time between two successful writes, not for the
///   whole answer, so a slow but steady reader keeps its connection.
/// - **No reading ahead.** While an answer is unsent, no more bytes are read from the client, so
///   pipelined requests wait in the client's own socket buffer rather than in ours, and one
///   connection has at most one answer in progress.
///
/// Hummingbird's idle timeout does not run while a request is being answered, and the head
/// timeout only while a head is read: without this, a client that never reads held its
/// connection, and the answer's memory, for ever.
final class SlowReaderGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    private let timeout: TimeAmount
    private let closed: Counter?
    /// Writes handed to the socket and not yet finished.
    private var unfinished = 0
    /// A read the HTTP side asked for while an answer was unsent; issued once it is sent.
    private var readHeld = false
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, closedCounter: Counter? = nil) {
        self.timeout = timeout
        closed = closedCounter
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let done = promise ?? context.eventLoop.makePromise()
        unfinished += 1
        if timer == nil { arm(context) }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        done.futureResult.whenComplete { _ in
            let (guardian, context) = loopBound.value
            guardian.finished(context)
        }
        context.write(data, promise: done)
    }

    func read(context: ChannelHandlerContext) {
        if unfinished > 0 {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    /// A write finished: that is progress, so the clock starts again; with nothing left unsent,
    /// it stops and a held read goes ahead.
    private func finished(_ context: ChannelHandlerContext) {
        unfinished -= 1
        timer?.cancel()
        timer = nil
        guard context.channel.isActive else { return }
        if unfinished > 0 {
            arm(context)
        } else if readHeld {
            readHeld = false
            context.read()
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let closed = closed
        timer = context.eventLoop.scheduleTask(in: timeout) {
            closed?.increment()
            // A reset, not a close (nginx's reset_timedout_connection): a close would leave the
            // unsent answer, and the connection, in the kernel until the client read it all.
            let context = loopBound.value
            guard let socket = context.channel as? any SocketOptionProvider else { return context.close(promise: nil) }
            socket.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
                loopBound.value.close(promise: nil)
            }
        }
    }
}
