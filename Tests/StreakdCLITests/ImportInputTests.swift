import Foundation
import StreakTestKit
import Testing

/// `import` of input that is no file of lines, or no file at all (ImportTests' suite).
extension ImportTests {
    /// Issue 17: `import /dev/zero` never ended (an endless line was counted to its end). A NUL
    /// byte ends the reading at once: no text holds one; so does a line past 16 MiB.
    @Test func endlessOrBinaryInputEndsPromptly() throws {
        let s = try Sandbox()
        s.addUser()
        try s.importLines([checkinLine("2026-11-19T10:00:00Z", id: "k1")])
        let zero = try s.run(["import", "/dev/zero"], within: .seconds(20))
        #expect(zero.code == 65)
        #expect(
            zero.err
                == error(
                    "/dev/zero:1: a NUL byte; the input must be UTF-8 text (is it binary, UTF-16, or a device?)\nnothing was imported"
                ))
        let csv = try s.run(["import", "/dev/zero", "--format", "csv", "--skip-invalid"], within: .seconds(20))
        #expect(csv.code == 65)
        #expect(csv.err.hasSuffix("nothing was imported\n"), "\(csv)")
        let users = try s.run(["user", "import", "/dev/zero"], within: .seconds(20))
        #expect(users.code == 65)
        #expect(
            users.err
                == error(
                    "/dev/zero:1: a NUL byte; the input must be UTF-8 text (is it binary, UTF-16, or a device?)\nno user was added or changed"
                ))

        // A valid line, then UTF-16 text: nothing goes in, even with --skip-invalid.
        let utf16 = try s.file(
            "u16.jsonl",
            bytes: Array((checkinLine("2026-11-20T10:00:00Z", id: "k2") + "\n").utf8)
                + Array(checkinLine("2026-11-20T11:00:00Z").utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        let wide = try s.run(["import", utf16, "--skip-invalid"], within: .seconds(20))
        #expect(wide.code == 65)
        #expect(
            wide.err
                == error(
                    "\(utf16):2: a NUL byte; the input must be UTF-8 text (is it binary, UTF-16, or a device?)\nnothing was imported"
                ))

        // One line of 17 MiB without a break (what a device of endless text would send).
        let long = try s.file("long.jsonl", bytes: [UInt8](repeating: 97, count: 17 << 20))
        let endless = try s.run(["import", long, "--skip-invalid"], within: .seconds(20))
        #expect(endless.code == 65)
        #expect(
            endless.err
                == error(
                    "\(long):1: the line goes on for over 16 MiB without a line break; this is not a file of lines (a device, or a binary file?)\nnothing was imported"
                ))
        #expect(try s.statusObject()["total_checkins"] as? Int == 1)
    }

    @Test func missingFileIsExit66() throws {
        let s = try Sandbox()
        s.addUser()
        let path = s.dir.path + "/nope.jsonl"
        let r = s.run(["import", path])
        #expect(r.code == 66)
        #expect(r.out == "")
        #expect(r.err == error("\(path): no such file"))
        let dir = s.run(["import", s.dir.path])
        #expect(dir.code == 66)
        #expect(dir.err == error("\(s.dir.path): cannot read the file"))
    }
}
