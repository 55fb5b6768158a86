import Testing

@testable import PipelineHost

/// The memory budget's rules on their own: a waiter is a plain number here, where the
/// budget's is a continuation.
@Suite("MemoryLedger: bodies within their share, work by priority, and progress")
struct MemoryLedgerTests {
    typealias Ledger = MemoryLedger<Int>
    static let mb = 1 << 20

    @Test("work that fits goes at once; past the budget it waits until a draw comes back")
    func workWaits() {
        var ledger = Ledger(capacity: 100 * Self.mb)
        let result1 = ledger.tryDraw(.work, 60 * Self.mb)
        #expect(result1)
        let result2 = ledger.tryDraw(.work, 60 * Self.mb)
        #expect(!result2)
        ledger.enqueue(id: 1, kind: .work, bytes: 60 * Self.mb, priority: .normal, waiter: 1)
        let result3 = ledger.grants()
        #expect(result3.isEmpty)
        let granted = ledger.release(.work, 60 * Self.mb)
        #expect(granted.map(\.waiter) == [1])
        #expect(ledger.drawn == 60 * Self.mb)
    }

    @Test("waiting work goes highest priority first, then first come first served")
    func order() {
        var ledger = Ledger(capacity: 100 * Self.mb)
        let result4 = ledger.tryDraw(.work, 90 * Self.mb)
        #expect(result4)
        ledger.enqueue(id: 1, kind: .work, bytes: 50 * Self.mb, priority: .low, waiter: 1)
        ledger.enqueue(id: 2, kind: .work, bytes: 50 * Self.mb, priority: .normal, waiter: 2)
        ledger.enqueue(id: 3, kind: .work, bytes: 50 * Self.mb, priority: .high, waiter: 3)
        ledger.enqueue(id: 4, kind: .work, bytes: 50 * Self.mb, priority: .normal, waiter: 4)
        let result5 = ledger.release(.work, 90 * Self.mb)
        #expect(result5.map(\.waiter) == [3, 2])
        let result6 = ledger.release(.work, 50 * Self.mb)
        #expect(result6.map(\.waiter) == [4])
        let result7 = ledger.release(.work, 50 * Self.mb)
        #expect(result7.map(\.waiter) == [1])
    }

    @Test("a newcomer does not pass work that waits, even when it would fit")
    func noJumping() {
        var ledger = Ledger(capacity: 100 * Self.mb)
        let result8 = ledger.tryDraw(.work, 50 * Self.mb)
        #expect(result8)
        ledger.enqueue(id: 1, kind: .work, bytes: 80 * Self.mb, priority: .normal, waiter: 1)
        let result9 = ledger.tryDraw(.work, 10 * Self.mb)
        #expect(!result9)
    }

    @Test("bodies draw up to a quarter of the budget; one always may when none is held")
    func bodies() {
        var ledger = Ledger(capacity: 100 * Self.mb)
        let result10 = ledger.tryDraw(.input, 20 * Self.mb)
        #expect(result10)
        let result11 = ledger.tryDraw(.input, 10 * Self.mb)
        #expect(!result11)
        ledger.enqueue(id: 1, kind: .input, bytes: 10 * Self.mb, priority: .normal, waiter: 1)
        // The body came in smaller than its estimate: room for the one waiting.
        let result12 = ledger.resizeInput(from: 20 * Self.mb, to: 5 * Self.mb)
        #expect(result12.map(\.waiter) == [1])
        #expect(ledger.drawn == 15 * Self.mb)
        var empty = Ledger(capacity: 100 * Self.mb)
        let result13 = empty.tryDraw(.input, 40 * Self.mb)
        #expect(result13)
    }

    @Test("when no work holds a draw, the next work goes even past the budget: bodies would never free it")
    func progress() {
        var ledger = Ledger(capacity: 100 * Self.mb)
        let result14 = ledger.tryDraw(.input, 25 * Self.mb)
        #expect(result14)
        let result15 = ledger.tryDraw(.work, 90 * Self.mb)
        #expect(result15 == true)
        #expect(ledger.drawn == 115 * Self.mb)
        ledger.enqueue(id: 1, kind: .work, bytes: 90 * Self.mb, priority: .normal, waiter: 1)
        let result16 = ledger.grants()
        #expect(result16.isEmpty)
        let result17 = ledger.release(.work, 90 * Self.mb)
        #expect(result17.map(\.waiter) == [1])
        #expect(ledger.workHeld == 1)
    }

