// swift-tools-version:6.0
// Faultline's libFuzzer targets: one executable per target, each exporting
// `LLVMFuzzerTestOneInput`. Build and run them from the repository root with
//
//     make fuzz            # every target FUZZ_MINUTES (5) minutes each
//     make fuzz-smoke      # a fixed, short run of each, as CI does
//
// which build with `swift build --package-path Fuzz -Xswiftc -sanitize=fuzzer,address`
// (see Fuzz/run.sh). Each target's `@main` hands its test function to libFuzzer's
// `LLVMFuzzerRunDriver`, so the usual libFuzzer flags apply (`-runs=`, `-max_total_time=`, a
// crash file to replay it).
import PackageDescription

let package = Package(
    name: "FaultlineFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Faultline", path: ".."),
    ],
    targets: [
        // libFuzzer's `LLVMFuzzerRunDriver`, which each target's `main` calls.
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        .executableTarget(name: "fuzz-predicate", dependencies: ["FuzzSupport", .product(name: "Faultline", package: "Faultline")]),
        .executableTarget(name: "fuzz-xml-model", dependencies: ["FuzzSupport", .product(name: "Faultline", package: "Faultline")]),
        .executableTarget(name: "fuzz-compiled-model", dependencies: ["FuzzSupport", .product(name: "Faultline", package: "Faultline")]),
        .executableTarget(
            name: "fuzz-shell",
            dependencies: [
                "FuzzSupport",
                .product(name: "Faultline", package: "Faultline"),
                .product(name: "FaultlineShell", package: "Faultline"),
            ]
        ),
    ]
)
