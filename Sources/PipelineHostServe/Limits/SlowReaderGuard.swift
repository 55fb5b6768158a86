import CoreMetrics
import NIOCore

/// Bounds what a client that does not read its answers can hold. It sits next to the socket and
/// watches the bytes written to it:
///
/// - **Send timeout.** While any write is unfinished (the kernel's send buffer is full because
///   the client reads nothing), the connection is reset once no write has finished for
///   `timeout`: nginx's `send_timeout`, the time between two successful writes.
/// - **Minimum send rate.** A client that takes its answer a few KB at a time never trips the
///   send timeout, and enough of them hold every connection. While an answer is unsent, each
///   `rateWindow` (10 s) in which the client took some of it but less than `minimumRate` bytes a
///   second resets the connection, counted apart (`slowCounter`). The first window of an answer
///   is not judged: what it took went mostly into the kernel's send buffer, so a trickle is
///   caught at the end of the second.
/// - **No reading ahead.** While an answer is unsent, no more bytes are read from the client, so
///   pipelined requests wait in the client's own socket buffer rather than in ours, and one
///   connection has at most one answer in progress.
///
/// Hummingbird's idle timeout does not run while a request is being answered, and the head
/// timeout only while a head is read: without this, a client that never reads held its
/// connection, and the answer's memory, for ever.
final class SlowReaderGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    /// Next to the socket, everything written is bytes.
    typealias OutboundIn = IOData

    /// How long the send rate is measured over.
    static let rateWindow = TimeAmount.seconds(10)

    private let timeout: TimeAmount
    private let closed: Counter?
    /// Bytes a second a client must take while an answer is unsent; 0: no minimum.
    private let minimumRate: Int
    private let slow: Counter?
    /// Bytes whose writes finished (handed to the kernel) over the connection's life.
    private var written: UInt64 = 0
    /// The kernel's count of bytes the client acknowledged when the current rate window began.
    private var ackedAtStart: UInt64?
    /// Whether the current rate window is an answer's first, which fills the kernel's buffer.
    private var firstWindow = true
    private var rateTimer: Scheduled<Void>?
    /// Writes handed to the socket and not yet finished.
    private var unfinished = 0
    /// A read the HTTP side asked for while an answer was unsent; issued once it is sent.
    private var readHeld = false
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, closedCounter: Counter? = nil, minimumRate: Int = 0, slowCounter: Counter? = nil) {
        self.timeout = timeout
        closed = closedCounter
        self.minimumRate = minimumRate
        slow = slowCounter
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let done = promise ?? context.eventLoop.makePromise()
        let size = unwrapOutboundIn(data).readableBytes
        unfinished += 1
        if timer == nil { arm(context) }
        if rateTimer == nil, minimumRate > 0 {
            firstWindow = true
            startRateWindow(context)
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        done.futureResult.whenComplete { result in
            let (guardian, context) = loopBound.value
            if case .success = result { guardian.written += UInt64(size) }
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
        rateTimer?.cancel()
        rateTimer = nil
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
            return
        }
        // All sent for now. The rate window runs on: an answer goes out in pieces, each written
        // once the last is sent, so a moment with nothing unsent is not the answer's end.
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let closed = closed
        timer = context.eventLoop.scheduleTask(in: timeout) {
            closed?.increment()
            Self.reset(loopBound.value)
        }
    }

    private func startRateWindow(_ context: ChannelHandlerContext) {
        ackedAtStart = nil
        sampleAcked(context) { guardian, acked in guardian.ackedAtStart = acked }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        rateTimer = context.eventLoop.scheduleTask(in: Self.rateWindow) {
            let (guardian, context) = loopBound.value
            guardian.rateTimer = nil
            guard context.channel.isActive else { return }
            guardian.sampleAcked(context) { guardian, acked in guardian.rateWindowEnded(context, acked: acked) }
        }
    }

    /// Judges a window by what the client acknowledged in it (the kernel's count, so an answer
    /// that already sits whole in the kernel's send buffer is judged too). Some progress, but
    /// too little: a trickle. No progress at all is the send timeout's. Everything delivered:
    /// the rate is measured again from the next write.
    private func rateWindowEnded(_ context: ChannelHandlerContext, acked: UInt64?) {
        guard let acked, let start = ackedAtStart, unfinished > 0 || written > acked else { return }
        let least = UInt64(minimumRate) * UInt64(Self.rateWindow.nanoseconds) / 1_000_000_000
        let delivered = acked &- start
        if !firstWindow, delivered > 0, delivered < least {
            slow?.increment()
            return Self.reset(context)
        }
        firstWindow = false
        startRateWindow(context)
    }

    /// The bytes the client has acknowledged (Linux's `tcpi_bytes_acked`), read on the event
    /// loop and handed to `then` there; nil where the socket does not say.
    private func sampleAcked(_ context: ChannelHandlerContext, then: @escaping (SlowReaderGuard, UInt64?) -> Void) {
        guard let socket = context.channel as? any SocketOptionProvider else { return }
        let loopBound = NIOLoopBound((self, then), eventLoop: context.eventLoop)
        let info: EventLoopFuture<TCPInfoPrefix> = socket.unsafeGetSocketOption(level: .tcp, name: .tcp_info)
        info.hop(to: context.eventLoop).whenComplete { result in
            let (guardian, then) = loopBound.value
            then(guardian, try? result.get().bytesAcked)
        }
    }

    /// A reset, not a close (nginx's reset_timedout_connection): a close would leave the unsent
    /// answer, and the connection, in the kernel until the client read it all.
    private static func reset(_ context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        guard let socket = context.channel as? any SocketOptionProvider else { return context.close(promise: nil) }
        socket.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
            loopBound.value.close(promise: nil)
        }
    }
}

/// The start of Linux's `struct tcp_info` (linux/tcp.h) up to `tcpi_bytes_acked`, which glibc's
/// older copy of the struct lacks: the kernel fills as much as it is given.
struct TCPInfoPrefix: Sendable {
    private var words:
        (
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64,
            UInt64, UInt64, UInt64
        ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// `tcpi_bytes_acked`, at byte 120: after 8 one-byte fields, 24 four-byte ones and two
    /// eight-byte pacing rates.
    var bytesAcked: UInt64 { words.15 }
}