    @Test("work larger than the whole budget can never fit; a waiter removed is gone")
    func refusalsAndRemoval() {
        var ledger = Ledger(capacity: 100 * Self.mb)
        #expect(!ledger.canFit(101 * Self.mb))
        #expect(ledger.canFit(100 * Self.mb))
        let result18 = ledger.tryDraw(.work, 100 * Self.mb)
        #expect(result18)
        ledger.enqueue(id: 7, kind: .work, bytes: 10 * Self.mb, priority: .normal, waiter: 7)
        let result19 = ledger.remove(id: 7)
        #expect(result19?.waiter == 7)
        let result20 = ledger.remove(id: 7)
        #expect(result20 == nil)
        let result21 = ledger.release(.work, 100 * Self.mb)
        #expect(result21.isEmpty)
        #expect(ledger.drawn == 0)
    }
}

@Suite("MemoryLimit: the limit a process runs under")
struct MemoryLimitTests {
    static let physical = 24 << 30

    @Test("cgroup v1: the memory controller's group limit")
    func version1() {
        let found = MemoryLimit.detect(
            selfCgroup: "12:pids:/x\n9:memory:/pipelinehost-test\n1:name=systemd:/\n", mountInfo: nil,
            reader: { $0 == "/sys/fs/cgroup/memory/pipelinehost-test/memory.limit_in_bytes" ? "419430400\n" : nil },
            physical: Self.physical)
        #expect(found == .init(bytes: 400 << 20, origin: "cgroup v1 memory.limit_in_bytes"))
    }

    @Test("cgroup v2: memory.max; 'max' and v1's huge number are no limit")
    func version2() {
        let v2 = MemoryLimit.detect(
            selfCgroup: "0::/system.slice/app.service\n", mountInfo: nil,
            reader: { $0 == "/sys/fs/cgroup/system.slice/app.service/memory.max" ? "1073741824\n" : nil },
            physical: Self.physical)
        #expect(v2 == .init(bytes: 1 << 30, origin: "cgroup v2 memory.max"))
        let unlimited = MemoryLimit.detect(
            selfCgroup: "0::/\n", mountInfo: nil, reader: { _ in "max\n" }, physical: Self.physical)
        #expect(unlimited == .init(bytes: Self.physical, origin: "physical memory"))
        let v1Unlimited = MemoryLimit.detect(
            selfCgroup: "9:memory:/\n", mountInfo: nil, reader: { _ in "9223372036854771712\n" },
            physical: Self.physical)
        #expect(v1Unlimited.origin == "physical memory")
        #expect(MemoryLimit.detect(selfCgroup: nil, mountInfo: nil, reader: { _ in nil }, physical: 5).bytes == 5)
    }

    /// `reader` for `files`, a path's text by its path.
    static func files(_ files: [String: String]) -> (String) -> String? { { files[$0] } }

    @Test("in a container on cgroup v1, the mount shows the container's own group: its limit is read there")
    func containerVersion1() {
        let found = MemoryLimit.detect(
            selfCgroup: "4:memory:/libpod_parent/libpod-abc\n",
            mountInfo:
                "94 90 0:32 /libpod_parent/libpod-abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n",
            reader: Self.files(["/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"]), physical: Self.physical
        )
        #expect(found == .init(bytes: 1 << 30, origin: "cgroup v1 memory.limit_in_bytes"))
    }

