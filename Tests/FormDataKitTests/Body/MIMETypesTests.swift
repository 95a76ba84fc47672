@testable import FormDataKitBody
@testable import FormDataKitEngine
@testable import FormDataKitWire
import Testing

@testable import FormDataKit

/// The type a file part gets from its name: the last path component's extension, looked up
/// without regard to case; `application/octet-stream` when there is none or it is unknown.
@Suite("MIMETypes: a file part's type from its name")
struct MIMETypesTests {
    @Test(
        "The last component's extension decides",
        arguments: [
            ("photo.JPG", "image/jpeg"),
            ("/srv/up.loads/report.pdf", "application/pdf"),
            ("archive.tar.gz", "application/gzip"),
            ("notes.txt", "text/plain"),
            ("/srv/dir.d/readme", "application/octet-stream"),
            ("/home/me/.bashrc", "application/octet-stream"),
            (".png", "application/octet-stream"),
            ("trailing.", "application/octet-stream"),
            ("no-extension", "application/octet-stream"),
            ("", "application/octet-stream"),
            ("dir/", "application/octet-stream"),
            ("/ünïcødé/фото.png", "image/png"),
            ("unknown.zzzqqq", "application/octet-stream"),
        ])
    func typeForFileName(name: String, expected: String) {
        #expect(MIMETypes.type(forFileName: name) == expected)
    }
}
