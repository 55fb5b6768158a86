import PipelineHost
import Testing

@Suite("SourceLocation: one split of a source for every reader")
struct SourceLocationTests {
    @Test("a full URL splits into its parts, and they give the text back")
    func parts() {
        let url = SourceLocation("HTTPS://me:pw@Music.Example:8443/rest/getCoverArt?id=1&t=x#top")
        #expect(url.scheme == "https")
        #expect(url.authority == "me:pw@Music.Example:8443")
        #expect(url.userInfo == "me:pw")
        #expect(url.hostAndPort == "music.example:8443")
        #expect(url.resource == "HTTPS://me:pw@Music.Example:8443/rest/getCoverArt")
        #expect(url.query == "id=1&t=x")
        #expect(url.queryItems == ["id=1", "t=x"])
        #expect(url.fragment == "top")
        #expect(!url.isPlainPath)
        #expect(url.resource + "?" + url.query! + "#" + url.fragment! == url.text)
    }

    @Test("the fragment starts at the first #, the query at the first ? before it")
    func order() {
        let hashFirst = SourceLocation("http://h/p#f?x")
        #expect(hashFirst.query == nil && hashFirst.fragment == "f?x" && hashFirst.resource == "http://h/p")
        let questionFirst = SourceLocation("http://h/p?a=1#f")
        #expect(questionFirst.query == "a=1" && questionFirst.fragment == "f")
    }

    @Test(
        "plain paths and file URLs have no host",
        arguments: ["/tmp/a.jpg", "photo.jpg", "file:///tmp/a.jpg", "file:/tmp/a.jpg"])
    func paths(_ text: String) {
        let location = SourceLocation(text)
        #expect(location.hostAndPort == nil)
        #expect(location.isPlainPath == !text.hasPrefix("file:"))
        #expect(location.scheme == (text.hasPrefix("file:") ? "file" : nil))
    }

    @Test("user information is whatever precedes the authority's last @")
    func userInfo() {
        #expect(SourceLocation("https://TOKEN@host/a").userInfo == "TOKEN")
        #expect(SourceLocation("https://a:b@c@host/a").userInfo == "a:b@c")
        #expect(SourceLocation("https://a:b@c@host/a").hostAndPort == "host")
        #expect(SourceLocation("https://host/a@b").userInfo == nil, "an @ in the path is not user information")
    }
}
