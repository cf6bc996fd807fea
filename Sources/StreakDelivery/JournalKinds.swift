import StreakCore

/// What the journal needs of each kind (see deploy/streakd.catalog).
extension NotificationKind {
    /// The 128-bit journal MESSAGE_ID, as 32 lowercase hex digits.
    public var messageID: String {
        switch self {
        case .atRisk: "cf4039696c9c459e89e0e7f18de192c5"
        case .freezeUsed: "76f95083794c4232b790117a598a968a"
        case .streakBroken: "f5195bfdfc6c4e19bb9006c1f3d9bff6"
        case .freezeRefilled: "cf494c00cced4596850808f5f9c0456a"
        case .badgeUnlocked: "6bdd273e39db439d8b318a9fad96afc7"
        case .levelUp: "038501fae1764b80a8b97e2aaebfa81f"
        case .streakRepaired: "f414d9be80674de5a52917666e782234"
        }
    }

    /// syslog priority: 4 warning, 5 notice, 6 info.
    public var priority: Int {
        switch self {
        case .atRisk: 5
        case .freezeUsed, .freezeRefilled, .badgeUnlocked, .levelUp, .streakRepaired: 6
        case .streakBroken: 4
        }
    }
}
