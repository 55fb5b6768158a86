import Foundation
import TestSupport
import Testing

/// deploy/kubernetes.yaml, as far as it can be checked without a cluster: valid against
/// Kubernetes' schemas, its profile one that pipelinehost accepts, and its settings the image's.
@Suite(.needs(.process))
struct KubernetesManifestTests {
    static let manifest = Fixtures.path("deploy/kubernetes.yaml")
    static let python = Fixtures.path(".build/reference-venv/bin/python")

    /// The manifest's documents as JSON, read by PyYAML (kubernetes-validate's own reader).
    func documents() async throws -> [[String: Any]] {
        let read = try await SpawnedProcess.run(
            Self.python,
            [
                "-c", "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
                Self.manifest,
            ])
        #expect(read.status == 0, "\(read.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [[String: Any]])
    }

    @Test("every resource is valid against Kubernetes' schemas, strictly (no unknown fields)")
    func valid() async throws {
        let validate = try await SpawnedProcess.run(
            Fixtures.path(".build/reference-venv/bin/kubernetes-validate"), ["--strict", Self.manifest])
        #expect(validate.status == 0, "\(validate.output)")
        #expect(validate.output.components(separatedBy: " passed for resource ").count == 4, "\(validate.output)")
    }

    @Test("the ConfigMap's profile is one `pipelinehost check` accepts")
    func profileChecks() async throws {
        let configMap = try #require(try await documents().first { $0["kind"] as? String == "ConfigMap" })
        let profile = try #require((configMap["data"] as? [String: String])?["profiles.lua"])
        let directory = try TemporaryDirectory()
        let file = try directory.write("profiles.lua", Array(profile.utf8))
        let check = try await CLIProcess.run(["check", file])
        #expect(check.status == 0, "\(check.output)")
    }

    @Test("the Deployment runs the image's user, port, profile path and cache path")
    func matchesImage() throws {
        let text = try String(contentsOfFile: Self.manifest, encoding: .utf8)
        let containerfile = try String(contentsOfFile: Fixtures.path("deploy/Containerfile"), encoding: .utf8)
        #expect(containerfile.contains("USER 10001:10001") && text.contains("runAsUser: 10001"))
        #expect(containerfile.contains("PIPELINEHOST_PORT=8080") && text.contains("containerPort: 8080"))
        #expect(containerfile.contains(#"CMD ["serve", "/etc/pipelinehost/profiles.lua"]"#))
        #expect(text.contains(#"args: ["serve", "/etc/pipelinehost/profiles.lua"]"#))
        #expect(text.contains("mountPath: /etc/pipelinehost,") && text.contains("mountPath: /var/cache/pipelinehost }"))
        #expect(containerfile.contains("PIPELINEHOST_CACHE_DIR=/var/cache/pipelinehost"))
    }
}
