import Foundation
import StreakCore
import StreakStore

/// `streakd import`: bulk check-ins, all-or-nothing unless `skipInvalid`.
///
/// The file is read, checked and stored a line at a time inside one write
/// transaction; invalid records are counted, and unless they are skipped the
/// transaction rolls back at the end, so nothing is imported.
extension Context {
    public enum ImportFormat: String, CaseIterable, Sendable {
        case jsonl
        case csv
    }

    public func importCheckins(path: String, format: ImportFormat?, skipInvalid: Bool) throws {
        do {
            try importCheckins(from: try InputFile(path), format: format, skipInvalid: skipInvalid)
        } catch let stop as InputFile.NotText {
            throw StreakdError.data(stop.message + "\nnothing was imported")
        } catch let error as StoreError where error.kind == .full {
            throw storeFull(nothing: "nothing was imported")
        }
    }

    /// The file system under the store is full: the transaction rolled back, so nothing changed,
    /// and the same command works once there is room. 69, as for any full store (docs/RULES.md,
    /// "Faults"): not 74, the store is not damaged; not 75, which a timer's unit counts as success.
    func storeFull(nothing: String) -> StoreError {
        StoreError(
            .full,
            "store \(store.location): the disk (file system) holding the store is full: \(nothing), and the store is "
                + "as it was; free some space there and run the command again")
    }

    /// Files from this size on are read in two halves at once (`besideFrom`: less in tests).
    static let readBesideFrom = 16 << 20

    func importCheckins(
        from file: sending InputFile, format: ImportFormat?, skipInvalid: Bool, besideFrom: Int = Context.readBesideFrom
    ) throws {
        let path = file.name
        let format = format ?? (path.lowercased().hasSuffix(".csv") ? .csv : .jsonl)
        let csv = format == .csv ? try CheckinCSV.header(file) : nil
        let size = file.size
        let progress = Progress(printer: printer, total: size, label: "importing")
        // A large file: its second half is read and checked on this thread, with a copy of the
        // checker, while the reading thread reads the first; then this one stores.
        let split = try size.flatMap { size in
            (format == .jsonl || csv != nil) && size >= besideFrom
                ? try InputFile.lineStart(path, after: size / 2, size: size) : nil
        }
        let expected = try file.estimatedLines()
        // The reading thread takes the file and the progress bar along: this one does not touch
        // them again.
        let taken = Handover<(InputFile, Progress)>()
        taken.put((file, progress))
        let (result, problems) = try store.write(.bulkImport) { w -> (InsertResult, Problems) in
            var rules = CheckinRules(zones: zones, now: now)
            if format == .jsonl { rules.names = [:] }
            let checker = try ImportChecker(store: w, rules: rules)
            // The rows go sorted as the store takes them fastest (`SortedCheckins`).
            let bulk = try w.checkinImport(storedAt: now, expectedRows: expected)
            // The file is read, checked and sorted on a thread of its own (a large file with this
            // one, half each); then it hands the rows over while this one stores.
            let handoff = Handoff<CheckinRows>(capacity: 4)
            let beside = Handover<(ImportChecker, SortedCheckins)?>()
            let reading = try Background { [self] () throws -> (Problems, Set<String>) in
                let (file, progress) = taken.take()
                var checker = checker  // its own: the store's thread reads the second half with another copy
                defer {
                    progress.finish()
                    handoff.finish()
                }
                guard format == .jsonl || csv != nil else { return (Problems(file: path), []) }  // an empty CSV file
                let rows = SortedCheckins(now: now, expectedRows: expected)
                var problems = Problems(file: path)
                var open: OpenQuote?
                func done() -> (Problems, Set<String>) { (problems, checker.streaksUsed) }
                if let split, let size {
                    let first = try InputFile(part: path, 0..<split)
                    if csv != nil { _ = try first.next() }  // the header, read already
                    guard
                        try check(first, csv: csv, with: &checker, skipInvalid, progress, handoff, rows, &problems, &open)
                    else { return done() }
                    // The second half as read beside, when it held no invalid record and the first
                    // did not end inside a quoted value; else read here.
                    let read = beside.take()
                    let other = open == nil ? read : nil
                    let (streaks, zones) = other.map { checker.absorb($0.0) } ?? ([], [])
                    if let held = other?.1, SortedCheckins.fit(streaks: streaks, zones: zones) {
                        if problems.count == 0 || skipInvalid {
                            guard rows.absorb(held, streaks: streaks, zones: zones, checker, handoff) else { return done() }
                        }
                        progress.update(size)
                    } else {
                        let rest = try InputFile(part: path, split..<size, firstLine: first.lines + 1)
                        guard
                            try check(
                                rest, csv: csv, with: &checker, skipInvalid, progress, handoff, rows, &problems, &open,
                                at: split)
                        else { return done() }
                    }
                } else {
                    guard try check(file, csv: csv, with: &checker, skipInvalid, progress, handoff, rows, &problems, &open)
                    else { return done() }
                }
                if let open { problems.add(line: open.line, open.problem) }
                // Nothing is stored once a record is invalid (without `skipInvalid`): all rolls back.
                if problems.count == 0 || skipInvalid { _ = rows.drain(checker, handoff) }
                return done()
            }
            if let split, let size {
                beside.put(readBeside(path, split..<size, csv: csv, with: checker, expected: expected.map { $0 / 2 }))
            }
            var storing: (any Error)?
            while storing == nil, let rows = handoff.take() {
                do { try bulk.insert(rows) } catch {
                    storing = error
                    handoff.close()
                }
            }
            let read = Result { try reading.wait() }
            if let storing { throw storing }
            let (problems, streaksUsed) = try read.get()
            if problems.count > 0 && !skipInvalid {
                throw StreakdError.data(
                    problems.listed(more: true)
                        + "\n\(problems.count) invalid record\(problems.count == 1 ? "" : "s"); nothing was imported (use --skip-invalid to import the valid ones)"
                )
            }
            for p in problems.first { printer.warn("skipped \(p)") }
            if problems.count > problems.first.count {
                let more = problems.count - problems.first.count
                printer.warn(
                    "skipped \(more) more invalid record\(more == 1 ? "" : "s"), not listed (the first "
                        + "\(problems.first.count) are above)")
            }
            let total = try bulk.finish()
            try recordSettings(for: streaksUsed, in: w)
            try refreshUsual(users: Set(bulk.usualUsers()), in: w)
            // The runs of what changed planned now, so `preview` finds them in the queue; the
            // next tick still looks at every one afresh (docs/ARCHITECTURE.md).
            try planUnplanned(in: w)
            return (total, problems)
        }
        printer.record(
            .object([
                ("imported", .int(result.inserted)), ("duplicates", .int(result.duplicates)),
                ("skipped", .int(problems.count)),
            ]),
            short: "imported \(result.inserted) check-in\(result.inserted == 1 ? "" : "s") from \(path)"
                + " (\(result.duplicates) already stored, \(problems.count) invalid skipped)")
    }

