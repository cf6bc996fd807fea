import Foundation
import StreakTestKit
import Testing

@testable import StreakJobs

/// No journal pacing under the shipped system units (SPEC §12): they set
/// STREAKD_JOURNAL_PACING=off beside LogRateLimitIntervalSec=0; a `[journal] burst` wins.
@Suite(.fastTier) struct JournalPacingConfigTests {
    let exempt = ["STREAKD_JOURNAL_PACING": "off"]

    @Test func theShippedUnitsTurnPacingOff() throws {
        let config = try ConfigLoader.parse("", file: "c.toml")
        #expect(ConfigLoader.unpacedWhereExempt(config, fileSetsBurst: false, environment: exempt).journalBurst == 0)
    }

    @Test func elsewherePacingStaysTheDefault() throws {
        let config = try ConfigLoader.parse("", file: "c.toml")
        #expect(ConfigLoader.unpacedWhereExempt(config, fileSetsBurst: false, environment: [:]).journalBurst == 9_500)
        let other = ["STREAKD_JOURNAL_PACING": "on"]
        #expect(ConfigLoader.unpacedWhereExempt(config, fileSetsBurst: false, environment: other).journalBurst == 9_500)
    }

    /// Through `load`, which sees whether the file sets the burst.
    @Test func aBurstInTheFileWins() throws {
        let dir = try ScratchDir()
        let set = dir.path + "/set.toml"
        let unset = dir.path + "/unset.toml"
        try "[journal]\nburst = 5000\n".write(toFile: set, atomically: true, encoding: .utf8)
        try "[journal]\ninterval_seconds = 30\n".write(toFile: unset, atomically: true, encoding: .utf8)
        #expect(try ConfigLoader.load(path: set, explicit: true, environment: exempt).journalBurst == 5_000)
        #expect(try ConfigLoader.load(path: unset, explicit: true, environment: exempt).journalBurst == 0)
        #expect(try ConfigLoader.load(path: unset, explicit: true, environment: [:]).journalBurst == 9_500)
    }

    /// The units set the variable beside the exemption, in both system units.
    @Test func theSystemUnitsSetItBesideTheExemption() throws {
        for unit in ["streakd-tick.service", "streakd-refill.service"] {
            let text = try String(contentsOfFile: packageRoot + "/deploy/system/" + unit, encoding: .utf8)
            let lines = text.split(separator: "\n").map(String.init)
            let exemption = try #require(lines.firstIndex(of: "LogRateLimitIntervalSec=0"), "\(unit)")
            #expect(lines[exemption...].prefix(6).contains("Environment=STREAKD_JOURNAL_PACING=off"), "\(unit)")
        }
    }
}
