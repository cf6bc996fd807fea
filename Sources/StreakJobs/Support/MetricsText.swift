import Foundation

/// Prometheus's text exposition format (0.0.4) and OpenMetrics 1.0, written out from values read
/// at once: streakd's metrics are the store's state when asked, not counters a long-lived process
/// keeps (docs/ARCHITECTURE.md, "Metrics").
public struct MetricFamily: Sendable {
    public enum Kind: String, Sendable {
        case counter
        case gauge
    }

    /// The family's name; a counter's ends in `_total` (its samples' name).
    public var name: String
    public var help: String
    public var kind: Kind
    public var samples: [(labels: [(String, String)], value: Double)]

    public init(
        _ name: String, _ kind: Kind, help: String, samples: [(labels: [(String, String)], value: Double)] = []
    ) {
        self.name = name
        self.kind = kind
        self.help = help
        self.samples = samples
    }

    /// One sample without labels.
    public init(_ name: String, _ kind: Kind, help: String, value: Double) {
        self.init(name, kind, help: help, samples: [([], value)])
    }
}

public enum MetricsText {
    /// The content type of each format, for an HTTP answer.
    public static let prometheusType = "text/plain; version=0.0.4; charset=utf-8"
    public static let openMetricsType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// Whether an HTTP `Accept` header prefers OpenMetrics to the text format, by its q-values
    /// (RFC 9110 §12.5.1): OpenMetrics named with a weight above 0 and at least the text
    /// format's (`text/plain`, `text/*` or `*/*`; none named: 0). No header: the text format.
    public static func prefersOpenMetrics(_ accept: String?) -> Bool {
        var open = 0.0
        var text = 0.0
        for range in (accept ?? "").split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            switch type {
            case "application/openmetrics-text": open = max(open, q)
            case "text/plain", "text/*", "*/*": text = max(text, q)
            default: break
            }
        }
        return open > 0 && open >= text
    }

    /// The families in the format asked for. OpenMetrics names a counter's family without
    /// `_total` and ends with `# EOF`; the text format names it with the suffix.
    public static func render(_ families: [MetricFamily], openMetrics: Bool) -> String {
        var out = ""
        for family in families {
            var name = family.name
            if openMetrics && family.kind == .counter && name.hasSuffix("_total") { name.removeLast(6) }
            out += "# HELP \(name) \(escape(family.help, quote: false))\n# TYPE \(name) \(family.kind.rawValue)\n"
            for (labels, value) in family.samples {
                out += family.name
                if !labels.isEmpty {
                    out += "{" + labels.map { "\($0.0)=\"\(escape($0.1, quote: true))\"" }.joined(separator: ",") + "}"
                }
                out += " " + number(value) + "\n"
            }
        }
        return openMetrics ? out + "# EOF\n" : out
    }

    /// Whole numbers without a fraction (counts, timestamps), others as Swift prints them.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// A label value (`\`, `"`, line breaks escaped) or help text (`\` and line breaks).
    static func escape(_ text: String, quote: Bool) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quote: out += "\\\""
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
