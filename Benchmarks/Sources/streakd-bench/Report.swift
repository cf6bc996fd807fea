import Foundation

/// The results file (one JSON object per line) as a table: each goal of the issue as a ratio
/// of two figures from the same run, and the figures that are there for information.
struct ResultTable {
    typealias Row = (what: String, streakd: String, reference: String, ratio: String, goal: String, met: Bool?)

    let results: [[String: Any]]
    private(set) var rows: [Row] = []

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        results = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        build()
    }

    func find(_ measure: String, _ subject: String) -> [String: Any]? {
        results.last { $0["measure"] as? String == measure && $0["subject"] as? String == subject }
    }

    static func number(_ r: [String: Any]?, _ key: String) -> Double? { (r?[key] as? NSNumber)?.doubleValue }
    static func rate(_ r: [String: Any]?) -> Double? {
        guard let items = number(r, "items"), let s = number(r, "seconds"), s > 0 else { return nil }
        return items / s
    }
    static func f(_ x: Double?, _ unit: String) -> String {
        guard let x else { return "missing" }
        if unit == "/s" {
            return x >= 1e6 ? String(format: "%.2fM/s", x / 1e6) : String(format: "%.0fk/s", x / 1e3)
        }
        if unit == "s" { return x < 0.1 ? String(format: "%.1f ms", x * 1000) : String(format: "%.2f s", x) }
        return String(format: "%.0f MB", x)
    }

    mutating func ratioRow(_ what: String, _ s: [String: Any]?, _ r: [String: Any]?, byTime: Bool, goal: Double) {
        let ratio: Double? =
            byTime
            ? Self.number(r, "seconds").flatMap { rs in Self.number(s, "seconds").map { rs / $0 } }
            : Self.rate(s).flatMap { ss in Self.rate(r).map { ss / $0 } }
        let show = { (x: [String: Any]?) in
            byTime
                ? Self.f(Self.number(x, "seconds"), "s")
                : Self.f(Self.rate(x), "/s") + " (" + Self.f(Self.number(x, "seconds"), "s") + ")"
        }
        rows.append(
            (
                what, show(s), show(r), ratio.map { String(format: "%.2f×", $0) } ?? "missing",
                String(format: "≥ %.2g×", goal), ratio.map { $0 >= goal }
            ))
    }

    mutating func limitRow(_ what: String, _ value: Double?, unit: String, limit: Double, note: String = "") {
        rows.append(
            (what, Self.f(value, unit) + note, "", "", "≤ " + Self.f(limit, unit), value.map { $0 <= limit }))
    }

    mutating func info(_ what: String, _ streakd: String, _ reference: String = "") {
        rows.append((what, streakd, reference, "", "", nil))
    }

    mutating func build() {
        let plan = find("planning", "streakd")
        ratioRow(
            "planning: next reminder of every user + one quarter's due set", plan, find("planning", "postgresql"),
            byTime: false, goal: 10)
        ratioRow(
            "import of check-ins (rows/s)", find("import", "streakd"), find("import", "sqlite3"), byTime: false,
            goal: 0.5)
        ratioRow(
            "streak recomputation from full history", find("recompute", "streakd"), find("recompute", "postgresql"),
            byTime: true, goal: 20)
        // End to end, as a user runs them: fresh processes, wall clock; each at most 1.5 times
        // PostgreSQL's planning query over the same users (a ratio of at least 1/1.5).
        let previews = [
            ("preview", "preview --until 24h over every user, after a tick, vs the planning query"),
            ("preview-imported", "preview --until 24h right after the import (no tick yet)"),
            ("preview-json", "preview --until 24h -o json, after a tick"),
            ("preview-at-risk", "preview --until 24h, an evening when most streaks are at risk"),
        ]
        for (measure, label) in previews {
            ratioRow(label, find(measure, "streakd"), find("planning", "postgresql"), byTime: true, goal: 1 / 1.5)
        }
        let firstLines = previews.compactMap { Self.number(find($0.0, "streakd"), "first_line_seconds") }
        limitRow(
            "preview: time to its first line (slowest of every preview's runs)", firstLines.max(), unit: "s",
            limit: 0.2)
        ratioRow(
            "import of check-ins as JSON lines (rows/s) vs sqlite3's CSV", find("import-jsonl", "streakd"),
            find("import", "sqlite3"), byTime: false, goal: 1)
        limitRow(
            "status of one user (cold process, median)", Self.number(find("status", "streakd"), "median_seconds"),
            unit: "s", limit: 0.025)
        let journal = find("journal", "streakd")
        let c = find("journal", "c-sd_journal_send")
        ratioRow("journal emission (entries/s)", journal, c, byTime: false, goal: 0.8)
        let lost = [journal, c].map { (Self.number($0, "items") ?? 0) - (Self.number($0, "kept") ?? -1) }
        rows.append(
            (
                "journal: entries lost", String(format: "%.0f", lost[0]), String(format: "%.0f", lost[1]), "", "0",
                lost[0] == 0
            ))
        let quiet = find("tick-quiet", "streakd")
        limitRow(
            "tick with nothing due (cold process, median)", Self.number(quiet, "median_seconds"), unit: "s",
            limit: 0.025)
        let busy = find("tick-busy", "streakd")
        let cpu = Self.number(busy, "cpu_seconds").map { String(format: ", %.2f s CPU", $0) } ?? ""
        limitRow(
            "busy quarter-hour tick at 1M users, unpaced (wall)", Self.number(busy, "seconds"), unit: "s", limit: 1,
            note: cpu)
        let peaks = results.filter { $0["subject"] as? String == "streakd" }.compactMap {
            Self.number($0, "max_rss_mb")
        }
        limitRow("peak memory of any streakd process at 1M users", peaks.max(), unit: "MB", limit: 200)
        let each = [
            ("user-import", "user import"), ("import", "import (CSV)"), ("import-jsonl", "import (JSON lines)"),
            ("tick-catchup", "first tick"), ("tick-busy", "busy tick"), ("tick-quiet", "quiet tick"),
            ("preview", "preview"), ("preview-json", "preview JSON"), ("preview-imported", "preview after the import"),
            ("preview-at-risk", "preview at risk"), ("status", "status"),
        ].compactMap { measure, label in
            Self.number(find(measure, "streakd"), "max_rss_mb").map { label + " " + Self.f($0, "MB") }
        }
        info("peak memory of each streakd command (information)", each.joined(separator: ", "))
        info(
            "planning, Python zoneinfo loop (information)", "",
            Self.f(Self.rate(find("planning", "python-zoneinfo")), "/s"))
        info("planning: loading the users from the store (information)", Self.f(Self.number(plan, "load_seconds"), "s"))
        let listed = previews.compactMap { measure, _ in
            Self.number(find(measure, "streakd"), "lines").map { measure + " " + String(format: "%.0f", $0) }
        }
        info("preview: notifications listed (information)", listed.joined(separator: ", "))
        postgresRows()
        for (measure, label) in [
            ("user-import", "user import of 1M users"), ("tick-catchup", "first tick after the import (every streak)"),
            ("pg-user-import", "PostgreSQL: user import of 1M users"),
            ("pg-tick-catchup", "PostgreSQL: first tick after the import (every streak)"),
        ] {
            let r = find(measure, "streakd")
            info(
                label + " (information)",
                Self.f(Self.number(r, "seconds"), "s") + ", " + Self.f(Self.number(r, "max_rss_mb"), "MB"))
        }
    }

    /// The PostgreSQL store (issue 16): one database on the reference's cluster.
    mutating func postgresRows() {
        guard find("pg-import", "streakd") != nil else { return }
        ratioRow(
            "PostgreSQL: import of check-ins (rows/s) beside psql \\copy", find("pg-import", "streakd"),
            find("pg-import", "psql"), byTime: false, goal: 0.5)
        for (measure, label) in [
            ("pg-tick-busy", "PostgreSQL: busy quarter-hour tick, one host (wall)"),
            ("pg-tick-busy-2", "PostgreSQL: busy quarter-hour tick, two hosts at once (wall)"),
            ("pg-preview", "PostgreSQL: preview --until 24h (wall)"),
        ] {
            let r = find(measure, "streakd")
            let cpu = Self.number(r, "cpu_seconds").map { String(format: ", %.2f s CPU", $0) } ?? ""
            limitRow(label, Self.number(r, "seconds"), unit: "s", limit: 2, note: cpu)
        }
        let split = find("pg-tick-busy-2-split", "streakd")
        info(
            "PostgreSQL: notifications each of the two hosts recorded (information)",
            "h1 \(Self.number(split, "h1").map { String(Int($0)) } ?? "?"), h2 \(Self.number(split, "h2").map { String(Int($0)) } ?? "?")"
        )
    }

    var allMet: Bool { rows.allSatisfy { $0.met != false } }

    var text: String {
        let header: Row = ("", "streakd", "reference", "ratio", "goal", nil)
        let all = [header] + rows
        let widths = [0, 1, 2, 3, 4].map { i in all.map { Self.cells($0)[i].count }.max()! }
        return all.map { row in
            zip(Self.cells(row), widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
                separator: "  ")
                + (row.met == nil ? "" : row.met! ? "  met" : "  NOT MET")
        }.joined(separator: "\n")
    }

    var markdown: String {
        let lines = rows.map { r in
            "| " + Self.cells(r).joined(separator: " | ") + " | " + (r.met == nil ? "" : r.met! ? "met" : "**not met**")
                + " |"
        }
        return (["|  | streakd | reference | ratio | goal |  |", "| --- | --- | --- | --- | --- | --- |"] + lines)
            .joined(separator: "\n") + "\n"
    }

    static func cells(_ r: Row) -> [String] { [r.what, r.streakd, r.reference, r.ratio, r.goal] }
}
