import Foundation
import StreakCore
import StreakTestKit
import Testing

@testable import StreakDelivery

#if canImport(Glibc)
    import Glibc
#endif

/// What a webhook's failure says, where the receiver cannot be reached at all.
@Suite(.fastTier) struct WebhookSinkTests {
    let sample = StreakCore.Notification.sample

    /// A loopback port nobody listens on: bound by the kernel's choice, then closed.
    func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A refused connection is said in words, not as NIO's "connection reset (error set):
    /// Connection refused) (errno: 111)", which `deliveries list` and `status` show.
    @Test func aRefusedConnectionSaysSo() throws {
        let target = WebhookTarget(
            name: "phone", url: "http://127.0.0.1:\(try closedPort())/hook", secret: Array("0123456789abcdef".utf8),
            timeout: 5)
        #expect(
            WebhookSink(target: target).deliver(sample)
                == .failed("connection refused: nothing listens at the webhook's address and port"))
    }
}
