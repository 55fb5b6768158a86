import PipelineHost
import PipelineHostObjectStore
import PipelineHostTransfer
import Testing

/// What the AWS environment, an s3:// source and S3's error document are read as: values,
/// no I/O.
@Suite struct S3ConfigurationTests {
    let credentials = ["AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t/+="]

    @Test func theStandardVariablesMakeAConfiguration() throws {
        var environment = credentials
        environment["AWS_SESSION_TOKEN"] = "token"
        environment["AWS_DEFAULT_REGION"] = "eu-west-1"
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/"
        let configuration = try S3Configuration.from(environment: environment)
        #expect(configuration.region == "eu-west-1")
        #expect(configuration.sessionToken == "token")
        #expect(configuration.endpoint == "http://127.0.0.1:9000")
        #expect(configuration.url(bucket: "photos", key: "a/b.jpg") == "http://127.0.0.1:9000/photos/a/b.jpg")
    }

    @Test func awsRegionWinsOverTheDefaultAndTheS3EndpointOverTheGeneralOne() throws {
        var environment = credentials
        environment["AWS_REGION"] = "us-west-2"
        environment["AWS_DEFAULT_REGION"] = "eu-west-1"
        environment["AWS_ENDPOINT_URL"] = "http://general:1"
        environment["AWS_ENDPOINT_URL_S3"] = "https://s3.example.net"
        let configuration = try S3Configuration.from(environment: environment)
        #expect(configuration.region == "us-west-2")
        #expect(configuration.url(bucket: "b-1", key: "k") == "https://s3.example.net/b-1/k")
    }

    @Test func withoutAnEndpointAWSIsAddressedVirtualHosted() throws {
        let configuration = try S3Configuration.from(environment: credentials)
        #expect(configuration.region == "us-east-1")
        #expect(configuration.url(bucket: "photos", key: "k.jpg") == "https://photos.s3.us-east-1.amazonaws.com/k.jpg")
    }

    @Test(arguments: [
        ([:], "no S3 credentials"),
        (["AWS_ACCESS_KEY_ID": "a:b", "AWS_SECRET_ACCESS_KEY": "x"], "AWS_ACCESS_KEY_ID"),
        (["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "x\ny"], "AWS_SECRET_ACCESS_KEY"),
        (["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "x", "AWS_REGION": "EU WEST"], "AWS_REGION"),
        (["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "x", "AWS_ENDPOINT_URL": "ftp://h"], "AWS_ENDPOINT_URL"),
        (
            ["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "x", "AWS_ENDPOINT_URL_S3": "http://u:p@h"],
            "AWS_ENDPOINT_URL_S3"
        ),
        (
            ["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "x", "AWS_ENDPOINT_URL": "http://h/path"],
            "AWS_ENDPOINT_URL"
        ),
    ])
    func aBadEnvironmentIsNamedWithoutItsSecret(environment: [String: String], named: String) {
        #expect {
            try S3Configuration.from(environment: environment)
        } throws: { error in
            let text = "\(error)"
            return text.contains(named) && !text.contains("x\ny") && !text.contains("u:p")
        }
    }

    @Test func anS3SourceIsABucketAndAKey() throws {
        let source = try S3Source("s3://photos/albums/a%20b.jpg")
        #expect(source.bucket == "photos")
        #expect(source.key == "albums/a%20b.jpg")
        for bad in [
            "s3://Photos/x", "s3://ab/x", "s3://photos", "s3://photos/", "s3://user@photos/x", "s3://photos/a b",
            "s3://photos:443/x", "s3://photos/../other/x.jpg", "s3://photos/a/./b", "s3://photos/%2E%2e/other/x",
            "s3://photos/..",
        ] {
            #expect(throws: PipelineError.self, "\(bad)") { try S3Source(bad) }
        }
    }

    @Test func s3sErrorDocumentGivesItsCodeAndMessage() throws {
        let body = Array(
            "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key &amp; more</Message></Error>".utf8)
        let parsed = try #require(S3ErrorBody(body))
        #expect(parsed.code == "NoSuchKey")
        #expect(parsed.message == "The key & more")
        #expect(S3ErrorBody(Array("<html>busy</html>".utf8)) == nil)
        #expect(S3ErrorBody.credentialCodes.contains("SignatureDoesNotMatch"))
        #expect(FetchFailure(httpStatus: 403, s3Code: "SignatureDoesNotMatch").isLocalConfiguration)
        #expect(!FetchFailure(httpStatus: 404, s3Code: "NoSuchKey").isLocalConfiguration)
    }

    @Test func anObjectStoreIsABucketAndAPrefix() throws {
        let location = try #require(ObjectStoreLocation("s3://thumbs/v1/cache/"))
        #expect(location.bucket == "thumbs")
        #expect(location.prefix == "v1/cache")
        #expect(ObjectStoreLocation("s3://thumbs")?.prefix == "")
        let bad = ["https://thumbs/x", "s3://Thumbs", "s3://thumbs/a b", "s3://thumbs/a//b", "s3://thumbs/a/../b"]
        for bad in bad {
            #expect(ObjectStoreLocation(bad) == nil, "\(bad)")
        }
    }

    @Test func aPurgeMatchesEveryStepOfItsSourceAndNoOther() {
        let purge = SourcePurge(sourceKeys: ["https://a.test/x.jpg"])
        let key = StageKey(source: "https://a.test/x.jpg")
        #expect(purge.matches(key))
        #expect(SourcePurge(digests: purge.digests).matches(key))
        #expect(!purge.matches(StageKey(source: "https://a.test/x.jpg?v=2")))
    }
}

extension S3ConfigurationTests {
    @Test func aConfigurationPrintsNoSecretHoweverItIsPrinted() throws {
        var environment = credentials
        environment["AWS_SESSION_TOKEN"] = "session-token-value"
        let configuration = try S3Configuration.from(environment: environment)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in ["\(configuration)", String(reflecting: configuration), dumped] {
            #expect(text.contains("AKIAEXAMPLE"), "\(text)")
            #expect(!text.contains("s3cr3t") && !text.contains("session-token-value"), "\(text)")
        }
    }
}
