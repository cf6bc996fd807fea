import Foundation
import StreakTestKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31's configuration and input cases: a pipe with no writer, a hook command past what a
/// program can be given.
extension ConfigAndUsageTests {
    /// Issue 31, item 13: `--config FIFO` and `import FIFO` with no writer hung in `open`. A pipe
    /// nobody writes to is refused after a wait (78 for the configuration, 66 for input); one with
    /// a writer is read as a file.
    @Test func aPipeWithNoWriterIsRefusedNeverAHang() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let fifo = s.dir.appendingPathComponent("fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        for (args, code, message) in [
            (
                ["config", "check", "--config", fifo], Int32(78),
                "\(fifo): a pipe nobody wrote to within 10 s; name the configuration file itself"
            ),
            (
                ["import", fifo], 66,
                "\(fifo): a pipe nobody wrote to within 10 s; name a file, or - for standard input"
            ),
            (
                ["user", "import", fifo], 66,
                "\(fifo): a pipe nobody wrote to within 10 s; name a file, or - for standard input"
            ),
        ] {
            let r = try s.run(args, within: .seconds(40))
            #expect(r.code == code && r.err == error(message), "\(args): \(r)")
        }
        // With a writer it is read to its end.
        let writer = try Spawned(
            {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/bin/sh")
                p.arguments = [
                    "-c", "sleep 1; printf '%s\\n' '\(checkinLine("2026-11-20T18:00:00+01:00"))' > '\(fifo)'",
                ]
                return p
            }(), stdin: nil)
        let r = try s.run(["import", fifo], within: .seconds(40))
        #expect(r.code == 0 && r.out.contains("imported 1 check-in"), "\(r)")
        _ = writer.wait()
    }

    /// Issue 31, item 13: a hook's argument over what the kernel takes (E2BIG) is refused by
    /// `config check` with file and line, as a long template is.
    @Test func aHookCommandLongerThanAProgramTakesIsRefused() throws {
        let s = try Sandbox()
        let path = try s.file(
            "h.toml", "[[hooks]]\nname = \"x\"\ncommand = [\"/bin/echo\", \"\(String(repeating: "y", count: 5000))\"]\n"
        )
        let r = s.run(["config", "check", "--config", path])
        #expect(r.code == 78)
        #expect(
            r.err
                == error(
                    "\(path):3: hooks[1].command: is too long for a program's command line; use at most 256 strings of at "
                        + "most 4096 bytes each (a longer text belongs in a file the program reads)"), "\(r.err)")
    }
}
