import Foundation
import StreakCore
import StreakTestKit
import Testing

@testable import StreakDelivery

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.fastTier) struct DesktopMessageTests {
    @Test func summaryAndUrgencyByKind() {
        let expected: [NotificationKind: (String, DesktopUrgency)] = [
            .atRisk: ("Streak at risk", .normal), .freezeUsed: ("Freeze used", .low),
            .streakBroken: ("Streak broken", .critical), .freezeRefilled: ("Freeze refilled", .low),
            .badgeUnlocked: ("Badge unlocked", .low), .levelUp: ("Level up", .low),
            .streakRepaired: ("Streak repaired", .low),
        ]
        for kind in NotificationKind.allCases {
            let message = DesktopMessage(desktopSample(kind))
            #expect(message.summary == expected[kind]?.0)
            #expect(message.urgency == expected[kind]?.1)
            #expect(message.body == desktopSample(kind).message)
            #expect(message.appName == "streakd")
            #expect(message.category == "x-streakd.\(kind.rawValue)")
            #expect(message.expireTimeout == -1)
        }
    }
}

@Suite(.fastTier) struct DesktopSinkTests {
    @Test func nameAndUsers() {
        let sink = DesktopSink(users: ["u1", "u2"])
        #expect(sink.name == "desktop")
        #expect(sink.accepts(desktopSample(.atRisk, user: "u1")))
        #expect(sink.accepts(desktopSample(.streakBroken, user: "u2")))
        #expect(!sink.accepts(desktopSample(.atRisk, user: "u3")))
        #expect(!DesktopSink(users: []).accepts(desktopSample(.atRisk)))
    }

    @Test func otherUsersAreNotSentAnywhere() {
        // No bus at that address: a notification for another user must not even try it.
        let sink = DesktopSink(users: ["u1"], address: "unix:path=/nonexistent/streakd-test-bus")
        #expect(sink.deliver(desktopSample(.atRisk, user: "u9")) == .delivered)
    }

    @Test func everyKindReachesDunstWithItsUrgency() throws {
        let session = try DesktopSession(server: true)
        let sink = DesktopSink(users: ["u1"], address: session.address)
        let kinds: [NotificationKind] = [.atRisk, .freezeUsed, .streakBroken, .freezeRefilled]
        for kind in kinds {
            #expect(sink.deliver(desktopSample(kind)) == .delivered)
        }
        // One connection, opened on the first delivery and kept.
        #expect(try session.connections(of: getpid()).count == 1)

        let printed = session.printed()
        try #require(printed.count == 4, "dunst printed: \(printed)")
        for (kind, shown) in zip(kinds, printed) {
            let message = DesktopMessage(desktopSample(kind))
            #expect(shown["appname"] == "streakd")
            #expect(shown["summary"] == message.summary)
            #expect(shown["body"] == desktopSample(kind).message)
            #expect(shown["category"] == "x-streakd.\(kind.rawValue)")
        }
        // As dunst reads the urgency hint: at_risk normal, freeze_used low, streak_broken critical, freeze_refilled low.
        #expect(printed.map { $0["urgency"] } == ["NORMAL", "LOW", "CRITICAL", "LOW"])

        // Closed, they go to dunst's history.
        try session.run("/usr/bin/dunstctl", ["close-all"])
        let history = try session.history()
        #expect(history.count == 4)
        for kind in kinds {
            let entry = try #require(history.first { $0["category"] == "x-streakd.\(kind.rawValue)" }, "\(history)")
            #expect(entry["appname"] == "streakd")
            #expect(entry["summary"] == kind.englishTitle)
            #expect(entry["body"] == desktopSample(kind).message)
        }

        // dunst has sent the sink a NotificationClosed signal for each: the kept connection still works.
        #expect(sink.deliver(desktopSample(.atRisk)) == .delivered)
        #expect(try session.connections(of: getpid()).count == 1)
        #expect(session.printed().count == 5)
    }

    @Test func aBusWithoutNotificationServerIsUnavailable() throws {
        let session = try DesktopSession(server: false)
        let sink = DesktopSink(users: ["u1"], address: session.address, timeout: 2)
        let start = Date()
        let outcome = sink.deliver(desktopSample(.atRisk))
        #expect(Date().timeIntervalSince(start) < 2)
        let text = try #require(outcome.unavailable)
        #expect(text.hasPrefix("no notification server on the session bus: "), "\(outcome)")
        #expect(text.contains("org.freedesktop.Notifications"), "\(outcome)")
    }

    @Test func aServerThatDoesNotAnswerIsUnavailableAfterTheTimeout() throws {
        let session = try DesktopSession(server: true)
        let dunst = try #require(session.dunstPID)
        kill(dunst, SIGSTOP)
        defer { kill(dunst, SIGCONT) }
        let sink = DesktopSink(users: ["u1"], address: session.address, timeout: 1)
        let start = Date()
        let outcome = sink.deliver(desktopSample(.streakBroken))
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 0.9 && elapsed < 3, "took \(elapsed)s")
        #expect(outcome == .unavailable("no notification server on the session bus: no reply within 1s"))
    }

    @Test func noBusIsUnavailable() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("streakd-no-bus-\(UUID())").path
        let sink = DesktopSink(users: ["u1"], address: "unix:path=" + path)
        #expect(
            sink.deliver(desktopSample(.atRisk))
                == .unavailable("no session bus: cannot connect to unix:path=\(path): No such file or directory"))
        // Nothing is kept: the next delivery tries again, with the same answer.
        #expect(sink.deliver(desktopSample(.freezeUsed)).unavailable?.hasPrefix("no session bus: ") == true)
    }

    @Test func aBusThatNeverAnswersIsUnavailableWithinTheTimeout() throws {
        // A socket that is listened on but never accepted: connecting works, authentication never ends.
        let dir = try HookDir()
        let path = dir.path + "/bus"
        let fd = try #require(listeningSocket(path))
        defer { close(fd) }
        let sink = DesktopSink(users: ["u1"], address: "unix:path=" + path, timeout: 1)
        let start = Date()
        let outcome = sink.deliver(desktopSample(.atRisk))
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 0.9 && elapsed < 3, "took \(elapsed)s")
        #expect(outcome == .unavailable("no session bus: the bus did not answer in time"))
    }

    @Test func aBusThatWentAwayIsReconnected() throws {
        let dir = try HookDir()
        let first = try DesktopSession(server: true, dir: dir.url)
        let sink = DesktopSink(users: ["u1"], address: first.socketAddress)
        #expect(sink.deliver(desktopSample(.atRisk)) == .delivered)
        first.stop()
        #expect(sink.deliver(desktopSample(.freezeUsed)).unavailable?.hasPrefix("no session bus: ") == true)

        // A new bus at the same address: the next delivery connects to it.
        let second = try DesktopSession(server: true, dir: dir.url)
        #expect(sink.deliver(desktopSample(.streakBroken)) == .delivered)
        #expect(second.printed().map { $0["summary"] } == ["Streak broken"])
    }
}

func desktopSample(_ kind: NotificationKind, user: String = "u1") -> StreakDelivery.Notification {
    Notification(
        kind: kind, user: user, streak: "daily", localDate: LocalDate("2026-11-21")!,
        due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin", localDue: "2026-11-21T20:00:00+01:00",
        streakLength: 7, message: "\(kind.rawValue): your 7-day streak — 2 of 3 check-ins done, 1 freeze left.")
}

extension DeliveryOutcome {
    var unavailable: String? {
        if case .unavailable(let text) = self { return text }
        return nil
    }
}
