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

    /// SPEC §5: a stopped run exits within a few seconds. A request in flight to a receiver that
    /// never answers is cancelled `stopGrace` after the stop, not at its 30 s time-out, and is
    /// interrupted (pending again, the attempt not counted), as a hook in flight is.
    @Test func aStopCancelsARequestInFlightAfterTheGrace() throws {
        let (fd, port) = try #require(loopbackSocket(listening: true))
        defer { close(fd) }
        let target = WebhookTarget(
            name: "phone", url: "http://127.0.0.1:\(port)/hook", secret: Array("0123456789abcdef".utf8), timeout: 30)
        let started = ContinuousClock.now
        let sink = WebhookSink(target: target, stopRequested: { ContinuousClock.now > started + .milliseconds(300) })
        let outcome = sink.deliver(sample)
        let took = ContinuousClock.now - started
        #expect(outcome == .interrupted("stopped by a signal to streakd after 2s more"), "\(outcome)")
        #expect(took >= .seconds(2) && took < .seconds(5), "\(took)")
    }

    /// On a thread: takes one connection on `fd`, reads the request, lets `answer` act on the
    /// connection, then closes it.
    func answerOnce(_ fd: Int32, _ answer: @escaping @Sendable (Int32) -> Void) {
        Thread {
            let c = accept(fd, nil, nil)
            guard c >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(c, &buffer, buffer.count)
            answer(c)
            close(c)
        }.start()
    }

    /// An https URL at a server that answers plain http: said in words, without BoringSSL's codes
    /// and the path of its source file.
    @Test func anHTTPServerBehindAnHTTPSURLSaysSo() throws {
        let (fd, port) = try #require(loopbackSocket(listening: true))
        defer { close(fd) }
        answerOnce(fd) { c in
            let answer = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = write(c, answer, answer.count)
        }
        let target = WebhookTarget(
            name: "phone", url: "https://127.0.0.1:\(port)/hook", secret: Array("0123456789abcdef".utf8), timeout: 5)
        #expect(
            WebhookSink(target: target).deliver(sample)
                == .failed(
                    "TLS: the server does not speak TLS at that address and port (an http server behind an https URL?)")
        )
    }

    /// An http URL at a server that drops the connection on reading a request, as an https
    /// server does with plain http: the failure asks whether the URL should say https.
    @Test func aServerThatDropsAnHTTPRequestMaySpeakHTTPS() throws {
        let (fd, port) = try #require(loopbackSocket(listening: true))
        defer { close(fd) }
        answerOnce(fd) { c in
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(c, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
        }
        let target = WebhookTarget(
            name: "phone", url: "http://127.0.0.1:\(port)/hook", secret: Array("0123456789abcdef".utf8), timeout: 5)
        let outcome = WebhookSink(target: target).deliver(sample)
        guard case .failed(let why) = outcome else { return #expect(Bool(false), "\(outcome)") }
        #expect(why.hasSuffix(": an https server behind an http URL?"), "\(why)")
    }

    /// A refused connection is said in words, not as NIO's "connection reset (error set):
    /// Connection refused) (errno: 111)", which `deliveries list` and `status` show.
    @Test func aRefusedConnectionSaysSo() throws {
        let (fd, port) = try #require(loopbackSocket(listening: false))
        close(fd)
        let target = WebhookTarget(
            name: "phone", url: "http://127.0.0.1:\(port)/hook", secret: Array("0123456789abcdef".utf8),
            timeout: 5)
        #expect(
            WebhookSink(target: target).deliver(sample)
                == .failed("connection refused: nothing listens at the webhook's address and port"))
    }
}
