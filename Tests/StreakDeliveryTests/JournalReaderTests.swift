import Foundation
import StreakCore
import StreakTestKit
import Testing

@testable import StreakDelivery

/// JournalReader against a real journald: entries written with JournalSink, read back through
/// sd-journal. Entries of earlier runs stay in the journal, so each test filters on its own users.
@Suite(.fastTier) struct JournalReaderTests {
    static func user(_ name: String) -> String { "reader-\(name)-\(UUID().uuidString.lowercased().prefix(8))" }

    static func sample(_ kind: NotificationKind = .atRisk, user: String, streak: String = "daily")
        -> StreakDelivery.Notification
    {
        JournalSinkTests.notification(kind, user: user, streak: streak)
    }

    /// Every entry of the filter, read again until there are `expected` (journald may take a
    /// moment to make an entry readable) or 20 s have passed.
    static func entries(_ filter: JournalReader.Filter, expected: Int) throws -> [LogEntry] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            var found: [LogEntry] = []
            try JournalReader(filter: filter).forward(since: nil, until: nil) { found.append($0) }
            if found.count >= expected || ContinuousClock.now >= deadline { return found }
            usleep(100_000)
        }
    }

    static func write(_ notifications: [StreakDelivery.Notification]) {
        let sink = JournalSink()
        for n in notifications { #expect(sink.deliver(n) == .delivered) }
    }

    static var wallClock: Instant { Instant(seconds: Int64(Date().timeIntervalSince1970.rounded(.down))) }

    /// Sleeps until the wall clock has passed the current second; answers the new second.
    static func nextSecond() -> Instant {
        let next = wallClock + 1
        while wallClock < next { usleep(20_000) }
        return next
    }

    // MARK: decoding, without journald

    @Test func decodesTheFieldsJournalSinkWrites() throws {
        let sent = Self.sample(.freezeUsed, user: "u1")
        let fields = Dictionary(
            JournalSink.entry(for: sent).map { line in
                let equals = line.firstIndex(of: "=")!
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }, uniquingKeysWith: { first, _ in first })
        let entry = try #require(LogEntry(fields: fields, realtimeMicroseconds: 1_795_287_603_999_999))
        #expect(entry.notification == sent)
        #expect(entry.dead == nil)
        #expect(entry.logged.description == "2026-11-21T19:00:03Z")
        #expect(
            entry.json.text
                == #"{"kind":"freeze_used","user":"u1","streak":"daily","due":"2026-11-21T19:00:00Z","local_due":"2026-11-21T20:00:00+01:00","timezone":"Europe/Berlin","local_date":"2026-11-21","streak_length":7,"message":"Your 7-day streak is at risk! Check in today to keep it going.","key":"freeze_used/u1/daily/2026-11-21","logged":"2026-11-21T19:00:03Z","host":null,"store":null}"#
        )

        var wrongID = fields
        wrongID["MESSAGE_ID"] = NotificationKind.atRisk.messageID
        #expect(LogEntry(fields: wrongID, realtimeMicroseconds: 0) == nil)
        for name in ["MESSAGE", "STREAKD_KIND", "STREAKD_USER", "STREAKD_LOCAL_DATE", "STREAKD_DUE"] {
            var missing = fields
            missing[name] = nil
            #expect(LogEntry(fields: missing, realtimeMicroseconds: 0) == nil, "without \(name)")
        }
        var badLength = fields
        badLength["STREAKD_STREAK_LENGTH"] = "seven"
        #expect(LogEntry(fields: badLength, realtimeMicroseconds: 0) == nil)
    }

    // MARK: a real journal

    @Test func readsBackEveryFieldInOrder() throws {
        try Journal.ensureRunning()
        let user = Self.user("fields")
        let sent = [
            Self.sample(.atRisk, user: user), Self.sample(.freezeUsed, user: user),
            Self.sample(.streakBroken, user: user, streak: "reading"), Self.sample(.freezeRefilled, user: user),
        ]
        var multiline = Self.sample(.atRisk, user: user, streak: "lines")
        multiline.message = "Two lines,\nÜnïcode ✓"
        let before = Self.wallClock
        Self.write(sent + [multiline])
        let read = try Self.entries(.init(user: user), expected: 5)
        let after = Self.wallClock
        #expect(read.map(\.notification) == sent + [multiline])
        #expect(read.allSatisfy { $0.logged >= before && $0.logged <= after && $0.dead == nil })
        #expect(read.map(\.realtimeMicroseconds) == read.map(\.realtimeMicroseconds).sorted())
    }

    @Test func lastTakesTheTail() throws {
        try Journal.ensureRunning()
        let user = Self.user("tail")
        Self.write((0..<5).map { Self.sample(user: user, streak: "s\($0)") })
        _ = try Self.entries(.init(user: user), expected: 5)
        let reader = try JournalReader(filter: .init(user: user))
        #expect(try reader.last(2, since: nil, until: nil).map(\.notification.streak) == ["s3", "s4"])
        #expect(try reader.last(0, since: nil, until: nil).isEmpty)
        #expect(
            try reader.last(10, since: nil, until: nil).map(\.notification.streak) == ["s0", "s1", "s2", "s3", "s4"])
        // The position is left at the newest entry: nothing follows it yet.
        #expect(try reader.next() == nil)
    }

    @Test func sinceAndUntilAreInclusiveWholeSeconds() throws {
        try Journal.ensureRunning()
        let user = Self.user("window")
        Self.write([Self.sample(user: user, streak: "a1"), Self.sample(user: user, streak: "a2")])
        _ = try Self.entries(.init(user: user), expected: 2)
        let split = Self.nextSecond()
        Self.write([Self.sample(user: user, streak: "b1"), Self.sample(user: user, streak: "b2")])
        let all = try Self.entries(.init(user: user), expected: 4)
        try #require(all.count == 4)
        #expect(all[1].logged < split && all[2].logged >= split)

        let reader = try JournalReader(filter: .init(user: user))
        func forward(_ since: Instant?, _ until: Instant?) throws -> [String] {
            var streaks: [String] = []
            try reader.forward(since: since, until: until) { streaks.append($0.notification.streak) }
            return streaks
        }
        #expect(try forward(split, nil) == ["b1", "b2"])
        #expect(try forward(nil, split - 1) == ["a1", "a2"])
        #expect(try forward(all[0].logged, all[3].logged) == ["a1", "a2", "b1", "b2"])
        #expect(try forward(all[3].logged + 1, nil) == [])
        #expect(try reader.last(1, since: nil, until: split - 1).map(\.notification.streak) == ["a2"])
        #expect(try reader.last(10, since: split, until: nil).map(\.notification.streak) == ["b1", "b2"])
        #expect(try reader.last(1, since: split, until: nil).map(\.notification.streak) == ["b2"])
    }

    @Test func filtersOnUserAndKind() throws {
        try Journal.ensureRunning()
        let (one, two) = (Self.user("one"), Self.user("two"))
        Self.write([
            Self.sample(.atRisk, user: one), Self.sample(.streakBroken, user: one), Self.sample(.atRisk, user: two),
            Self.sample(.freezeUsed, user: one),
        ])
        #expect(
            try Self.entries(.init(user: one), expected: 3).map(\.notification.kind) == [
                .atRisk, .streakBroken, .freezeUsed,
            ])
        #expect(try Self.entries(.init(user: two), expected: 1).map(\.notification.user) == [two])
        let broken = try Self.entries(.init(user: one, kind: .streakBroken), expected: 1)
        #expect(broken.map(\.notification.key) == ["streak_broken/\(one)/daily/2026-11-21"])
        #expect(try Self.entries(.init(user: two, kind: .freezeUsed), expected: 0).isEmpty)
    }

    @Test func deadDeliveriesAreReadWithTheirSinkAttemptsAndError() throws {
        try Journal.ensureRunning()
        let user = Self.user("dead")
        let notification = Self.sample(.streakBroken, user: user)
        let sink = JournalSink()
        #expect(sink.deliver(notification) == .delivered)
        #expect(sink.recordDead(notification, sink: "hook:notify", attempts: 5, error: "exit status 1") == .delivered)
        let read = try Self.entries(.init(user: user, kind: .streakBroken), expected: 2)
        try #require(read.count == 2)
        #expect(read[0].dead == nil)
        #expect(read[1].dead == DeadDelivery(sink: "hook:notify", attempts: 5, error: "exit status 1"))
        #expect(
            read[1].notification.message == "hook:notify gave up on \(notification.key) after 5 attempts: exit status 1"
        )
        var expected = notification
        expected.message = read[1].notification.message
        #expect(read[1].notification == expected)
        #expect(
            read[1].json.text.hasSuffix(
                #","delivery":"dead","sink":"hook:notify","attempts":5,"error":"exit status 1"}"#))
    }

    @Test func nextAnswersEntriesWrittenAfterTheTail() throws {
        try Journal.ensureRunning()
        let user = Self.user("follow")
        Self.write([Self.sample(user: user, streak: "old")])
        _ = try Self.entries(.init(user: user), expected: 1)
        let reader = try JournalReader(filter: .init(user: user))
        #expect(try reader.last(10, since: nil, until: nil).map(\.notification.streak) == ["old"])
        let writer = Thread {
            Self.write([Self.sample(user: user, streak: "new1"), Self.sample(user: user, streak: "new2")])
        }
        writer.start()
        var arrived: [String] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while arrived.count < 2 && ContinuousClock.now < deadline {
            while let entry = try reader.next() { arrived.append(entry.notification.streak) }
            if arrived.count < 2 { try reader.wait(timeout: .milliseconds(200)) }
        }
        #expect(arrived == ["new1", "new2"])
    }

    @Test func nextAnswersTheFirstEntryOfAnEmptyMatch() throws {
        try Journal.ensureRunning()
        let user = Self.user("first")
        let reader = try JournalReader(filter: .init(user: user))
        #expect(try reader.last(10, since: nil, until: nil).isEmpty)
        Self.write([Self.sample(user: user)])
        var arrived: [LogEntry] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while arrived.isEmpty && ContinuousClock.now < deadline {
            if let entry = try reader.next() {
                arrived.append(entry)
            } else {
                try reader.wait(timeout: .milliseconds(200))
            }
        }
        #expect(arrived.map(\.notification.user) == [user])
    }

    @Test func aJournalThatCannotBeOpenedIsAnError() throws {
        let missing = "/nonexistent-\(UUID().uuidString)"
        #expect {
            _ = try JournalReader(source: .directory(missing))
        } throws: { error in
            "\(error)" == "cannot open the journal in \(missing): sd_journal_open: No such file or directory"
        }
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect {
            _ = try JournalReader(source: .directory(empty))
        } throws: { error in
            "\(error)" == "cannot open the journal in \(empty): there are no journal files (*.journal) in it"
        }
    }
}
