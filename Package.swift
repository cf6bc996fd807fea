// swift-tools-version:6.1
// streakd: daily habit streaks across time zones, reminded by a systemd timer. Linux only: it
// talks to systemd-journald and D-Bus through libsystemd.
//
// Dependencies point one way (docs/ARCHITECTURE.md):
//   streakd (CLI wiring) -> StreakJobs -> StreakDelivery, StreakStore -> StreakCore (pure)
//   streakd -> StreakServer (HTTP wiring: Hummingbird) -> StreakJobs
//   streakd -> StreakSQLite (an engine behind StreakStore's roles) -> StreakStore
// Only StreakDelivery (the journal, the bus) and StreakServer (sd-daemon: socket activation,
// sd_notify) import the libsystemd C target (CSystemd); only StreakDelivery imports CProcess (the
// hooks' process calls); only StreakSQLite calls
// SQLite (GRDB, its C API for the hot paths, and CSQLiteConfig for process-wide settings);
// only StreakPostgres calls libpq (CLibpq): connections, deadlines, COPY, migrations.
import Foundation
import PackageDescription

/// The commit `streakd --version` names: `git describe` as the Makefile passes it in STREAKD_COMMIT
/// (SwiftPM evaluates the manifest again when the environment changes). Only characters a describe
/// can give are taken; a build without it (`swift build` in a checkout) says "commit unknown".
let commit = (ProcessInfo.processInfo.environment["STREAKD_COMMIT"] ?? "").filter {
    $0.isASCII && ($0.isLetter || $0.isNumber || "-.+_".contains($0))
}

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "streakd",
    // Linux is the platform; the macOS line only names the newest APIs used (Synchronization).
    platforms: [.macOS(.v15)],
    products: [.executable(name: "streakd", targets: ["streakd"])],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // `streakd serve` (StreakServer). Without Hummingbird's default traits: swift-configuration
        // and full Foundation are not used, and not built.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // Hummingbird's own: quiescing a server and HTTP types on a NIO pipeline (StreakServer's listeners).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Webhooks (SPEC §12): keep-alive connections, TLS with the system's trust store.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
    ],
    targets: [
        .target(name: "StreakCore", swiftSettings: strict),
        .target(name: "StreakStore", dependencies: ["StreakCore"], swiftSettings: strict),
        .target(
            name: "StreakSQLite",
            dependencies: [
                "StreakCore", "StreakStore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"), "CSQLiteConfig",
            ],
            swiftSettings: strict),
        .systemLibrary(name: "CSQLiteConfig"),
        .target(name: "CLibpq"),
        .target(name: "StreakPostgres", dependencies: ["StreakCore", "StreakStore", "CLibpq"], swiftSettings: strict),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CProcess"),
        .target(
            name: "StreakDelivery",
            dependencies: [
                "StreakCore", "CSystemd", "CProcess", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),
        .target(
            name: "StreakJobs",
            dependencies: [
                "StreakCore", "StreakStore", "StreakDelivery", "TOMLKit",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // The HTTP API (SPEC §11): wiring only, Hummingbird's routes onto the jobs' endpoints.
        .target(
            name: "StreakServer",
            dependencies: [
                "StreakJobs", "COpenAPI", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"), "CSystemd",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // docs/openapi.json, embedded (#embed) for GET /openapi.json.
        .target(name: "COpenAPI"),
        .systemLibrary(name: "CMalloc"),
        .target(name: "CBuildInfo", cSettings: commit.isEmpty ? [] : [.define("STREAKD_COMMIT", to: "\"\(commit)\"")]),
        .executableTarget(
            name: "streakd",
            dependencies: [
                "StreakCore", "StreakStore", "StreakSQLite", "StreakPostgres", "StreakJobs", "StreakServer", "CMalloc",
                "CBuildInfo", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Twins and helpers the test targets share: a standalone systemd-journald, journal
        // readers, process runners, scratch folders, the in-memory sink, a throwaway PostgreSQL
        // cluster (scripts/pg-cluster) with a fresh database per test, the seeded generator, the
        // tiers and prerequisites (README, "Tests").
        .target(
            name: "StreakTestKit",
            dependencies: ["StreakCore", "StreakStore", "StreakSQLite", "StreakPostgres", "StreakDelivery", "StreakJobs"],
            path: "Tests/StreakTestKit", swiftSettings: strict),
        // Generators of random and mutated input for the parsers' fuzz tests.
        .target(
            name: "InputGenerators", dependencies: ["StreakTestKit"], path: "Tests/InputGenerators",
            swiftSettings: strict),
        .testTarget(
            name: "StreakCoreTests", dependencies: ["StreakCore", "StreakJobs", "StreakTestKit"], swiftSettings: strict),
        .testTarget(
            name: "StreakStoreTests",
            dependencies: [
                "StreakCore", "StreakStore", "StreakSQLite", "StreakPostgres", "StreakTestKit",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "StreakDeliveryTests", dependencies: ["CProcess", "StreakCore", "StreakDelivery", "StreakTestKit"],
            swiftSettings: strict),
        .testTarget(
            name: "StreakJobsTests",
            dependencies: [
                "StreakCore", "StreakStore", "StreakSQLite", "StreakPostgres", "StreakDelivery", "StreakJobs",
                "StreakTestKit", "InputGenerators",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "StreakPostgresTests", dependencies: ["StreakCore", "StreakStore", "StreakPostgres", "StreakTestKit"],
            swiftSettings: strict),
        .testTarget(
            name: "StreakdCLITests", dependencies: ["StreakCore", "StreakTestKit", "InputGenerators"],
            swiftSettings: strict),
        // Several hosts on one PostgreSQL database: processes in UTS namespaces of their own.
        .testTarget(name: "StreakdHostsTests", dependencies: ["StreakCore", "StreakTestKit"], swiftSettings: strict),
        // deploy/ and the Makefile: systemd-analyze on the units, make install, a systemd --user run.
        .testTarget(
            name: "StreakdDeployTests", dependencies: ["StreakCore", "StreakDelivery", "StreakJobs", "StreakTestKit"],
            swiftSettings: strict),

        // Recomputing every streak from its whole history (the benchmark's recomputation row):
        // benchmark code, not part of streakd, tested here.
        .target(
            name: "StreakRecompute",
            dependencies: ["StreakCore", "StreakStore", "StreakSQLite", "StreakJobs"],
            path: "Benchmarks/Sources/StreakRecompute", swiftSettings: strict),
        .testTarget(
            name: "StreakRecomputeTests",
            dependencies: [
                "StreakCore", "StreakStore", "StreakSQLite", "StreakJobs", "StreakRecompute", "StreakTestKit",
            ],
            path: "Benchmarks/Tests/StreakRecomputeTests", swiftSettings: strict),
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
                "StreakCore", "StreakStore", "StreakSQLite", "StreakDelivery", "StreakJobs", "StreakRecompute",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/Sources/streakd-bench", swiftSettings: strict))
    // Benchmarks/api's ceiling: a bare Hummingbird route answering a constant.
    package.products.append(.executable(name: "api-bare", targets: ["api-bare"]))
    package.targets.append(
        .executableTarget(
            name: "api-bare", dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: "Benchmarks/Sources/api-bare", swiftSettings: strict))
    // Benchmarks/deliveries' reference for the webhook's client: AsyncHTTPClient alone.
    package.products.append(.executable(name: "ahc-bare", targets: ["ahc-bare"]))
    package.targets.append(
        .executableTarget(
            name: "ahc-bare",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/Sources/ahc-bare", swiftSettings: strict))
    // Benchmarks/deliveries' webhook receiver: checks each signature with swift-crypto (already
    // resolved for swift-nio-extras), not with streakd's own HMAC, and counts.
    package.dependencies.append(.package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"))
    package.products.append(.executable(name: "webhook-sink", targets: ["webhook-sink"]))
    package.targets.append(
        .executableTarget(
            name: "webhook-sink",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/Sources/webhook-sink", swiftSettings: strict))
}
