/// Where a ``NetworkQueue``'s batch stands, as ``NetworkQueue/progressBlock`` hears it: the
/// counters of the queue and the fractions its `uploadProgress` and `downloadProgress` show,
/// taken together in one step.
public struct NetworkQueueProgress: Sendable, Equatable {
    /// ``NetworkQueue/bytesUploadedSoFar`` (bytes with accurate progress, else finished requests).
    public var bytesUploadedSoFar: UInt64
    /// ``NetworkQueue/totalBytesToUpload``.
    public var totalBytesToUpload: UInt64
    /// ``NetworkQueue/bytesDownloadedSoFar``.
    public var bytesDownloadedSoFar: UInt64
    /// ``NetworkQueue/totalBytesToDownload``.
    public var totalBytesToDownload: UInt64
    /// The batch's upload, 0…1: what ``NetworkQueue/uploadProgress`` reads (ASI's upload
    /// progress delegate's `setProgress:`).
    public var uploadFraction: Double
    /// The batch's download, 0…1: what ``NetworkQueue/downloadProgress`` reads.
    public var downloadFraction: Double

    init(_ machine: NetworkQueueStateMachine) {
        bytesUploadedSoFar = machine.uploadUnitsDone
        totalBytesToUpload = machine.totalUploadUnits
        bytesDownloadedSoFar = machine.bytesDownloadedSoFar
        totalBytesToDownload = machine.totalBytesToDownload
        uploadFraction = Self.fraction(machine.uploadUnitsDone, of: machine.totalUploadUnits)
        downloadFraction = Self.fraction(machine.downloadUnitsDone, of: machine.totalDownloadUnits)
    }

    private static func fraction(_ done: UInt64, of total: UInt64) -> Double {
        total == 0 ? 0 : min(1, Double(done) / Double(total))
    }
}
