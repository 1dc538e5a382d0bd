// swift-tools-version:6.2
// Faultline: Core Data's object graph on SQLite, for Linux, with a shell that shows the SQL.
import PackageDescription

/// Child processes, for the tests only: no library or executable product depends on these.
let childProcesses: [Target.Dependency] = [
    .product(name: "Subprocess", package: "swift-subprocess"),
    .product(name: "SystemPackage", package: "swift-system"),
]

let package = Package(
    name: "Faultline",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Faultline", targets: ["Faultline"]),
        .library(name: "FaultlineShell", targets: ["FaultlineShell"]),
        .executable(name: "faultline", targets: ["faultline"]),
        // Typed classes from a model at build time (Documentation/TypedModels.md).
        .plugin(name: "FaultlineGenerate", targets: ["FaultlineGenerate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Child processes in the tests (`childProcesses` above).
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
    ],
    targets: [
        // C system libraries: a module map and a shim header each, nothing else.
        .systemLibrary(
            name: "CFaultlineSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CFaultlineEditLine",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),
        .systemLibrary(
            name: "CFaultlineZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // Core Data's in-memory id list (`_Z_intarray0`) as a SQLite virtual table, in C.
        .target(name: "CFaultlineIntArray", dependencies: ["CFaultlineSQLite"]),
        // Bulk reference counts (the Swift runtime's retain_n and release_n), for fetches.
        .target(name: "CFaultlineReferenceCounts"),

        // Layers, bottom-up.
        .target(name: "FaultlineSQL", dependencies: ["CFaultlineSQLite", "CFaultlineIntArray"]),
        .target(name: "FaultlineModel", dependencies: ["CFaultlineZlib"]),
        .target(name: "FaultlinePredicate"),
        .target(name: "Faultline", dependencies: ["FaultlineSQL", "FaultlineModel", "FaultlinePredicate", "CFaultlineReferenceCounts"]),
        .target(name: "FaultlineShell", dependencies: ["Faultline", "FaultlineSQL", "CFaultlineEditLine", "CFaultlineSQLite"]),
        .executableTarget(
            name: "faultline",
            dependencies: [
                "FaultlineShell",
                "FaultlineCodegen",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Code generation: typed ManagedObject subclasses from a model. It needs only the
        // model layer, so the plugin's tool builds without the store, the shell or
        // ArgumentParser.
        .target(name: "FaultlineCodegen", dependencies: ["FaultlineModel"]),
        .executableTarget(name: "faultline-generate", dependencies: ["FaultlineCodegen", "FaultlineModel"]),
        .plugin(name: "FaultlineGenerate", capability: .buildTool(), dependencies: ["faultline-generate"]),

        // Tests mirror the modules, plus a support target.
        .target(
            name: "FaultlineTestSupport",
            dependencies: ["Faultline", "FaultlineSQL"] + childProcesses,
            path: "Tests/FaultlineTestSupport"
        ),
        // A SQLite VFS that fails chosen I/O calls: for tests only, in no product.
        .target(
            name: "CFaultlineFaultVFS",
            dependencies: ["CFaultlineSQLite"],
            path: "Tests/CFaultlineFaultVFS"
        ),
        .testTarget(name: "FaultlineSQLTests", dependencies: ["FaultlineSQL", "FaultlineTestSupport"]),
        .testTarget(name: "FaultlineModelTests", dependencies: ["FaultlineModel", "FaultlineTestSupport"]),
        .testTarget(name: "FaultlinePredicateTests", dependencies: ["FaultlinePredicate", "FaultlineTestSupport"]),
        .testTarget(
            name: "FaultlineTests",
            dependencies: ["Faultline", "FaultlineTestSupport", "CFaultlineSQLite", "CFaultlineFaultVFS"]
        ),
        .testTarget(
            name: "FaultlineCodegenTests",
            dependencies: ["FaultlineCodegen", "Faultline", "FaultlineTestSupport", "faultline-generate"]
        ),
        .testTarget(
            name: "FaultlineShellTests",
            dependencies: ["FaultlineShell", "FaultlineTestSupport", "faultline"] + childProcesses
        ),

        // Crash consistency and concurrent writers: a child program the tests start, SIGKILL
        // and run side by side (see Documentation/Reliability.md), and the code both share.
        .target(
            name: "FaultlineTortureKit",
            dependencies: ["Faultline", "FaultlineSQL"],
            path: "Tests/FaultlineTortureKit"
        ),
        .executableTarget(
            name: "faultline-torture",
            dependencies: ["FaultlineTortureKit", "Faultline", "CFaultlineSQLite"],
            path: "Tests/faultline-torture"
        ),
        .testTarget(
            name: "FaultlineTortureTests",
            dependencies: ["FaultlineTortureKit", "FaultlineTestSupport", "faultline-torture"]
        ),
    ]
)
