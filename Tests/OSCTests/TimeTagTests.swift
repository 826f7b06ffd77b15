import OSC
import Testing

@Suite("Time tags")
struct TimeTagTests {
    @Test func immediatelyIsTheRawValueOne() {
        #expect(OSCTimeTag.immediately.rawValue == 1)
        #expect(OSCTimeTag.immediately.seconds == 0)
        #expect(OSCTimeTag.immediately.fraction == 1)
        #expect(OSCTimeTag.immediately.description == "immediately")
    }

    @Test func unixEpochIsNTPSeconds2208988800() {
        let epoch = OSCTimeTag(unixTime: 0)
        #expect(epoch.seconds == 2_208_988_800)
        #expect(epoch.fraction == 0)
        #expect(epoch.unixTime == 0)
        #expect(epoch.description == "83aa7e80.00000000")
    }

    @Test func halfASecondIsTheTopFractionBit() {
        let tag = OSCTimeTag(secondsSince1900: 10.5)
        #expect(tag.seconds == 10)
        #expect(tag.fraction == 0x8000_0000)
        #expect(tag.secondsSince1900 == 10.5)
    }

    @Test(arguments: [0.0, 1.25, 1_700_000_000.123456, -1_000.5])
    func unixTimeSurvivesARoundTripToWithinAMicrosecond(seconds: Double) {
        #expect(abs(OSCTimeTag(unixTime: seconds).unixTime - seconds) < 1e-6)
    }

    @Test(
        arguments: [
            (Double.nan, 0), (-5, 0), (-Double.infinity, 0), (5e9, UInt64.max), (Double.infinity, UInt64.max),
        ] as [(Double, UInt64)])
    func timesOutsideTheNTPEraClampInsteadOfTrapping(seconds: Double, raw: UInt64) {
        #expect(OSCTimeTag(secondsSince1900: seconds).rawValue == raw)
    }
}
