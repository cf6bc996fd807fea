import Foundation
import StreakTestKit
import Testing

/// The bash completion script, run by bash itself: `complete -p`, then the completion function
/// called as bash calls it on TAB, with COMP_WORDS and friends set; it calls streakd back for
/// user ids, streak ids and zones.
@Suite(.fastTier) struct CompletionTests {
    /// A store with ana (two streaks), anton and bo; the completion script in a file.
    static func setUp() throws -> (Sandbox, script: String) {
        let s = try Sandbox()
        s.addUser("ana")
        s.addUser("anton")
        s.addUser("bo", tz: "Asia/Tokyo")
        #expect(s.run(["checkin", "ana", "--streak", "workout", "--at", "2026-11-21T08:00:00+01:00"]).code == 0)
        let script = s.run(["--generate-completion-script", "bash"])
        #expect(script.code == 0)
        return (s, try s.file("streakd.bash", script.out))
    }

    /// What bash offers for the command line `line` (the cursor at its end), in a bash of its own.
    static func complete(
        _ line: String, script: String, in s: Sandbox, env: [String: String] = [:]
    ) -> [String] {
        let bin = URL(fileURLWithPath: streakdBinary).deletingLastPathComponent().path
        let program = """
            source \(quoted(script))
            COMP_LINE=\(quoted(line))
            COMP_POINT=${#COMP_LINE}
            read -r -a COMP_WORDS <<< "$COMP_LINE"
            [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            prev=""; (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
            _streakd "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "$prev"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let environment = s.environment.merging(["PATH": bin + ":/usr/bin:/bin", "LANG": "C.UTF-8"]) { $1 }
            .merging(env) { $1 }
        let r = run(["/bin/bash", "--norc", "--noprofile", "-c", program], env: environment, timeout: .seconds(30))
        #expect(r.code == 0 && r.err.isEmpty, "\(line): \(r)")
        return r.out.split(separator: "\n").map(String.init).filter { !$0.isEmpty }.sorted()
    }

    static func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test func bashRegistersTheFunction() throws {
        let (s, script) = try Self.setUp()
        let r = run(
            ["/bin/bash", "--norc", "--noprofile", "-c", "source \(Self.quoted(script)) && complete -p streakd"],
            env: ["PATH": "/usr/bin:/bin"])
        #expect(r.out == "complete -o filenames -F _streakd streakd\n", "\(r)")
        _ = s
    }

    @Test func userIDsComeFromTheStoreTheCommandLineNames() throws {
        let (s, script) = try Self.setUp()
        let store = ["STREAKD_STORE": s.store]
        #expect(Self.complete("streakd status ", script: script, in: s, env: store) == ["ana", "anton", "bo"])
        #expect(Self.complete("streakd status an", script: script, in: s, env: store) == ["ana", "anton"])
        #expect(Self.complete("streakd calendar b", script: script, in: s, env: store) == ["bo"])
        #expect(Self.complete("streakd preview --user a", script: script, in: s, env: store) == ["ana", "anton"])
        #expect(Self.complete("streakd log --user ", script: script, in: s, env: store) == ["ana", "anton", "bo"])
        #expect(
            Self.complete("streakd user remove --store \(s.store) ant", script: script, in: s) == ["anton"])
        // No store there: nothing to offer, and none made.
        let missing = s.dir.appendingPathComponent("missing.sqlite").path
        #expect(Self.complete("streakd status --store \(missing) ", script: script, in: s).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func streaksZonesKindsAndLanguages() throws {
        let (s, script) = try Self.setUp()
        let store = ["STREAKD_STORE": s.store]
        #expect(
            Self.complete("streakd checkin ana --streak ", script: script, in: s, env: store) == ["daily", "workout"])
        #expect(Self.complete("streakd status bo --streak ", script: script, in: s, env: store) == ["daily"])
        #expect(
            Self.complete("streakd user add x --tz Europe/Be", script: script, in: s)
                == ["Europe/Belfast", "Europe/Belgrade", "Europe/Berlin"])
        #expect(Self.complete("streakd user set ana --tz Asia/Tok", script: script, in: s) == ["Asia/Tokyo"])
        #expect(
            Self.complete("streakd log --kind ", script: script, in: s)
                == [
                    "at_risk", "badge_unlocked", "freeze_refilled", "freeze_used", "level_up", "streak_broken",
                    "streak_repaired",
                ])
        #expect(Self.complete("streakd user add x --tz UTC --lang ", script: script, in: s) == ["en", "zh-Hans"])
        #expect(
            Self.complete("streakd log -o ", script: script, in: s) == [
                "cat", "json", "json-pretty", "short", "verbose",
            ])
    }
}
