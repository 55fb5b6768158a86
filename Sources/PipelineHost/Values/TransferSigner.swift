/// Adds credentials to a source's location for one transfer.
///
/// A key stage (such as `subsonic_auth`) attaches a signer to the source instead of changing
/// its location, so the location and key stay stable and the secret exists only in the URL
/// the fetch stage hands to the network. `sign` runs once per transfer, right before it, so
/// every transfer gets a fresh salt; its result is never stored, logged or part of a key.
public protocol TransferSigner: Sendable {
    /// The location to transfer, with credentials added.
    func sign(_ location: String) throws(PipelineError) -> String
}
