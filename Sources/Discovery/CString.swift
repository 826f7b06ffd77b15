extension String {
    /// The text of a C buffer up to its first NUL (a name or address a C call filled in).
    package init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
