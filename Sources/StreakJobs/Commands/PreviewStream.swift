import StreakCore
import StreakStore

/// How `preview` finds what is due without holding every streak: it reads the schedule in the
/// order of the planned runs and prints each notice as soon as nothing read later can come
/// before it (docs/ARCHITECTURE.md, "The path of a preview").
extension Context {
    /// Hands the notices due after now and by `end` (of `kind`, when given) to `emit` in due
    /// order, a batch at a time, each as soon as it is known. Streaks with no planned run (changed
    /// and not planned again; every streak, after a change of the notice settings) may have
    /// notices due anywhere in the window: they are planned first, into the queue. Then the
    /// planned runs come in their order, and whatever is due before the runs still to read goes
    /// out: a streak's notices are due no earlier than its run (`ScheduleReading.eachPlannedRun`).
    /// The store is read on one thread, the notices planned on another, each a few batches ahead
    /// of the next; this one orders them and hands them to `emit`. Answers the most notices it
    /// held at once.
    @discardableResult
    func eachUpcoming(
        through end: Instant, user id: String? = nil, kind: NotificationKind? = nil,
        readLedgerAfter: Int = PreviewPlan.readLedgerAfter, emit: (UpcomingBatch) throws -> Void
    ) throws -> Int {
        let every = id == nil ? try configChanged(write: false) : false
        let inputs = Handoff<PreviewInput>(capacity: 4)
        let planned = Handoff<PlannedBatch>(capacity: 4)
        // Reads the streaks to plan, in the order they are planned, with their histories.
        let reading = try Background { [self] in
            defer { inputs.finish() }
            try store.read { r in
                func send(_ input: PreviewInput) throws { guard inputs.put(input) else { throw PreviewStopped() } }
                if let id {
                    let user = try self.user(id, in: r)
                    let streaks = try r.streaks(of: user.id).map { DueStreak(user: user.id, streak: $0) }
                    return try send(PreviewInput(histories: try r.dueHistories(of: streaks)))
                }
                try r.eachUnplannedStreak(every: every) {
                    try send(PreviewInput(histories: try r.dueHistories(of: $0)))
                }
                guard !every else { return }
                try r.eachPlannedRun(through: end) { runs in
                    // Runs planned before they carried their histories (migration 11): the tables.
                    let bare = runs.runs.indices.filter { !runs.carries($0) }
                    let looked = bare.isEmpty ? [] : try r.dueHistories(of: bare.map(runs.dueStreak))
                    try send(PreviewInput(runs: runs, looked: Array(zip(bare, looked)), before: runs.last?.at))
                }
            }
        }
        // Plans them, a batch at a time.
        let planning = try Background { [self] in
            defer { planned.finish() }
            do {
                var plan = PreviewPlan(context: self, end: end, kind: kind)
                plan.readLedgerAfter = readLedgerAfter
                while let input = inputs.take() {
                    let batch = try plan.notices(of: input)
                    guard planned.put(.notices(batch, plan.names, before: input.before)) else { throw PreviewStopped() }
                }
                try reading.wait()
            } catch is PreviewStopped {
            } catch {
                inputs.close()
                _ = planned.put(.failed(error))
            }
        }
        defer {
            planned.close()
            inputs.close()
            _ = try? planning.wait()
            _ = try? reading.wait()
        }
        var queue = UpcomingQueue()
        var names = NoticeNames()
        while let next = planned.take() {
            switch next {
            case .notices(let batch, let planningNames, let before):
                names = planningNames
                batch.forEach { queue.push($0, user: $1) }
                // Nothing is known before the first planned run is read.
                guard let before else { continue }
                let due = queue.pop(before: before, streaks: names.streaks)
                if !due.isEmpty { try emit(UpcomingBatch(parts: due, names: names)) }
            case .failed(let error):
                throw error
            }
        }
        let rest = queue.pop(before: nil, streaks: names.streaks)
        if !rest.isEmpty { try emit(UpcomingBatch(parts: rest, names: names)) }
        return queue.peak
    }
}

/// What the reading thread hands to the planning one: planned runs (each carrying its history,
/// or with it read from the tables: `looked`, by the run's index), or streaks with no planned run
/// and their histories (nil: gone since they were listed); and the instant before which every notice is known, once it is.
struct PreviewInput: Sendable {
    var runs = PlannedRuns()
    var looked: [(run: Int, history: DueHistory?)] = []
    var histories: [DueHistory?] = []
    var before: Instant?
}

/// What the planning thread hands to the printing one: a batch of notices, the names they
/// number (only ever added to), and the instant before which every notice is known.
enum PlannedBatch: Sendable {
    case notices(NoticeBatch, NoticeNames, before: Instant?)
    case failed(any Error)
}

/// The printing thread stopped (it failed): planning stops too.
struct PreviewStopped: Error {}

/// Notices ready to print, in due order (batch after batch), and the names they number.
struct UpcomingBatch {
    var parts: [NoticeBatch]
    var names: NoticeNames

    /// The notices with their names spelled out.
    var entries: [UpcomingQueue.Entry] {
        var all: [UpcomingQueue.Entry] = []
        for part in parts {
            part.forEach { item, user in
                all.append(
                    UpcomingQueue.Entry(
                        notice: item.notice, user: String(decoding: user, as: UTF8.self),
                        language: names.language(item.language), streak: names.streak(item.streak), zone: item.zone,
                        order: Int32(item.order)))
            }
        }
        return all
    }

    func zone(of e: UpcomingQueue.Entry) -> Zone { names.zone(e.zone) }
}

extension UpcomingQueue {
    /// One notice with its names spelled out.
    struct Entry {
        var notice: Notice
        var user: String
        /// The user's language (nil: the configuration's default).
        var language: String?
        var streak: String
        /// The user's zone at the due instant, as a number in the batch's names.
        var zone: Int32
        /// Its place among its streak's notices.
        var order: Int32
    }
}
