import Foundation

/// A line-oriented input file (or standard input), read in 1 MiB chunks and
/// handed out one line at a time: memory stays the same whatever the size.
final class InputFile {
    /// The name errors use: the path, or `<stdin>`.
    let name: String
    /// The size in bytes when known (a regular file), for progress.
    let size: Int?
    /// Bytes read from the file so far.
    private(set) var bytesRead = 0

    static let maxLine = 64 * 1024
    /// A line is counted to its end up to this length; past it the input is not lines of text
    /// (`/dev/zero`, an endless line), and reading stops.
    static let maxCounted = 16 << 20

    /// Why reading stopped before the end: the input is not a file of text lines.
    struct NotText: Error {
        let message: String
    }

    private let handle: FileHandle
    /// Bytes read at a time: 1 MiB (tests use less).
    private let chunk: Int
    /// Room for a chunk after the rest of a line (at most `maxLine` bytes) from the chunk before.
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    /// The bytes read and not handed out yet.
    private var start = 0
    private var end = 0
    private var atEnd = false
    private var lineNumber = 0
    /// The bytes left to read when the file is read up to a place (`part`), else nil.
    private var left: Int?
    /// Where the file's bytes start for this reader (`part`); a byte-order mark only counts there.
    private var from = 0
    /// The number of the first line, less one.
    private var firstLine = 0

    /// One line: its text without the line break, a final CR or (on line 1) a
    /// byte-order mark, or why it could not be read.
    struct Line {
        let number: Int
        /// Valid until the next call to `next()`; empty when `problem` is set.
        let text: UnsafeBufferPointer<UInt8>
        /// Invalid UTF-8, or longer than `maxLine`.
        let problem: String?
        /// All bytes below 0x80: every byte is one character.
        let isASCII: Bool

        var string: Substring { Substring(String(decoding: text, as: UTF8.self)) }

        /// Empty or only whitespace: not a record.
        var isBlank: Bool {
            guard problem == nil, let first = text.first else { return problem == nil }
            if first < 0x80 && first != 32 && !(9...13).contains(first) { return false }
            return string.allSatisfy(\.isWhitespace)
        }
    }

