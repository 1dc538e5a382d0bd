// swift-tools-version:6.2
// Faultline's benchmarks: each workload run side by side with the SQLite C API and GRDB,
// variants interleaved in one process. Run from the repository root:
//
//     swift run -c release --package-path Benchmarks faultline-benchmarks [--quick]
import PackageDescription

let package = Package(
    name: "FaultlineBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Faultline", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The shell-start and memory workloads' child processes (Spawn.swift).
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
    ],
    targets: [
        // The SQLite C API for the raw variants: a module map and a shim header, as in the main package.
        .systemLibrary(name: "CBenchSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "faultline-benchmarks",
            dependencies: [
                "CBenchSQLite",
                .product(name: "Faultline", package: "Faultline"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
    ]
)
