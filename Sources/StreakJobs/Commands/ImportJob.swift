import StreakCore
import StreakStore

/// `streakd import`: bulk check-ins, all-or-nothing unless `skipInvalid`.
extension Context {
    public enum ImportFormat: String, CaseIterable, Sendable {
        case jsonl
        case csv
    }

    public func importCheckins(path: String, format: ImportFormat?, skipInvalid: Bool) throws {
        let file = try InputFile.read(path)
        let format = format ?? (path.lowercased().hasSuffix(".csv") ? .csv : .jsonl)
        let parsed = format == .csv ? try CheckinCSV.parse(file) : CheckinJSONLines.parse(file)
        let users = try store.read { r in try r.users() }
        var rules = CheckinRules(
            users: Dictionary(uniqueKeysWithValues: users.map { ($0.id, $0.zone) }), zones: zones, now: now)
        if format == .jsonl { rules.names = [:] }
        var good: [NewCheckin] = []
        var problems: [String] = []
        let progress = Progress(printer: printer, total: parsed.count, label: "checking")
        for (n, record) in parsed.enumerated() {
            progress.update(n)
            switch record.result.flatMap(rules.check) {
            case .success(let c): good.append(c)
            case .failure(let p):
                let field = p.field.isEmpty ? "" : " field \(quoted(p.field)):"
                problems.append("\(file.name):\(record.line):\(field) \(p.message)")
            }
        }
        progress.finish()
        if !problems.isEmpty && !skipInvalid {
            let shown = problems.prefix(20).joined(separator: "\n")
            let more = problems.count > 20 ? "\n... and \(problems.count - 20) more" : ""
            throw StreakdError.data(
                "\(shown)\(more)\n\(problems.count) invalid record\(problems.count == 1 ? "" : "s"); nothing was imported (use --skip-invalid to import the valid ones)"
            )
        }
        for p in problems.prefix(20) { printer.warn("skipped \(p)") }
        let saving = Progress(printer: printer, total: good.count, label: "importing")
        let result = try store.write { w -> InsertResult in
            var total = InsertResult()
            for start in stride(from: 0, to: good.count, by: 10_000) {
                saving.update(start)
                let r = try w.insertCheckins(Array(good[start..<min(start + 10_000, good.count)]), storedAt: now)
                total.inserted += r.inserted
                total.duplicates += r.duplicates
            }
            try recordSettings(for: Set(good.map(\.streak)), in: w)
            return total
        }
        saving.finish()
        printer.record(
            .object([
                ("imported", .int(result.inserted)), ("duplicates", .int(result.duplicates)),
                ("skipped", .int(problems.count)),
            ]),
            short: "imported \(result.inserted) check-in\(result.inserted == 1 ? "" : "s") from \(file.name)"
                + " (\(result.duplicates) already stored, \(problems.count) invalid skipped)")
    }
}

/// A progress bar on standard error, drawn only when it is a terminal.
final class Progress {
    let printer: Printer
    let total: Int
    let label: String
    var lastPercent = -1

    init(printer: Printer, total: Int, label: String) {
        self.printer = printer
        self.total = total
        self.label = label
    }

    func update(_ done: Int) {
        guard printer.errIsTerminal, total >= 1000 else { return }
        let percent = done * 100 / total
        guard percent != lastPercent else { return }
        lastPercent = percent
        let bar = String(repeating: "#", count: percent / 4) + String(repeating: " ", count: 25 - percent / 4)
        printer.errRaw("\r\(label) [\(bar)] \(percent)% \(done)/\(total)")
    }

    func finish() {
        guard printer.errIsTerminal, total >= 1000 else { return }
        printer.errRaw("\r\(label) [\(String(repeating: "#", count: 25))] 100% \(total)/\(total)\n")
    }
}
