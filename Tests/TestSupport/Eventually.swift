/// Polls `condition` until it holds or `seconds` pass, for states that publish no event (a
/// server's request count, a file). A pipeline's own state has one: `waitForActivity`. The
/// deadline is only a backstop against a hang, far past any wait a loaded machine makes (120 s
/// was missed once, by a fetch on a machine running two busy loops and two compilers beside the
/// tests); never for timing assertions. It costs nothing while the condition comes true.
public func eventually(within seconds: Double = 300, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
