import Foundation
import StreakCore

/// `-o short|json`.
public enum OutputFormat: String, CaseIterable, Sendable {
    case short
    case json
}

/// Where a job writes: records and messages to `out`, warnings and progress to `err`.
public struct Printer: Sendable {
    public var format: OutputFormat
    public var out: @Sendable (String) -> Void
    public var err: @Sendable (String) -> Void
    /// Whether standard error is a terminal (progress bars only then).
    public var errIsTerminal: Bool
    /// Whether standard output is a terminal (`badges` draws its bars only then).
    public var outIsTerminal: Bool
    /// Writes bytes to standard output as they are (nil: through `out`).
    public var outBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)?

    public init(
        format: OutputFormat, out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
        errIsTerminal: Bool = false, outIsTerminal: Bool = false,
        outBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil
    ) {
        self.outBytes = outBytes
        self.format = format
        self.out = out
        self.err = err
        self.errIsTerminal = errIsTerminal
        self.outIsTerminal = outIsTerminal
    }

    /// Prints to the process's standard output and error.
    public static func standard(format: OutputFormat) -> Printer {
        Printer(
            format: format,
            out: { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) },
            err: { line in FileHandle.standardError.write(Data((line + "\n").utf8)) },
            errIsTerminal: isatty(2) == 1, outIsTerminal: isatty(1) == 1,
            outBytes: { bytes in
                guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
                let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: start), count: bytes.count, deallocator: .none)
                FileHandle.standardOutput.write(data)
            })
    }

    /// Lines already ended by line breaks, printed at once, as they are (`preview`'s million):
    /// no string, nor copy, made of them when the printer writes bytes.
    func outLines(_ bytes: [UInt8]) {
        guard let outBytes else {
            out(String(decoding: bytes.last == 0x0A ? bytes.dropLast() : bytes[...], as: UTF8.self))
            return
        }
        bytes.withUnsafeBytes { outBytes($0) }
    }

    public func warn(_ message: String) { err("streakd: warning: " + message) }

    /// Writes to standard error without a line break (progress bars).
    func errRaw(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

    /// A record: its JSON object with `-o json`, else the short text.
    public func record(_ json: @autoclosure () -> JSON, short: @autoclosure () -> String) {
        out(line(json(), short: short()))
    }

    /// A record's line, to print with others in one write.
    func line(_ json: @autoclosure () -> JSON, short: @autoclosure () -> String) -> String {
        format == .json ? json().text : short()
    }

    /// Lines printed in one write (none: nothing).
    func lines(_ lines: [String]) {
        if !lines.isEmpty { out(lines.joined(separator: "\n")) }
    }
}

/// One line, and nothing a terminal would act on: control characters (C0, DEL, C1) become
/// spaces. For text streakd did not write itself and prints on a terminal: a hook's standard
/// error, a bus's error, a journal field (`log`). (0xC2 leads the UTF-8 of U+0080...U+00BF,
/// where the C1 controls are.)
func oneLine(_ line: some StringProtocol) -> String {
    guard line.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f || $0 == 0xc2 }) else { return String(line) }
    return String(
        String.UnicodeScalarView(
            line.unicodeScalars.map { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) ? " " : $0 }))
}
