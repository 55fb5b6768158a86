import Hummingbird
import NIOCore

/// A request's context: the connection it came on, so a handler can tell when the client has
/// gone (Hummingbird's `consumeWithCancellationOnInboundClose` also cancels, but closes every
/// connection after its response, which would cost keep-alive on every image), and what the
/// access log is to say of it.
struct ServeContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    let access = AccessNote()

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}
