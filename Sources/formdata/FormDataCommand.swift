import ArgumentParser
import Foundation

/// `formdata`: send forms, run the embedded receiver, see what goes on the wire.
@main
struct FormDataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "formdata",
        abstract: "Build and send multipart/form-data and URL-encoded forms; receive and inspect them.",
        subcommands: [Demo.self, Post.self, Build.self, Serve.self, Diff.self])
}
