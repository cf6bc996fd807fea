import Foundation
import Testing

/// A journald that answers (started standalone when none does).
func startJournald() throws { try TestJournal.ensureRunning() }

/// Journal entries matching journalctl `matches`, as JSON objects; waits up to 10 s for at least
/// `count` (journald makes entries readable a moment after they are sent). Matches of one field
/// are alternatives (journalctl's OR); keep them narrow: the journal outlives test runs.
func journalEntries(_ matches: [String], count: Int) throws -> [[String: Any]] {
    let deadline = Date().addingTimeInterval(10)
    while true {
        let data = try journalctl(["-o", "json"] + matches)
        let entries = try String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            try jsonObject(String($0))
        }
        if entries.count >= count || Date() > deadline { return entries }
        Thread.sleep(forTimeInterval: 0.1)
    }
}

/// What `journalctl --no-pager ARGS` prints on standard output.
func journalctl(_ arguments: [String]) throws -> Data {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
    p.arguments = ["--no-pager"] + arguments
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return data
}
