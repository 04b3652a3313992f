/// The names of `private` and `fileprivate` declarations as Swift's demangler writes them:
/// `(secret in _8AAE29D379AF71E102DEC2B2F8DD34F5)`, the declaration's name and its file's discriminator. The
/// discriminator is the MD5 of the module's name followed by the file's base name (`Odd` + `PrivA.swift`), so it is
/// the same in every build of the same source, and a file's name can be checked against it, never guessed
/// (`file(of:module:among:)`).
public enum PrivateNames {
  /// The marker between a private declaration's name and its discriminator.
  static let marker = " in _"

  /// Whether `text` holds a private declaration's name with its discriminator.
  public static func hasDiscriminator(_ text: some StringProtocol) -> Bool {
    text.contains(marker)
  }

  /// `(Model in _11E4…).count` → `Model.count`, `Counter.(secret in _8AAE…)` → `Counter.secret`: every private
  /// declaration's name without its discriminator. Text without one is returned as it is.
  public static func withoutDiscriminators(_ text: String) -> String {
    guard text.contains(marker) else { return text }
    var result = ""
    var rest = Substring(text)
    while let marker = rest.firstRange(of: marker) {
      // The name runs back from the marker to its `(`; the discriminator forward to its `)`.
      let open = rest[..<marker.lowerBound].lastIndex(of: "(")
      let hash = rest[marker.upperBound...].prefix { $0.isHexDigit }
      let close = rest.index(marker.upperBound, offsetBy: hash.count)
      guard let open, !hash.isEmpty, close < rest.endIndex, rest[close] == ")",
        rest.index(after: open) < marker.lowerBound
      else {
        result += rest[..<marker.upperBound]
        rest = rest[marker.upperBound...]
        continue
      }
      result += rest[..<open] + rest[rest.index(after: open)..<marker.lowerBound]
      rest = rest[rest.index(after: close)...]
    }
    return result + rest
  }

  /// The first discriminator in `text` (`11E4…` in `(Model in _11E4…).count`), or nil.
  public static func discriminator(in text: String) -> Substring? {
    guard let marker = text.firstRange(of: marker) else { return nil }
    let hash = text[marker.upperBound...].prefix { $0.isHexDigit }
    return hash.isEmpty ? nil : hash
  }

  /// The discriminator of file `baseName` (`PrivA.swift`) in module `module`: the MD5 of the two, in capitals.
  public static func discriminator(ofFile baseName: some StringProtocol, module: some StringProtocol) -> String {
    MD5.hexDigest(Array(module.utf8) + Array(baseName.utf8))
  }

  /// The base name of the file among `files` (paths or `Module/File.swift`) whose discriminator in `module` is
  /// `discriminator`, or nil when none is.
  public static func file(
    of discriminator: some StringProtocol, module: String, among files: some Sequence<String>
  ) -> String? {
    var tried = Set<Substring>()
    for file in files {
      let baseName = file.split(separator: "/").last ?? Substring(file)
      guard baseName.hasSuffix(".swift"), tried.insert(baseName).inserted else { continue }
      if Self.discriminator(ofFile: baseName, module: module) == discriminator { return String(baseName) }
    }
    return nil
  }
}

/// MD5 (RFC 1321), for the private discriminators of Swift's mangling only (not for anything that needs a secure
/// hash).
enum MD5 {
  static let shifts: [UInt32] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15,
    21,
  ]
  /// floor(2^32 × |sin(i + 1)|), i = 0…63 (RFC 1321, 3.4).
  static let constants: [UInt32] = [
    0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
    0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
    0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
    0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
    0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
    0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
    0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
    0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
  ]
  /// The digest of `bytes` as 32 hexadecimal digits in capitals.
  static func hexDigest(_ bytes: [UInt8]) -> String {
    var message = bytes
    let bitLength = UInt64(bytes.count) &* 8
    message.append(0x80)
    while message.count % 64 != 56 { message.append(0) }
    for shift in stride(from: 0, to: 64, by: 8) {
      message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
    for block in stride(from: 0, to: message.count, by: 64) {
      var words = [UInt32](repeating: 0, count: 16)
      for index in 0..<16 {
        let at = block + index * 4
        words[index] =
          UInt32(message[at]) | UInt32(message[at + 1]) << 8 | UInt32(message[at + 2]) << 16
          | UInt32(message[at + 3]) << 24
      }
      var (a, b, c, d) = state
      for index in 0..<64 {
        var f: UInt32
        let g: Int
        switch index {
        case 0..<16: (f, g) = ((b & c) | (~b & d), index)
        case 16..<32: (f, g) = ((d & b) | (~d & c), (5 * index + 1) % 16)
        case 32..<48: (f, g) = (b ^ c ^ d, (3 * index + 5) % 16)
        default: (f, g) = (c ^ (b | ~d), (7 * index) % 16)
        }
        f = f &+ a &+ constants[index] &+ words[g]
        a = d
        d = c
        c = b
        b = b &+ (f << shifts[index] | f >> (32 - shifts[index]))
      }
      state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
    let digits = Array("0123456789ABCDEF")
    var text = ""
    for word in [state.0, state.1, state.2, state.3] {
      for byte in 0..<4 {
        let value = Int(truncatingIfNeeded: word >> UInt32(byte * 8)) & 0xFF
        text.append(digits[value >> 4])
        text.append(digits[value & 0xF])
      }
    }
    return text
  }
}
