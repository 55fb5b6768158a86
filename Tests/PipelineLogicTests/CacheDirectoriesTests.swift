import PipelineProfiles
import PipelineTesting
import Testing

@testable import PipelineHost

/// Where a purge looks on disk: every directory a profile's cache stages keep entries in, read
/// from the profiles alone. No files, no pipeline.
@Suite struct CacheDirectoriesTests {
    static let lua = #"""
        profile "originals" { fetch {}, cache { dir = "orig" }, decode {}, encode {} }
        profile "variants" { fetch {}, decode {}, encode {}, cache { disk = true, dir = "/var/cache/v" } }
        profile "memory_only" { fetch {}, decode {}, encode {}, cache { memory = true } }
        """#

    func profiles() throws -> ProfileSet {
        try ProfileLoader(registry: FakeStages.registry(origin: FakeOrigin())).load(
            code: Array(Self.lua.utf8), name: "/etc/pipelinehost/site.lua")
    }

    @Test func eachDiskCacheStageNamesItsDirectoryAndRelativeOnesFollowTheProfileFile() throws {
        #expect(
            try profiles().cacheDirectories(settings: CacheSettings())
                == ["/etc/pipelinehost/orig", "/var/cache/v"])
    }

    @Test func aDirectoryGivenToThePipelineReplacesEveryProfilesOwn() throws {
        #expect(try profiles().cacheDirectories(settings: CacheSettings(directory: "/srv/cache")) == ["/srv/cache"])
    }

    @Test func withTheCacheOffThereIsNothingToClear() throws {
        #expect(try profiles().cacheDirectories(settings: CacheSettings(mode: .off)).isEmpty)
    }
}
