import StreakCore

/// Planned runs as a store reads them from its queue (`ScheduleReading.eachPlannedRun`), a batch
/// of plain values: each run's place in the queue, its streak as `dueStreaks` lists it, and what
/// it carries for planning (its user's reminder settings and language, and the packed history,
/// as the run that planned it read them). Their texts and histories lie end to end in one
/// buffer (`PackedTexts`): a reader of a million runs makes no value per run.
public struct PlannedRuns: Sendable {
    /// One run's numbers; its texts are `user(_:)`, `streak(_:)`, `language(_:)`, `history(_:)`.
    public struct Run: Sendable {
        public var position: RunPosition
        public var version: Int
        /// The `now` of the last run that handled the streak.
        public var handledThrough: Instant?
        /// The user's reminder time (seconds after local midnight) and whether they get
        /// reminders, when the run carries its history.
        public var remindAt: Int
        public var remind: Bool

        public init(position: RunPosition, version: Int, handledThrough: Instant?, remindAt: Int, remind: Bool) {
            self.position = position
            self.version = version
            self.handledThrough = handledThrough
            self.remindAt = remindAt
            self.remind = remind
        }
    }

    public private(set) var runs: [Run] = []
    /// Four texts a run: user id, streak id, language (empty: the default), packed history
    /// (empty: the run carries nothing, and a reader asks `dueHistories`; a packed history is
    /// never empty, nor is a language tag).
    private var texts = PackedTexts()

    public init() {}

    public var count: Int { runs.count }
    public var isEmpty: Bool { runs.isEmpty }
    /// The last run's place in the queue.
    public var last: RunPosition? { runs.last?.position }

    /// Appends a run with its texts as UTF-8 (`history`: the packed history it carries, if any).
    public mutating func append(
        _ run: Run, user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>,
        language: UnsafeBufferPointer<UInt8>?, history: UnsafeBufferPointer<UInt8>?
    ) {
        runs.append(run)
        texts.append(user)
        texts.append(streak)
        texts.append(language ?? UnsafeBufferPointer(start: nil, count: 0))
        texts.append(history ?? UnsafeBufferPointer(start: nil, count: 0))
    }

    /// The same, its texts as values (a test's store, or a run read some other way).
    public mutating func append(_ run: Run, user: String, streak: String, language: String?, history: [UInt8]?) {
        var (user, streak) = (user, streak)
        user.withUTF8 { u in
            streak.withUTF8 { s in
                func with(_ l: UnsafeBufferPointer<UInt8>?) {
                    guard let history else { return append(run, user: u, streak: s, language: l, history: nil) }
                    history.withUnsafeBufferPointer { append(run, user: u, streak: s, language: l, history: $0) }
                }
                guard var language else { return with(nil) }
                language.withUTF8 { with($0) }
            }
        }
    }

    /// Calls `body` with the runs' texts at hand, for a loop over many: valid during the call only.
    public func withTexts<R>(_ body: (Texts) throws -> R) rethrows -> R { try texts.withTexts { try body(Texts(texts: $0)) } }

    /// The runs' texts while `withTexts` runs, by the run's index.
    public struct Texts {
        let texts: PackedTexts.Texts

        public func user(_ i: Int) -> UnsafeBufferPointer<UInt8> { texts[4 * i] }
        public func streak(_ i: Int) -> UnsafeBufferPointer<UInt8> { texts[4 * i + 1] }
        /// Nil: the configuration's default language.
        public func language(_ i: Int) -> UnsafeBufferPointer<UInt8>? { nonEmpty(texts[4 * i + 2]) }
        /// Nil: the run carries no history.
        public func history(_ i: Int) -> UnsafeBufferPointer<UInt8>? { nonEmpty(texts[4 * i + 3]) }

        private func nonEmpty(_ text: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
            text.isEmpty ? nil : text
        }
    }

    /// Whether run `i` carries a history.
    public func carries(_ i: Int) -> Bool { withTexts { $0.history(i) != nil } }
    /// Run `i`'s language, as a value (nil: the default).
    public func language(_ i: Int) -> String? { withTexts { $0.language(i).map { String(decoding: $0, as: UTF8.self) } } }
    /// Run `i`'s packed history, as a value (nil: none carried).
    public func history(_ i: Int) -> [UInt8]? { withTexts { $0.history(i).map(Array.init) } }

    /// Run `i` as `dueStreaks` would list it.
    public func dueStreak(_ i: Int) -> DueStreak {
        let run = runs[i]
        return DueStreak(
            user: texts.string(4 * i), streak: texts.string(4 * i + 1), handledThrough: run.handledThrough,
            version: run.version, row: run.position.row, marked: false)
    }

    /// Empties it, keeping its room for the next batch.
    public mutating func removeAll() {
        runs.removeAll(keepingCapacity: true)
        texts.removeAll()
    }
}

/// A place in the queue of planned runs: a run's instant, then its schedule row.
public struct RunPosition: Comparable, Sendable {
    public var at: Instant
    public var row: Int64

    public init(at: Instant, row: Int64) {
        self.at = at
        self.row = row
    }

    public static func < (a: RunPosition, b: RunPosition) -> Bool { (a.at, a.row) < (b.at, b.row) }
}

/// How a store hands the queue over: a small first batch, so a reader's first results come at
/// once, then larger ones.
public enum PlannedRunBatches {
    public static let first = 256
    public static let most = 8192

    /// The size of the batch after one of `size`.
    public static func next(after size: Int) -> Int { min(2 * size, most) }
}
