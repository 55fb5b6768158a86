import FetchPlugin
import FuzzerDriver
import KeyNormalizePlugin
import PipelineHost
import PipelineProfiles
import VipsPlugin

// The profile loader under libFuzzer: every input is a profile file. Loading may fail only with
// a ProfileError (the loader's typed throw); a crash, a hang past libFuzzer's timeout or a
// sanitizer report is a finding. The limits are tighter than the defaults so loops end quickly.
private let loader: ProfileLoader = {
    do {
        let registry = try StageRegistry(plugins: [
            CachePlugin.self, FetchPlugin.self, KeyNormalizePlugin.self, VipsPlugin.self,
        ])
        return ProfileLoader(
            registry: registry, limits: ProfileLimits(memoryBytes: 8 << 20, instructions: 1_000_000, seconds: 0.25))
    } catch {
        fatalError("the registry does not build: \(error)")
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProfile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? loader.load(code: Array(UnsafeBufferPointer(start: data, count: size)), name: "fuzz.lua")
    return 0
}

/// SwiftPM links an executable's main() as `FuzzProfile_main`; this one runs libFuzzer.
@_cdecl("FuzzProfile_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzProfile(data!, size) }
}
