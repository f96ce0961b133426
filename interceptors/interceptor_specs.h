#pragma once
// Flume's interceptors, each a spec of kind interceptor (agent/api/interceptor.h), registered by
// this folder's CMakeLists.txt.

#include "agent/api/component_spec.h"

namespace sluice::interceptors {

// header_interceptors.cc: the ones that set one header.
extern const ComponentSpec kTimestampInterceptorSpec;
extern const ComponentSpec kHostInterceptorSpec;
extern const ComponentSpec kStaticInterceptorSpec;
extern const ComponentSpec kUuidInterceptorSpec;
// regex_interceptors.cc: the ones with a regular expression.
extern const ComponentSpec kRemoveHeaderInterceptorSpec;
extern const ComponentSpec kSearchReplaceInterceptorSpec;
extern const ComponentSpec kRegexFilterInterceptorSpec;
extern const ComponentSpec kRegexExtractorInterceptorSpec;

}  // namespace sluice::interceptors
