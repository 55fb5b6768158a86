import TestSupport

/// What each object-storage test starts from: moto's S3 server with a bucket, and a temporary
/// directory holding the suite's profile, which variants are written from.
struct S3Fixture {
    let s3: S3Server
    let directory: TemporaryDirectory
    let profile: String
    let profileFile: String

    init(bucket: String, profile: String) async throws {
        s3 = try await S3Server()
        try await s3.makeBucket(bucket)
        directory = try TemporaryDirectory()
        self.profile = profile
        profileFile = try directory.write("profile.lua", Array(profile.utf8))
    }

    /// The profile with `text` replaced by `replacement`, written as `name`.
    func variant(_ name: String, replacing text: String, with replacement: String) throws -> String {
        try directory.write(name, Array(profile.replacingOccurrences(of: text, with: replacement).utf8))
    }
}
