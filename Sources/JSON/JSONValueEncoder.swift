/// Turns an `Encodable` value into a ``JSONValue``, as Foundation's JSONEncoder would: keyed
/// containers become objects, unkeyed ones arrays, `nil` optionals are left out.
package enum JSONValueEncoder {
    package static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = Slot()
        try SlotEncoder(slot: root, codingPath: []).put(value)
        return root.value
    }
}

/// One place in the document being built; nested containers fill their slots later, so the
/// tree is made of references until ``value`` reads it out.
private final class Slot {
    enum Content {
        case value(JSONValue)
        case object([String: Slot])
        case array([Slot])
    }

    var content: Content = .value(.null)

    var value: JSONValue {
        switch content {
        case .value(let value): value
        case .object(let members): .object(members.mapValues(\.value))
        case .array(let elements): .array(elements.map(\.value))
        }
    }

    func makeObject() {
        if case .object = content { return }
        content = .object([:])
    }

    func makeArray() {
        if case .array = content { return }
        content = .array([])
    }

    func member(_ key: String) -> Slot {
        let child = Slot()
        if case .object(var members) = content {
            members[key] = child
            content = .object(members)
        }
        return child
    }

    func append() -> Slot {
        let child = Slot()
        if case .array(var elements) = content {
            elements.append(child)
            content = .array(elements)
        }
        return child
    }

    var count: Int {
        if case .array(let elements) = content { return elements.count }
        return 0
    }
}

/// The JSON form of the standard library's own scalar types, which encode as numbers, strings
/// and booleans.
private func scalar<T: Encodable>(_ value: T) -> JSONValue? {
    switch value {
    case let value as Bool: .bool(value)
    case let value as String: .string(value)
    case let value as Double: .number(value)
    case let value as Float: .number(Double(value))
    case let value as Int: .number(Double(value))
    case let value as Int8: .number(Double(value))
    case let value as Int16: .number(Double(value))
    case let value as Int32: .number(Double(value))
    case let value as Int64: .number(Double(value))
    case let value as UInt: .number(Double(value))
    case let value as UInt8: .number(Double(value))
    case let value as UInt16: .number(Double(value))
    case let value as UInt32: .number(Double(value))
    case let value as UInt64: .number(Double(value))
    default: nil
    }
}

private struct SlotEncoder: Encoder {
    let slot: Slot
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func put<T: Encodable>(_ value: T) throws {
        if let scalar = scalar(value) {
            slot.content = .value(scalar)
        } else {
            try value.encode(to: self)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.makeObject()
        return KeyedEncodingContainer(KeyedSlotContainer<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.makeArray()
        return UnkeyedSlotContainer(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleSlotContainer(encoder: self)
    }
}

private struct KeyedSlotContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    var codingPath: [any CodingKey]

    private func put<T: Encodable>(_ value: T, _ key: Key) throws {
        try SlotEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).put(value)
    }

    mutating func encodeNil(forKey key: Key) throws { slot.member(key.stringValue).content = .value(.null) }
    package mutating func encode(_ value: Bool, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: String, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: Double, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: Float, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: Int, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: Int8, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: Int16, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: Int32, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: Int64, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: UInt, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(value, key) }
    package mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(value, key) }
    package mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try put(value, key) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        SlotEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        SlotEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { SlotEncoder(slot: slot.member("super"), codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        SlotEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedSlotContainer: UnkeyedEncodingContainer {
    let slot: Slot
    var codingPath: [any CodingKey]
    var count: Int { slot.count }

    private func put<T: Encodable>(_ value: T) throws {
        try SlotEncoder(slot: slot.append(), codingPath: codingPath).put(value)
    }

    mutating func encodeNil() throws { slot.append().content = .value(.null) }
    package mutating func encode(_ value: Bool) throws { try put(value) }
    package mutating func encode(_ value: String) throws { try put(value) }
    package mutating func encode(_ value: Double) throws { try put(value) }
    package mutating func encode(_ value: Float) throws { try put(value) }
    package mutating func encode(_ value: Int) throws { try put(value) }
    package mutating func encode(_ value: Int8) throws { try put(value) }
    package mutating func encode(_ value: Int16) throws { try put(value) }
    package mutating func encode(_ value: Int32) throws { try put(value) }
    package mutating func encode(_ value: Int64) throws { try put(value) }
    package mutating func encode(_ value: UInt) throws { try put(value) }
    package mutating func encode(_ value: UInt8) throws { try put(value) }
    package mutating func encode(_ value: UInt16) throws { try put(value) }
    package mutating func encode(_ value: UInt32) throws { try put(value) }
    package mutating func encode(_ value: UInt64) throws { try put(value) }
    package mutating func encode<T: Encodable>(_ value: T) throws { try put(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        SlotEncoder(slot: slot.append(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        SlotEncoder(slot: slot.append(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { SlotEncoder(slot: slot.append(), codingPath: codingPath) }
}

private struct SingleSlotContainer: SingleValueEncodingContainer {
    let encoder: SlotEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.slot.content = .value(.null) }
    package mutating func encode(_ value: Bool) throws { try encoder.put(value) }
    package mutating func encode(_ value: String) throws { try encoder.put(value) }
    package mutating func encode(_ value: Double) throws { try encoder.put(value) }
    package mutating func encode(_ value: Float) throws { try encoder.put(value) }
    package mutating func encode(_ value: Int) throws { try encoder.put(value) }
    package mutating func encode(_ value: Int8) throws { try encoder.put(value) }
    package mutating func encode(_ value: Int16) throws { try encoder.put(value) }
    package mutating func encode(_ value: Int32) throws { try encoder.put(value) }
    package mutating func encode(_ value: Int64) throws { try encoder.put(value) }
    package mutating func encode(_ value: UInt) throws { try encoder.put(value) }
    package mutating func encode(_ value: UInt8) throws { try encoder.put(value) }
    package mutating func encode(_ value: UInt16) throws { try encoder.put(value) }
    package mutating func encode(_ value: UInt32) throws { try encoder.put(value) }
    package mutating func encode(_ value: UInt64) throws { try encoder.put(value) }
    package mutating func encode<T: Encodable>(_ value: T) throws { try encoder.put(value) }
}