    /// Reads and checks the records in `range` of the file (JSON lines, or CSV rows under `csv`'s
    /// header) with a copy of the checker, holding the valid ones (at most half of
    /// `SortedCheckins.limit`); nil when any is invalid, or reading fails, or they do not fit:
    /// the reading thread then reads them itself.
    private func readBeside(
        _ path: String, _ range: Range<Int>, csv: CheckinCSV?, with checker: ImportChecker, expected: Int?
    ) -> (ImportChecker, SortedCheckins)? {
        var checker = checker
        let rows = SortedCheckins(now: now, expectedRows: expected, limit: SortedCheckins.limit / 2)
        var lines: [InputFile.Line] = []
        var quick: [QuickCheckin?] = []
        do {
            let file = try InputFile(part: path, range)
            while try file.nextRecords(into: &lines, max: 64) {
                if let csv { checker.quick(lines, csv, into: &quick) } else { checker.quickJSON(lines, into: &quick) }
                for (k, line) in lines.enumerated() {
                    if let q = quick[k] {
                        guard rows.append(q, from: line.text, checker, nil) else { return nil }
                        continue
                    }
                    guard line.problem == nil,
                        case .success(let c) = (csv?.record(line.string) ?? CheckinJSONLines.record(line.string))
                            .flatMap({ checker.check($0) }),
                        rows.append(c, &checker, nil)
                    else { return nil }
                }
            }
        } catch {
            return nil
        }
        return (checker, rows)
    }

