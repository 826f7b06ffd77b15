import MIDI
import Testing

@Suite struct SysExStoreTests {
    @Test func aStoredMessageReadsBackUntilReleased() throws {
        let store = SysExStore(slots: 1, capacity: 8)
        let reference = try #require(store.store([0xF0, 1, 2, 0xF7]))
        #expect(store.withBytes(reference) { Array($0) } == [0xF0, 1, 2, 0xF7])
        #expect(store.store([0xF0, 0xF7]) == nil)
        store.release(reference)
        #expect(store.withBytes(reference) { $0.count } == 0)
        #expect(store.store([0xF0, 0xF7]) != nil)
        #expect(store.droppedNoFreeSlot == 1)
    }

    @Test func aMessageFillingTheSlotExactlyFits() throws {
        let store = SysExStore(slots: 1, capacity: 8)
        let message = sysexMessage(length: 8)
        let reference = try #require(store.store(message))
        #expect(store.withBytes(reference) { Array($0) } == message)
    }

    @Test func aMessageLongerThanTheSlotIsDroppedAndItsSlotFreed() {
        let store = SysExStore(slots: 1, capacity: 8)
        #expect(store.store(sysexMessage(length: 9)) == nil)
        var draft = store.reserve()!
        var i = 0
        while i < 9 {
            store.append(0x01, to: &draft)
            i += 1
        }
        #expect(draft.isOverflowed)
        #expect(store.publish(draft) == nil)
        #expect(store.droppedTooLong == 2)
        #expect(store.droppedCount == 2)
        #expect(store.reserve() != nil)
    }

    @Test func anAbandonedDraftFreesItsSlot() {
        let store = SysExStore(slots: 1, capacity: 8)
        store.abandon(store.reserve()!)
        #expect(store.reserve() != nil)
        #expect(store.droppedCount == 0)
    }

    @Test func aSecondReleaseCannotFreeASlotBeingFilled() throws {
        let store = SysExStore(slots: 1, capacity: 8)
        let reference = try #require(store.store([0xF0, 0xF7]))
        store.release(reference)
        let draft = try #require(store.reserve())
        store.release(reference)
        #expect(store.reserve() == nil)
        store.abandon(draft)
    }

    @Test(arguments: [
        SysExReference.none, SysExReference(slot: 7, length: 2),
        SysExReference(slot: 0, length: 99),
    ])
    func aReferenceOutsideTheStoreGivesNoBytes(_ reference: SysExReference) {
        let store = SysExStore(slots: 2, capacity: 8)
        _ = store.store([0xF0, 0xF7])
        #expect(store.withBytes(reference) { $0.count } == 0)
        store.release(reference)
    }
}
