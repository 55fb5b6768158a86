import Hummingbird
import NIOCore

/// A request's context: the connection it came on, so a handler can tell when the client has
/// gone. (Hummingbird's `consumeWithCancellationOnInboundClose` also cancels, but closes every
/// connection after its response, which would cost keep-alive on every image.)
struct ServeContext: InitializableFromSource {
    let channel: any Channel

    init(source: ApplicationRequestContextSource) { channel = source.channel }
}
