import StreakCore

/// The default message of each notice (SPEC §4).
enum Messages {
    static func text(_ n: Notice, streak: String) -> String {
        let name = streak == "daily" ? "" : " \(streak)"
        switch n.kind {
        case .atRisk:
            var text = "Your \(n.length)-day\(name) streak is at risk! Check in today to keep it going."
            if n.goal > 1 { text += " \(n.count) of \(n.goal) check-ins done." }
            return text + " " + freezesLeft(n.freezes)
        case .freezeUsed:
            return "A freeze kept your \(n.length)-day\(name) streak alive on \(n.date). " + freezesLeft(n.freezes)
        case .streakBroken:
            return "Your \(n.length)-day\(name) streak ended on \(n.date). Check in today to start a new one."
        case .freezeRefilled:
            return "You have a new freeze for your\(name.isEmpty ? "" : name) streak: " + freezesLeft(n.freezes)
        }
    }

    static func freezesLeft(_ n: Int) -> String {
        switch n {
        case 0: "No freezes left."
        case 1: "1 freeze left."
        default: "\(n) freezes left."
        }
    }
}
