import Glibc
import PipelineHostServe

/// The keys serve checks and sign signs with, read one way for both.
enum SigningKeys {
    /// The signing keys from PIPELINEHOST_KEY and PIPELINEHOST_SALT; keys that do not read are
    /// a one-line error and exit 2, for serve and sign alike.
    static func fromEnvironment() throws -> URLSigner {
        do {
            return try URLSigner(
                keys: getenv("PIPELINEHOST_KEY").map { String(cString: $0) },
                salts: getenv("PIPELINEHOST_SALT").map { String(cString: $0) })
        } catch {
            throw usageError("\(error)")
        }
    }
}
