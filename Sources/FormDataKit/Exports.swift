// The layers below the ASI façade, re-exported: `import FormDataKit` gives their public API as
// before the split (the wire vocabulary, the body engine and files, the sending engine), and
// every file of this module sees them (none imports them again).
@_exported import FormDataKitBody
@_exported import FormDataKitEngine
@_exported import FormDataKitWire