    /// Reads and checks every record of `file`, holding the valid ones for the store
    /// (`SortedCheckins`, which hands them over when it is full; only until the first invalid
    /// one without `skipInvalid`: then all rolls back, and the rest is only checked), and the
    /// invalid ones in `problems`. False when the store stopped taking rows. `base`: where
    /// the file starts (a part), for the progress bar. `openQuote`: a CSV row whose quoted value
    /// did not end on its line, told when the next line (perhaps the next part's first) shows
    /// why; the caller tells one still open after the last part.
    private func check(
        _ file: InputFile, csv: CheckinCSV?, with checker: inout ImportChecker, _ skipInvalid: Bool,
        _ progress: Progress, _ handoff: Handoff<CheckinRows>, _ rows: SortedCheckins, _ problems: inout Problems,
        _ openQuote: inout OpenQuote?, at base: Int = 0
    ) throws -> Bool {
        var lines: [InputFile.Line] = []
        var quick: [QuickCheckin?] = []
        while try file.nextRecords(into: &lines, max: 64) {
            progress.update(base + file.bytesRead)
            if let csv {
                checker.quick(lines, csv, into: &quick)
            } else {
                checker.quickJSON(lines, into: &quick)
            }
            for (k, line) in lines.enumerated() {
                if let open = openQuote {
                    openQuote = nil
                    if line.problem == nil && CheckinCSV.closesQuote(line.text) {
                        // The line break was inside the quotes: this line is the rest of that record.
                        problems.add(line: open.line, CheckinCSV.lineBreak(open.problem, goesOnTo: line.number))
                        continue
                    }
                    problems.add(line: open.line, open.problem)
                }
                let store = problems.count == 0 || skipInvalid
                if let q = quick[k] {
                    if store, !rows.append(q, from: line.text, checker, handoff) { return false }  // the store failed
                    continue
                }
                let input: Result<CheckinInput, FieldProblem>
                if let why = line.problem {
                    input = .failure(FieldProblem(field: "", message: why))
                } else {
                    input = csv?.record(line.string) ?? CheckinJSONLines.record(line.string)
                }
                switch input.flatMap({ checker.check($0) }) {
                case .success(let c):
                    if store, !rows.append(c, &checker, handoff) { return false }
                case .failure(let p) where csv != nil && p.message == CheckinCSV.notClosedMessage:
                    openQuote = OpenQuote(line: line.number, problem: p)
                case .failure(let p): problems.add(line: line.number, p)
                }
            }
        }
        return true
    }
}

/// A CSV row whose quoted value did not end on its line (`check`).
struct OpenQuote {
    var line: Int
    var problem: FieldProblem
}

/// The invalid records of an input file: the first 20 messages, and how many in all.
struct Problems {
    let file: String
    private(set) var first: [String] = []
    private(set) var count = 0

    static let shown = 20

    mutating func add(line: Int, _ p: FieldProblem) {
        count += 1
        guard first.count < Self.shown else { return }
        first.append("\(file):\(line):\(p.field.isEmpty ? "" : " field \(quoted(p.field)):") \(p.message)")
    }

    /// The first messages, one a line; with `more`, a last line counting the others.
    func listed(more: Bool) -> String {
        first.joined(separator: "\n") + (more && count > Self.shown ? "\n... and \(count - Self.shown) more" : "")
    }
}

/// A progress bar on standard error, drawn only when it is a terminal: bytes
/// read of the file's size, or only the bytes when the size is not known.
final class Progress {
    let printer: Printer
    let total: Int?
    let label: String
    var last = -1

    init(printer: Printer, total: Int?, label: String) {
        self.printer = printer
        self.total = total
        self.label = label
    }

    /// Files smaller than this import too fast to need a bar.
    static let minimum = 1 << 20

    func update(_ done: Int) {
        guard printer.errIsTerminal, (total ?? done) >= Self.minimum else { return }
        guard let total else {
            let mb = done >> 20
            guard mb != last else { return }
            last = mb
            return printer.errRaw("\r\(label) \(mb) MB")
        }
        let percent = min(100, done * 100 / total)
        guard percent != last else { return }
        last = percent
        let bar = String(repeating: "#", count: percent / 4) + String(repeating: " ", count: 25 - percent / 4)
        printer.errRaw("\r\(label) [\(bar)] \(percent)% \(done >> 20)/\(total >> 20) MB")
    }

    func finish() {
        guard printer.errIsTerminal, last >= 0 else { return }
        printer.errRaw("\n")
    }
}
