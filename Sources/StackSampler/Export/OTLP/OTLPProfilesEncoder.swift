/// A profile as an OTLP `ExportProfilesServiceRequest` (the profiles signal, `v1development`, in
/// the layout PyPI's opentelemetry-proto 1.45.2 decodes: strings, mappings, locations, functions, attributes and
/// stacks in one `ProfilesDictionary` beside the resource profiles, each table's entry 0 a zero
/// value). A profile message has one sample type: the request holds one of samples/count and,
/// when the period is known, one of cpu/nanoseconds (wall/nanoseconds in wall mode), over the same
/// stacks, so each equals the pprof's sample type of the same name. Each sample carries its
/// thread as `thread.id` and `thread.name` attributes; a module's build id is its mapping's
/// `process.executable.build_id.gnu` attribute.
package enum OTLPProfilesEncoder {
    /// Field numbers of profiles.proto and profiles_service.proto.
    private enum Field {
        enum Request { static let resourceProfiles = 1, dictionary = 2 }
        enum ResourceProfiles { static let resource = 1, scopeProfiles = 2 }
        enum ScopeProfiles { static let scope = 1, profiles = 2 }
        enum Profile {
            static let sampleType = 1, samples = 2, timeUnixNano = 3, durationNano = 4, periodType = 5, period = 6, profileID = 7
        }
        enum ValueType { static let type = 1, unit = 2 }
        enum Sample { static let stack = 1, attributes = 2, values = 4 }
        enum Dictionary { static let mappings = 1, locations = 2, functions = 3, links = 4, strings = 5, attributes = 6, stacks = 7 }
        enum Mapping { static let start = 1, limit = 2, offset = 3, filename = 4, attributes = 5 }
        enum Location { static let mapping = 1, address = 2, lines = 3 }
        enum Line { static let function = 1, line = 2 }
        enum Function { static let name = 1, systemName = 2, filename = 3 }
        enum KeyValueAndUnit { static let key = 1, value = 2 }
        enum Stack { static let locations = 1 }
    }

    /// The request of `profile` from the process `resource` describes; `session` makes its
    /// profile ids differ from another process's.
    package static func request(_ profile: Profile, resource: OTLPResource, session: UInt64) -> [UInt8] {
        var tables = ProfileTables(profile)
        var dictionary = ProtobufWriter()
        // Entry 0 of every table is its zero value.
        for field in [Field.Dictionary.mappings, Field.Dictionary.locations, Field.Dictionary.functions, Field.Dictionary.links,
                      Field.Dictionary.attributes, Field.Dictionary.stacks] {
            dictionary.message(field) { _ in }
        }
        // Attributes: entry 1 + 2·i is thread i's id, 2 + 2·i its name; then the build ids.
        let threadIDKey = tables.strings.index("thread.id"), threadNameKey = tables.strings.index("thread.name")
        for thread in profile.threads {
            dictionary.message(Field.Dictionary.attributes) {
                $0.int(Field.KeyValueAndUnit.key, threadIDKey)
                $0.message(Field.KeyValueAndUnit.value) { OTLPEncoding.write(.int(Int64(thread.id)), to: &$0) }
            }
            dictionary.message(Field.Dictionary.attributes) {
                $0.int(Field.KeyValueAndUnit.key, threadNameKey)
                $0.message(Field.KeyValueAndUnit.value) { OTLPEncoding.write(.string(thread.name), to: &$0) }
            }
        }
        var nextAttribute = 1 + 2 * profile.threads.count
        let buildIDKey = tables.strings.index("process.executable.build_id.gnu")
        for module in tables.modules {
            let filename = tables.strings.index(module.path)
            var buildIDAttribute: Int?
            if let buildID = module.buildID, !buildID.isEmpty {
                dictionary.message(Field.Dictionary.attributes) {
                    $0.int(Field.KeyValueAndUnit.key, buildIDKey)
                    $0.message(Field.KeyValueAndUnit.value) { OTLPEncoding.write(.string(buildID), to: &$0) }
                }
                buildIDAttribute = nextAttribute
                nextAttribute += 1
            }
            dictionary.message(Field.Dictionary.mappings) {
                $0.uint(Field.Mapping.start, UInt64(module.start))
                $0.uint(Field.Mapping.limit, UInt64(module.end))
                $0.uint(Field.Mapping.offset, UInt64(module.fileOffset))
                $0.int(Field.Mapping.filename, filename)
                $0.packed(Field.Mapping.attributes, buildIDAttribute.map { [UInt64($0)] } ?? [])
            }
        }
        for location in tables.locations {
            dictionary.message(Field.Dictionary.locations) {
                $0.uint(Field.Location.mapping, location.module.map { UInt64($0 + 1) } ?? 0)
                $0.uint(Field.Location.address, UInt64(location.address))
                for line in location.lines {
                    $0.message(Field.Location.lines) {
                        $0.uint(Field.Line.function, UInt64(line.function + 1))
                        $0.uint(Field.Line.line, line.line)
                    }
                }
            }
        }
        for function in tables.functions {
            dictionary.message(Field.Dictionary.functions) {
                $0.int(Field.Function.name, function.name)
                $0.int(Field.Function.systemName, function.name)
                $0.int(Field.Function.filename, function.file)
            }
        }
        for sample in tables.samples {
            dictionary.message(Field.Dictionary.stacks) { $0.packed(Field.Stack.locations, sample.locations.map { UInt64($0 + 1) }) }
        }

        let period = profile.configuration?.sampleWeight
        let timeType = profile.configuration?.sampleType ?? "cpu", unit = profile.configuration?.sampleUnit ?? "nanoseconds"
        var sampleTypes: [(type: Int64, unit: Int64, weight: UInt64)] = [(tables.strings.index("samples"), tables.strings.index("count"), 1)]
        if let period { sampleTypes.append((tables.strings.index(timeType), tables.strings.index(unit), period)) }
        let periodType = (tables.strings.index(timeType), tables.strings.index(unit))
        for string in tables.strings.strings { dictionary.string(Field.Dictionary.strings, string) }

        var request = ProtobufWriter()
        request.message(Field.Request.resourceProfiles) {
            $0.message(Field.ResourceProfiles.resource) { OTLPEncoding.write(resource, to: &$0) }
            $0.message(Field.ResourceProfiles.scopeProfiles) { scope in
                scope.message(Field.ScopeProfiles.scope) { OTLPEncoding.writeScope(to: &$0) }
                for (index, sampleType) in sampleTypes.enumerated() {
                    scope.message(Field.ScopeProfiles.profiles) {
                        $0.message(Field.Profile.sampleType) {
                            $0.int(Field.ValueType.type, sampleType.type)
                            $0.int(Field.ValueType.unit, sampleType.unit)
                        }
                        for (stack, sample) in tables.samples.enumerated() {
                            $0.message(Field.Profile.samples) {
                                $0.int(Field.Sample.stack, Int64(stack + 1))
                                if profile.threads.indices.contains(sample.thread) {
                                    $0.packed(Field.Sample.attributes, [UInt64(1 + 2 * sample.thread), UInt64(2 + 2 * sample.thread)])
                                }
                                $0.packed(Field.Sample.values, [UInt64(sample.count) * sampleType.weight])
                            }
                        }
                        $0.fixed64(Field.Profile.timeUnixNano, profile.realtimeStartNanoseconds)
                        $0.uint(Field.Profile.durationNano, profile.durationNanoseconds)
                        if let period {
                            $0.message(Field.Profile.periodType) {
                                $0.int(Field.ValueType.type, periodType.0)
                                $0.int(Field.ValueType.unit, periodType.1)
                            }
                            $0.int(Field.Profile.period, Int64(period))
                        }
                        $0.byteString(Field.Profile.profileID, OTLPEncoding.identifier(
                            session: session, value: profile.realtimeStartNanoseconds &* 2 &+ UInt64(index)))
                    }
                }
            }
        }
        request.message(Field.Request.dictionary, encoded: dictionary)
        return request.bytes
    }
}
