import ArgumentParser
import CBuildInfo
import CMalloc
import Foundation
import StreakJobs
import StreakSQLite
import StreakStore

@main
struct Streakd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streakd",
        abstract: "Daily habit streaks across time zones, with reminders before a streak breaks.",
        discussion: """
            Every command takes --store (or STREAKD_STORE), --config, --now (or STREAKD_NOW) and -o. \
            Exit codes: 0 success, 1 unhealthy (status --check), 64 usage, 65 bad input data, 66 input file or \
            store missing, 69 service unavailable, 74 store damaged, 75 temporary failure, 77 permission denied \
            (a database role), 78 bad configuration; see streakd(1).
            """,
        version: Streakd.versionText,
        subcommands: [
            UserCommand.self, Checkin.self, Import.self, Status.self, Badges.self, Calendar.self, FreezeCommand.self,
            Pause.self, Resume.self, Repair.self, Preview.self, Tick.self, Refill.self, Metrics.self, Log.self,
            DeliveriesCommand.self, ConfigCommand.self, StoreCommand.self, TokenCommand.self, Serve.self,
        ])

    /// streakd's version; the Makefile bakes the commit in (`git describe`).
    static let version = "0.1.0"

    static var versionText: String {
        let commit = String(cString: streakd_commit())
        return "streakd \(version) (\(commit.isEmpty ? "commit unknown: built without make" : "git " + commit))"
    }

    /// Runs the command; errors for people go to standard error with their sysexits code.
    static func main() {
        // One malloc arena for every thread: a busy tick plans and delivers on threads of their
        // own, and an arena each held 25 MB more at the peak of a million-streak tick.
        mallopt(M_ARENA_MAX, 1)
        SQLiteStore.setUpProcess()
        let args = logLinesDefault(globalOptionsLast(Array(CommandLine.arguments.dropFirst())))
        if let unknown = Suggestions.unknownCommand(args) { fail(unknown, ExitStatus.usage.rawValue) }
        do {
            var command = try parseAsRoot(args)
            if !type(of: command).configuration.subcommands.isEmpty {
                // A command group without its subcommand (`streakd store`): the command line is
                // incomplete, a usage error; its help, on standard error, lists what it takes.
                FileHandle.standardError.write(Data((helpMessage(for: type(of: command)) + "\n").utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            try command.run()
        } catch let error as StreakdError {
            fail(error.message, error.status.rawValue)
        } catch let error as StoreError {
            fail(error.description, error.kind.exitStatus.rawValue)
        } catch {
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }  // --help, --version: stdout, 0
            // The parser's errors ("Error: Missing value ...") in streakd's form: one prefix for
            // every error a person or a script reads.
            var message = fullMessage(for: error)
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            guard !message.isEmpty else { Foundation.exit(code.rawValue) }
            fail(message, code.rawValue)
        }
    }

    /// Moves global options written before the subcommand (`streakd --now T
    /// status u1`) to after it, where the parser takes them.
    static func globalOptionsLast(_ args: [String]) -> [String] {
        let withValue = ["--store", "--config", "--now", "-o"]
        var leading: [String] = []
        var i = 0
        while i < args.count {
            let a = args[i]
            if withValue.contains(a) && i + 1 < args.count {
                leading += [a, args[i + 1]]
                i += 2
            } else if a == "-v" || a == "--verbose" || withValue.contains(where: { a.hasPrefix($0 + "=") }) {
                leading.append(a)
                i += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty, i < args.count else { return args }
        var rest = Array(args[i...])
        rest.insert(contentsOf: leading, at: rest.firstIndex(of: "--") ?? rest.endIndex)
        return rest
    }

    /// `log -n` with no number means 10, as journalctl's does: a `-n` or `--lines` at the end, or
    /// before another option, gets its 10.
    static func logLinesDefault(_ args: [String]) -> [String] {
        guard args.first == "log" else { return args }
        var out: [String] = []
        for (i, a) in args.enumerated() {
            out.append(a)
            guard a == "-n" || a == "--lines" else { continue }
            let next = i + 1 < args.count ? args[i + 1] : "-"
            if next.hasPrefix("-") && Int(next) == nil { out.append("10") }
        }
        return out
    }

    static func fail(_ message: String, _ code: Int32) -> Never {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false)
        let text = lines.enumerated().map { $0.offset == 0 ? "streakd: error: \($0.element)" : String($0.element) }
        FileHandle.standardError.write(Data((text.joined(separator: "\n") + "\n").utf8))
        Foundation.exit(code)
    }
}
