// swift-tools-version:6.0
// RecipesApp: the Recipes sample through typed classes. The FaultlineGenerate plugin writes
// the classes at build time from Recipes.xcdatamodeld; no generated code is in this package.
import PackageDescription

let package = Package(
    name: "RecipesApp",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The Faultline package at the root of this repository. Elsewhere:
        // .package(url: "https://…/faultline.git", from: "…")
        .package(name: "Faultline", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "RecipesApp",
            dependencies: [.product(name: "Faultline", package: "Faultline")],
            // The model is also what the app opens the store with, as an app ships it.
            resources: [.copy("Recipes.xcdatamodeld")],
            plugins: [.plugin(name: "FaultlineGenerate", package: "Faultline")]
        )
    ]
)
