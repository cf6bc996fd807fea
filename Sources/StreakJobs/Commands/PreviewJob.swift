import Logging
import StreakCore
import StreakDelivery
import StreakStore

/// `streakd preview`: what `tick` will send between now and `--until`, assuming no new check-ins
/// and no refill, leaving out what the ledger has already.
extension Context {
    public func preview(until: String?, user: String?, kind: String?) throws {
        let end = try untilInstant(until)
        let kindFilter = try kind.map { k -> NotificationKind in
            guard let kind = NotificationKind(rawValue: k) else {
                throw StreakdError.usage(
                    "--kind: \(quoted(k)) is not a kind; use one of \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            return kind
        }
        var printed = 0
        var lines = PreviewLines()
        lines.bytes.reserveCapacity(Self.piece + 4096)
        // Written on a thread of its own: a write into a pipe waits for its reader at every
        // 64 KiB, and this thread formats the next lines meanwhile.
        let writes = Handoff<[UInt8]>(capacity: 4)
        let writer = try Background { [printer] in
            while let bytes = writes.take() { printer.outLines(bytes) }
        }
        defer {
            writes.finish()
            _ = try? writer.wait()
        }
        var texts = RenderedTexts(config.messages)
        // The streak ids' bytes, by their numbers.
        var streaks = PackedTexts()
        func handOver() {
            _ = writes.put(lines.bytes)
            lines.bytes = []
            lines.bytes.reserveCapacity(Self.piece + 4096)
        }
        let peak = try eachUpcoming(through: end, user: user, kind: kindFilter) { batch in
            // Handed to the writer a piece at a time: an instant's bucket can be a hundred thousand
            // lines, and a whole one at once held megabytes in every piece the writer had not taken.
            let json = printer.format == .json
            let names = batch.names
            while streaks.count < names.streaks.count { streaks.append(names.streaks[streaks.count]) }
            streaks.withTexts { streaks in
                for part in batch.parts {
                    part.forEach { item, user in
                        let n = item.notice
                        texts.withText(n, streak: item.streak, tag: item.language, names: names) {
                            lines.append(
                                n, user: user, streak: UnsafeRawBufferPointer(streaks[Int(item.streak)]),
                                zone: names.zone(item.zone), message: $0, json: json)
                        }
                        if lines.bytes.count >= Self.piece { handOver() }
                    }
                    printed += part.count
                }
            }
            // What is known goes out now: the first lines must not wait for a piece to fill.
            if !lines.bytes.isEmpty { handOver() }
        }
        writes.finish()
        _ = try? writer.wait()
        logger.debug("preview", metadata: ["printed": "\(printed)", "most waiting at once": "\(peak)"])
        if printed == 0 && printer.format == .short { printer.err("preview: nothing due after \(now) until \(end)") }
    }

    /// The bytes of lines `preview` hands its writer at once.
    static let piece = 1 << 18

    /// The notifications due after now and by `end`, in due order, all at once.
    func upcoming(through end: Instant, user id: String? = nil) throws -> [Notification] {
        var all: [Notification] = []
        try eachUpcoming(through: end, user: id) { batch in
            all += batch.entries.map { e in
                notification(e.notice, user: e.user, language: e.language, streak: e.streak, zone: batch.zone(of: e))
            }
        }
        return all
    }

    /// How far `preview` looks: a year (365 days; `52w` fits). Each streak is evaluated at every
    /// reminder instant it could have, and a preview is meant for what the timer will do soon.
    static let previewHorizon = 365 * Instant.day

    /// `--until`: a duration after now (`24h`, `90m`, `2d`) or an RFC 3339 instant; default 24h; at
    /// most `previewHorizon` after now.
    func untilInstant(_ text: String?) throws -> Instant {
        guard let text else { return now + 24 * Instant.hour }
        let instant: Instant
        if let s = DurationText.seconds(text) {
            instant = s > Self.previewHorizon ? now + Self.previewHorizon + 1 : now + s
        } else if let parsed = RFC3339.parse(text) {
            instant = parsed
        } else {
            throw StreakdError.usage(
                "--until: \(quoted(text)) is not a duration or an instant; use \(DurationText.rule), or RFC 3339 such as 2026-11-22T20:00:00Z"
            )
        }
        guard instant > now else { throw StreakdError.usage("--until: \(instant) is not after now (\(now))") }
        guard instant - now <= Self.previewHorizon else {
            throw StreakdError.usage(
                "--until: \(quoted(text)) is more than a year ahead; preview looks at most 365 days after now (\(now + Self.previewHorizon)), such as 52w or 365d"
            )
        }
        return instant
    }
}