    /// Opens `path`, or standard input for `-`.
    init(_ path: String, chunk: Int = 1 << 20) throws {
        self.chunk = chunk
        if path == "-" {
            handle = FileHandle.standardInput
            name = "<stdin>"
            size = nil
        } else {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                throw StreakdError(.noInput, "\(path): no such file")
            }
            guard !isDir.boolValue else { throw StreakdError(.noInput, "\(path): cannot read the file") }
            do {
                handle = try OpenToRead.open(path)
            } catch .noWriter(let waited) {
                throw StreakdError(
                    .noInput,
                    "\(path): a pipe nobody wrote to within \(waited.components.seconds) s; name a file, or - for "
                        + "standard input")
            } catch {
                throw StreakdError(.noInput, "\(path): cannot read the file")
            }
            name = path
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            size = attributes?[.type] as? FileAttributeType == .typeRegular ? (attributes?[.size] as? Int) : nil
        }
        buffer = .allocate(capacity: Self.maxLine + 1 + chunk)
    }

    /// A part of a regular file: the bytes `range` (the lines that start in it, the
    /// first at its start), their lines numbered from `firstLine`.
    init(part path: String, _ range: Range<Int>, firstLine: Int = 1, chunk: Int = 1 << 20) throws {
        self.chunk = chunk
        guard let h = FileHandle(forReadingAtPath: path) else {
            throw StreakdError(.noInput, "\(path): cannot read the file")
        }
        handle = h
        name = path
        size = range.count
        from = range.lowerBound
        left = range.count
        lineNumber = firstLine - 1
        self.firstLine = firstLine - 1
        buffer = .allocate(capacity: Self.maxLine + 1 + chunk)
        do { try handle.seek(toOffset: UInt64(range.lowerBound)) } catch {
            throw StreakdError(.noInput, "\(path): cannot read the file")
        }
    }

    /// The lines handed out (or counted) so far.
    var lines: Int { lineNumber - firstLine }

    /// Where the first line that starts at or after `offset` starts (the file's size when none does).
    static func lineStart(_ path: String, after offset: Int, size: Int) throws -> Int {
        let file = try InputFile(part: path, offset..<size, chunk: 1 << 16)
        guard offset > 0 else { return 0 }
        var at = offset
        while true {
            try file.fill()
            if let newline = file.newline(file.start..<file.end) { return at + newline - file.start + 1 }
            at += file.end - file.start
            file.start = file.end
            if file.atEnd { return size }
        }
    }

    deinit {
        buffer.deallocate()
        if name != "<stdin>" { try? handle.close() }
    }

    /// The next line, or nil at the end. A last line without a line break that
    /// holds nothing is no line (a file "a\n" has one line, as does "a").
    func next() throws -> Line? {
        while true {
            if let newline = newline(start..<end) {
                let raw = start..<newline
                start = newline + 1
                return try line(raw)
            }
            if atEnd {
                guard start < end else { return nil }
                let raw = start..<end
                start = end
                let last = try line(raw)
                return last.problem == nil && last.text.isEmpty ? nil : last
            }
            if end - start > Self.maxLine { return try tooLong() }
            try fill()
        }
    }

    /// About how many lines are left, from the file's size and the lines in the
    /// bytes read ahead; nil when the size is not known.
    func estimatedLines() throws -> Int? {
        guard let size else { return nil }
        if start == end && !atEnd { try fill() }
        let ahead = UnsafeBufferPointer(rebasing: buffer[start..<end])
        let lines = ahead.reduce(0) { $1 == 10 ? $0 + 1 : $0 }
        return ahead.isEmpty ? 0 : (size - bytesRead + ahead.count) * max(lines, 1) / ahead.count
    }

    /// The next line that holds something: blank lines are no records.
    func nextRecord() throws -> Line? {
        while let line = try next() {
            if !line.isBlank { return line }
        }
        return nil
    }

    /// The next records, up to `max`, all valid until the next call (they are in the
    /// buffer already after the first); false at the end.
    func nextRecords(into lines: inout [Line], max: Int) throws -> Bool {
        lines.removeAll(keepingCapacity: true)
        guard let first = try nextRecord() else { return false }
        lines.append(first)
        while lines.count < max, let newline = newline(start..<end) {
            let raw = start..<newline
            start = newline + 1
            let line = try line(raw)
            if !line.isBlank { lines.append(line) }
        }
        return true
    }

    private func line(_ raw: Range<Int>) throws -> Line {
        lineNumber += 1
        try checkText(raw)
        if raw.count > Self.maxLine { return problem("the line is \(raw.count) bytes long; at most \(Self.maxLine)") }
        var text = UnsafeBufferPointer(rebasing: buffer[raw])
        var isASCII = Self.isASCII(text)
        if !isASCII && String(validating: text, as: UTF8.self) == nil {
            return problem("invalid UTF-8; the file must be UTF-8 text")
        }
        if text.last == 13 { text = UnsafeBufferPointer(rebasing: text.dropLast()) }
        if lineNumber == 1 && from == 0 && text.starts(with: [0xEF, 0xBB, 0xBF]) {  // a byte-order mark
            text = UnsafeBufferPointer(rebasing: text.dropFirst(3))
            isASCII = Self.isASCII(text)
        }
        return Line(number: lineNumber, text: text, problem: nil, isASCII: isASCII)
    }

    private func problem(_ why: String) -> Line {
        Line(number: lineNumber, text: UnsafeBufferPointer(start: nil, count: 0), problem: why, isASCII: true)
    }

    /// A line longer than any valid one: counted to its end, never held, up to `maxCounted`.
    private func tooLong() throws -> Line {
        lineNumber += 1
        try checkText(start..<end)
        var length = end - start
        start = end
        var ended = false
        while !ended && !atEnd {
            try fill()
            let newline = newline(start..<end)
            try checkText(start..<(newline ?? end))
            length += (newline ?? end) - start
            start = newline.map { $0 + 1 } ?? end
            ended = newline != nil
            if length > Self.maxCounted {
                throw NotText(
                    message:
                        "\(name):\(lineNumber): the line goes on for over \(Self.maxCounted >> 20) MiB without a line break; this is not a file of lines (a device, or a binary file?)"
                )
            }
        }
        return problem("the line is \(length) bytes long; at most \(Self.maxLine)")
    }

    /// Where the first line break in `range` is (glibc's `memchr` reads many bytes a step).
    private func newline(_ range: Range<Int>) -> Int? {
        guard !range.isEmpty, let found = memchr(buffer.baseAddress! + range.lowerBound, 10, range.count) else {
            return nil
        }
        return UnsafeMutableRawPointer(found).assumingMemoryBound(to: UInt8.self) - buffer.baseAddress!
    }

    /// A NUL byte is in no text: the input is binary, UTF-16 or a device such as
    /// `/dev/zero`, and reading on would only find more invalid lines.
    private func checkText(_ raw: Range<Int>) throws {
        guard !raw.isEmpty, memchr(buffer.baseAddress! + raw.lowerBound, 0, raw.count) != nil else { return }
        throw NotText(
            message:
                "\(name):\(lineNumber): a NUL byte; the input must be UTF-8 text (is it binary, UTF-16, or a device?)")
    }

    /// Moves the unread bytes to the front and reads the next chunk after them.
    private func fill() throws {
        if start > 0 {
            let rest = end - start
            if rest > 0 {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(
                    from: buffer.baseAddress! + start, byteCount: rest)
            }
            (start, end) = (0, rest)
        }
        let data: Data?
        if left == 0 {
            atEnd = true
            return
        }
        do {
            data = try handle.read(upToCount: min(chunk, left ?? chunk))
        } catch {
            throw StreakdError(.noInput, "\(name): cannot read the file")
        }
        guard let data, !data.isEmpty else {
            atEnd = true
            return
        }
        _ = data.copyBytes(to: UnsafeMutableBufferPointer(rebasing: buffer[end..<(end + data.count)]))
        end += data.count
        bytesRead += data.count
        if let l = left { left = l - data.count }
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for b in bytes { any |= b }
        return any < 0x80
    }
}