    @Test("cgroup v2 in a container, with and without a cgroup namespace")
    func containerVersion2() {
        let namespaced = MemoryLimit.detect(
            selfCgroup: "0::/\n", mountInfo: "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n",
            reader: Self.files(["/sys/fs/cgroup/memory.max": "536870912\n"]), physical: Self.physical)
        #expect(namespaced == .init(bytes: 512 << 20, origin: "cgroup v2 memory.max"))
        let hostNamespace = MemoryLimit.detect(
            selfCgroup: "0::/system.slice/docker-abc.scope\n",
            mountInfo: "30 25 0:26 /system.slice/docker-abc.scope /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            reader: Self.files(["/sys/fs/cgroup/memory.max": "536870912\n"]), physical: Self.physical)
        #expect(hostNamespace.bytes == 512 << 20)
    }

    @Test("a limit on a group above counts: the smallest on the way up (a Kubernetes pod's over its container's)")
    func ancestors() {
        let found = MemoryLimit.detect(
            selfCgroup: "0::/kubepods/pod1/ctr\n", mountInfo: "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            reader: Self.files([
                "/sys/fs/cgroup/kubepods/pod1/ctr/memory.max": "2147483648\n",
                "/sys/fs/cgroup/kubepods/pod1/memory.max": "1073741824\n",
                "/sys/fs/cgroup/kubepods/memory.max": "max\n",
            ]), physical: Self.physical)
        #expect(found == .init(bytes: 1 << 30, origin: "cgroup v2 memory.max"))
        #expect(
            Cgroup.directories(of: "/a/b", in: .init(root: "/", point: "/sys/fs/cgroup"))
                == ["/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"])
    }
}

@Suite("CPULimit: the cores a process may keep busy")
struct CPULimitTests {
    /// A v1 container's CPU group with `quota` microseconds per 100 ms.
    static func version1(quota: String, affinity: Int?) -> CPULimit.Detected {
        CPULimit.detect(
            selfCgroup: "5:cpu,cpuacct:/libpod_parent/libpod-abc\n",
            mountInfo:
                "40 30 0:35 /libpod_parent/libpod-abc /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n",
            reader: MemoryLimitTests.files([
                "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": quota + "\n",
                "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            ]), online: 16, affinity: affinity)
    }

    @Test("a v1 quota of 150 ms per 100 ms is two cores; -1 is none")
    func version1() {
        #expect(Self.version1(quota: "150000", affinity: 16) == .init(cores: 2, origin: "cgroup v1 cpu.cfs_quota_us"))
        #expect(Self.version1(quota: "-1", affinity: nil) == .init(cores: 16, origin: "online cores"))
    }

    @Test("v2 cpu.max: a pod's quota above the container's counts; 'max' is none; a smaller cpuset wins")
    func version2() {
        let mount = "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
        let pod = CPULimit.detect(
            selfCgroup: "0::/kubepods/pod1/ctr\n", mountInfo: mount,
            reader: MemoryLimitTests.files([
                "/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max": "max 100000\n",
                "/sys/fs/cgroup/kubepods/pod1/cpu.max": "50000 100000\n",
            ]), online: 8, affinity: 8)
        #expect(pod == .init(cores: 1, origin: "cgroup v2 cpu.max"))
        let pinned = CPULimit.detect(
            selfCgroup: "0::/\n", mountInfo: mount,
            reader: MemoryLimitTests.files(["/sys/fs/cgroup/cpu.max": "max 100000\n"]),
            online: 8, affinity: 3)
        #expect(pinned == .init(cores: 3, origin: "CPU affinity"))
    }

    @Test("a hybrid host: the v1 quota counts whichever line /proc/self/cgroup lists first")
    func hybrid() {
        let mounts =
            "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
            + "40 30 0:35 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        let files = MemoryLimitTests.files([
            "/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us": "200000\n",
            "/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us": "100000\n",
        ])
        for lines in ["0::/job\n5:cpu,cpuacct:/job\n", "5:cpu,cpuacct:/job\n0::/job\n"] {
            let found = CPULimit.detect(selfCgroup: lines, mountInfo: mounts, reader: files, online: 8, affinity: nil)
            #expect(found == .init(cores: 2, origin: "cgroup v1 cpu.cfs_quota_us"), "\(lines)")
        }
    }

    @Test("Cpus_allowed_list counts ranges and single CPUs")
    func affinity() {
        #expect(CPULimit.affinityCores(status: "Name:\tx\nCpus_allowed_list:\t0-3,8,10-11\n") == 7)
        #expect(CPULimit.affinityCores(status: "Name:\tx\n") == nil)
        #expect(CPULimit.affinityCores(status: "Cpus_allowed_list:\tjunk\n") == nil)
    }
}
