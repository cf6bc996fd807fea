// swift-tools-version:6.1
// streakd: daily habit streaks across time zones, reminded by a systemd timer.
//
// Dependencies point one way:
//   streakd (CLI wiring) -> StreakJobs -> StreakDelivery, StreakStore -> StreakCore (pure)
// Only StreakDelivery imports the libsystemd C target (CSystemd); only StreakStore calls
// SQLite's C API (GRDBSQLite, and CSQLiteConfig for process-wide settings), for its hot paths.
import Foundation
import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "streakd",
    platforms: [.macOS(.v13)],
    products: [.executable(name: "streakd", targets: ["streakd"])],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        .target(name: "StreakCore", swiftSettings: strict),
        .target(
            name: "StreakStore",
            dependencies: [
                "StreakCore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"), "CSQLiteConfig",
            ],
            swiftSettings: strict),
        .systemLibrary(name: "CSQLiteConfig"),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(name: "StreakDelivery", dependencies: ["StreakCore", "CSystemd"], swiftSettings: strict),
        .target(
            name: "StreakJobs",
            dependencies: [
                "StreakCore", "StreakStore", "StreakDelivery", "TOMLKit",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .systemLibrary(name: "CMalloc"),
        .executableTarget(
            name: "streakd",
            dependencies: [
                "StreakJobs", "CMalloc", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .testTarget(name: "StreakCoreTests", dependencies: ["StreakCore"], swiftSettings: strict),
        .testTarget(name: "StreakStoreTests", dependencies: ["StreakStore"], swiftSettings: strict),
        // A standalone systemd-journald for the test targets that need one.
        .target(name: "TestJournald", path: "Tests/TestJournald", swiftSettings: strict),
        .testTarget(
            name: "StreakDeliveryTests", dependencies: ["StreakDelivery", "TestJournald"], swiftSettings: strict),
        // Seeded generators of valid and mutated input, for the parsers' fuzz tests.
        .target(name: "InputGenerators", path: "Tests/InputGenerators", swiftSettings: strict),
        .testTarget(name: "StreakJobsTests", dependencies: ["StreakJobs", "InputGenerators"], swiftSettings: strict),
        .testTarget(
            name: "StreakdCLITests", dependencies: ["StreakCore", "TestJournald", "InputGenerators"],
            swiftSettings: strict),
        // deploy/ and the Makefile: systemd-analyze on the units, make install, a systemd --user run.
        .testTarget(
            name: "StreakdDeployTests", dependencies: ["StreakCore", "StreakDelivery", "TestJournald"],
            swiftSettings: strict),
    ]
)

// The benchmark suite (Benchmarks/run) is opt-in: it is not part of the normal
// build and test. `STREAKD_BENCHMARKS=1 swift build -c release --product streakd-bench`.
if ProcessInfo.processInfo.environment["STREAKD_BENCHMARKS"] != nil {
    package.products.append(.executable(name: "streakd-bench", targets: ["streakd-bench"]))
    package.targets.append(
        .executableTarget(
            name: "streakd-bench",
            dependencies: [
                "StreakCore", "StreakStore", "StreakDelivery", "StreakJobs",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/Sources/streakd-bench", swiftSettings: strict))
}
